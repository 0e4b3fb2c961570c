"""Child agent sessions (API 0.2, feature ``agent_sessions``; model
selection and :func:`list_models` also need ``agent_model_selection_v1``):
see :meth:`~octet_guest.Extension.uses_agents`.

Each function calls the matching import of the WIT ``agents`` interface,
only while serving a tool call or a command: the host derives the owner from
that request, and the children belong to this extension and that owner's
session. The shim checks the features, the parent and every bound before
anything is written (a refusal raises :class:`~octet_guest.InvalidParams`
naming the bound, or :class:`~octet_guest.RpcError` -32601 for a missing
feature); the host's own refusals arrive as :class:`~octet_guest.RpcError`
with its code (-32002 limits, idempotency conflicts, unknown targets;
-32000 busy; -32800 the parent settled).

Results are dicts whose keys read as attributes; the host's JSON extras
(``details``, ``previous_status``, ``persistence_error``) are parsed.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

from .errors import RpcError
from .host import _call as _host_call

try:
    from wit_world.imports import agents as wit_agents
except ImportError:  # built against a WIT package without `agents`
    wit_agents = None  # type: ignore[assignment]
from .values import AttrDict

#: The tools a child may be granted.
AGENT_TOOLS = ("read", "search", "edit", "write", "bash")


def _imports() -> Any:
    if wit_agents is None:
        raise RpcError(-32601, "agents: the component's WIT has no `agents` interface")
    return wit_agents


def _call(name: str, *args: Any) -> Any:
    return _host_call(getattr(_imports(), name), *args)


def _parse(text: Optional[str]) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _status(status: Any) -> AttrDict:
    out = AttrDict(state=status.state)
    if status.output is not None:
        out["output"] = status.output
    if status.error is not None:
        out["error"] = status.error
    return out


def _tool(name: Any) -> Any:
    if isinstance(name, wit_agents.AgentTool):
        return name
    member = getattr(wit_agents.AgentTool, str(name).upper(), None)
    if member is None:
        raise ValueError(f"unknown agent tool {name!r} (known: {', '.join(AGENT_TOOLS)})")
    return member


def _snapshot(snapshot: Any) -> AttrDict:
    return AttrDict(
        principal=snapshot.principal,
        resource_owner=snapshot.resource_owner,
        persistence_error=_parse(snapshot.persistence_error),
        agents=[
            AttrDict(
                agent_id=record.agent_id,
                agent_path=record.agent_path,
                status=_status(record.status),
                details=_parse(record.details),
            )
            for record in snapshot.agents
        ],
    )


def spawn_agent(task_name: str, message: str, *, idempotency_key: str,
                tools: Iterable[str] = ("read", "search"), max_output_bytes: int = 4096,
                max_concurrent_children: int = 1, max_turns: Optional[int] = None,
                max_tokens: Optional[int] = None, max_cost_microdollars: Optional[int] = None,
                timeout_ms: Optional[int] = None, provider: Optional[str] = None,
                model: Optional[str] = None, reasoning: Optional[str] = None,
                profile: Optional[str] = None, fingerprint: Optional[str] = None) -> AttrDict:
    """Starts a child session on ``message`` and returns ``{agent_id,
    agent_path, status, details}``.

    ``task_name`` (and ``profile``) are 1..=48 characters of ``[a-z0-9_-]``;
    the same ``idempotency_key`` with identical input returns the original
    child. The policy: ``tools`` (granted, non-empty), at most
    ``max_concurrent_children`` (1..=8) active children counting this one,
    ``max_output_bytes`` (512..=16384) of returned summary; absent ceilings
    (``max_turns``, ``max_tokens``, ``max_cost_microdollars``,
    ``timeout_ms``) and model members (``provider``, ``model``,
    ``reasoning``; need ``agent_model_selection_v1``) inherit the
    parent's."""
    _imports()
    selection = None
    if provider is not None or model is not None or reasoning is not None:
        selection = wit_agents.ModelSelection(provider, model, reasoning)
    policy = wit_agents.SpawnPolicy(
        [_tool(tool) for tool in ([tools] if isinstance(tools, str) else tools)],
        int(max_concurrent_children),
        max_turns,
        max_tokens,
        max_cost_microdollars,
        int(max_output_bytes),
        timeout_ms,
        selection,
    )
    request = wit_agents.SpawnRequest(
        str(task_name), profile, fingerprint, str(message), str(idempotency_key), policy
    )
    spawned = _call("spawn", request)
    return AttrDict(
        agent_id=spawned.agent_id,
        agent_path=spawned.agent_path,
        status=_status(spawned.status),
        details=_parse(spawned.details),
    )


def message_agent(target: str, message: str) -> AttrDict:
    """Steers a running child (``target``: its ``agent_id`` or
    ``agent_path``); returns ``{delivered_to, delivery}`` (``"steering"`` or
    ``"queued"``)."""
    steered = _call("send", str(target), str(message))
    return AttrDict(delivered_to=steered.delivered_to, delivery=steered.delivery.name.lower())


def follow_up_agent(target: str, message: str) -> AttrDict:
    """Queues a follow-up on a running child, or resumes a settled one as a
    new run; returns ``{agent_id, agent_path, delivery}`` (``"follow_up"``
    or ``"new_run"``)."""
    followed = _call("follow_up", str(target), str(message))
    return AttrDict(
        agent_id=followed.agent_id,
        agent_path=followed.agent_path,
        delivery=followed.delivery.name.lower(),
    )


def list_agents() -> AttrDict:
    """The children of this extension and owner: ``{principal,
    resource_owner, persistence_error, agents: [{agent_id, agent_path,
    status, details}]}``."""
    return _snapshot(_call("list_agents"))


def wait_agents(timeout_ms: Optional[int] = None) -> AttrDict:
    """Waits until no child is pending or running, or ``timeout_ms``
    (1..=60000; default: the host's 30000) passed; returns ``{timed_out,
    snapshot}``."""
    waited = _call("wait", timeout_ms)
    return AttrDict(timed_out=waited.timed_out, snapshot=_snapshot(waited.snapshot))


def interrupt_agent(target: str) -> AttrDict:
    """Interrupts a child and its descendants; returns ``{agent_id,
    agent_path, previous_status, interrupt_requested}``."""
    interrupted = _call("interrupt", str(target))
    return AttrDict(
        agent_id=interrupted.agent_id,
        agent_path=interrupted.agent_path,
        previous_status=_parse(interrupted.previous_status),
        interrupt_requested=interrupted.interrupt_requested,
    )


def list_models(query: Optional[str] = None, limit: Optional[int] = None) -> AttrDict:
    """The models a child may select (needs ``agent_model_selection_v1``):
    ``{models: [{model, provider, display_name, reasoning, context_window,
    max_output_tokens}], truncated}``; ``query`` is a case-insensitive
    substring, ``limit`` 1..=100 (default 50)."""
    listed = _call("list_models", query, limit)
    return AttrDict(
        models=[
            AttrDict(
                model=info.model,
                provider=info.provider,
                display_name=info.display_name,
                reasoning=list(info.reasoning),
                context_window=info.context_window,
                max_output_tokens=info.max_output_tokens,
            )
            for info in listed.models
        ],
        truncated=listed.truncated,
    )


__all__ = [
    "AGENT_TOOLS",
    "follow_up_agent",
    "interrupt_agent",
    "list_agents",
    "list_models",
    "message_agent",
    "spawn_agent",
    "wait_agents",
]
