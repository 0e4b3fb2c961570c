"""The process-based SDK's child agent sessions (API 0.2, feature
``agent_sessions``; model selection also ``agent_model_selection_v1``) as
:class:`~octet_guest.Extension` methods.

Each validates its arguments like the SDK (same ``ValueError`` texts), then
calls the WIT ``agents`` import; the shim checks the features, the active
parent and every bound again and reads the host's reply. The returned dicts
are the host's results: ``spawn_agent`` returns the host's complete result,
the others are rebuilt from the fields the shim read (each agent record in
``agents`` is the host's complete record).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from wit_world.imports import agents as _agents_wit

from .hostcalls import call
from .values import MISSING

_TOOLS = ("read", "search", "edit", "write", "bash")


def _imports() -> Any:
    return _agents_wit


def _parse(text: Optional[str]) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _snapshot(snapshot: Any) -> dict:
    result: dict = {
        "agents": [_parse(record.details) for record in snapshot.agents],
        "principal": snapshot.principal,
        "resource_owner": snapshot.resource_owner,
    }
    if snapshot.persistence_error is not None:
        result["persistence_error"] = _parse(snapshot.persistence_error)
    return result


def _limit(name: str, value: Any, low: int, high: int, optional: bool) -> None:
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        prefix = "null or " if optional else ""
        raise ValueError(f"agent {name} must be {prefix}an integer between {low} and {high}")


def _text(value: Any, what: str, *, strip: bool = True) -> None:
    if not isinstance(value, str) or not (value.strip() if strip else value):
        raise ValueError(f"agent {what} must be non-empty")


class Agents:
    """Child agent sessions owned by the request being served."""

    def spawn_agent(self, *, task_name: str, message: str, idempotency_key: str,
                    tools: Sequence[str], max_depth: int, max_concurrent_children: int,
                    max_turns: Optional[int] = None, max_tokens: Optional[int] = None,
                    max_cost_microdollars: Optional[int] = None, max_output_bytes: int,
                    timeout_ms: Optional[int] = None, profile: Optional[str] = None,
                    fingerprint: Optional[str] = None,
                    model_selection: Optional[Mapping[str, Any]] = None,
                    parent_request_id: Any = MISSING) -> dict:
        """Create a host-bounded child owned by the active request; omitted
        ceilings inherit the parent session's limits."""
        _text(task_name, "task_name")
        if profile is not None and (
            not isinstance(profile, str) or not profile or len(profile) > 48 or any(
                not (c.isascii() and (c.islower() or c.isdigit())) and c not in {"_", "-"}
                for c in profile)
        ):
            raise ValueError("agent profile must be a bounded lowercase stable identifier")
        if fingerprint is not None and (
            not isinstance(fingerprint, str) or len(fingerprint) != 64
            or any(c not in "0123456789abcdef" for c in fingerprint)
        ):
            raise ValueError("agent fingerprint must be a lowercase SHA-256 digest")
        _text(message, "message", strip=False)
        _text(idempotency_key, "idempotency_key")
        if (
            isinstance(tools, (str, bytes, bytearray)) or not isinstance(tools, Sequence)
            or not tools or len(tools) > 5 or any(not isinstance(t, str) for t in tools)
            or len(set(tools)) != len(tools) or any(t not in _TOOLS for t in tools)
        ):
            raise ValueError(
                "agent tools must be a duplicate-free subset of read, search, edit, write, "
                "and bash"
            )
        _limit("max_depth", max_depth, 1, 1, False)
        _limit("max_concurrent_children", max_concurrent_children, 1, 8, False)
        _limit("max_output_bytes", max_output_bytes, 512, 16 * 1024, False)
        _limit("max_turns", max_turns, 1, 256, True)
        _limit("max_cost_microdollars", max_cost_microdollars, 1, 50_000_000, True)
        _limit("timeout_ms", timeout_ms, 5_000, 24 * 60 * 60 * 1_000, True)
        if max_tokens is not None and (
            not isinstance(max_tokens, int) or isinstance(max_tokens, bool)
            or not 1_000 <= max_tokens <= 64_000
        ):
            raise ValueError("agent max_tokens must be null or an integer between 1000 and 64000")
        self._require_feature("agent_sessions")
        agents = _imports()
        selection = None
        if model_selection is not None:
            if not isinstance(model_selection, Mapping) or set(model_selection) - {
                "provider", "model", "reasoning"
            }:
                raise ValueError(
                    "agent model_selection must be an object of provider, model and reasoning"
                )
            self._require_feature("agent_model_selection_v1")
            selection = agents.ModelSelection(model_selection.get("provider"),
                                              model_selection.get("model"),
                                              model_selection.get("reasoning"))
        self._resolve_parent(parent_request_id, required=True)
        policy = agents.SpawnPolicy(
            [getattr(agents.AgentTool, t.upper()) for t in tools], max_concurrent_children,
            max_turns, max_tokens, max_cost_microdollars, max_output_bytes, timeout_ms,
            selection,
        )
        request = agents.SpawnRequest(task_name, profile, fingerprint, message,
                                      idempotency_key, policy)
        spawned = call(agents.spawn, request)
        return dict(_parse(spawned.details))

    def send_agent_message(self, target: str, message: str, *,
                           parent_request_id: Any = MISSING) -> dict:
        """Steer one child session owned by this extension resource owner."""
        agents = self._agent_message(target, message, parent_request_id)
        steered = call(agents.send, target, message)
        return {"delivered_to": steered.delivered_to, "delivery": steered.delivery.name.lower()}

    def follow_up_agent(self, target: str, message: str, *,
                        parent_request_id: Any = MISSING) -> dict:
        """Queue a follow-up task on one owned child session."""
        agents = self._agent_message(target, message, parent_request_id)
        followed = call(agents.follow_up, target, message)
        return {"agent_id": followed.agent_id, "agent_path": followed.agent_path,
                "delivery": followed.delivery.name.lower()}

    def _agent_message(self, target: Any, message: Any, parent_request_id: Any) -> Any:
        _text(target, "target")
        _text(message, "message", strip=False)
        self._require_feature("agent_sessions")
        self._resolve_parent(parent_request_id, required=True)
        return _imports()

    def list_agents(self, *, parent_request_id: Any = MISSING) -> dict:
        """List only child-session trees owned by the active resource owner."""
        self._require_feature("agent_sessions")
        self._resolve_parent(parent_request_id, required=True)
        return _snapshot(call(_imports().list_agents))

    def wait_agents(self, *, timeout_ms: int = 30_000, parent_request_id: Any = MISSING) -> dict:
        """Wait up to 60 seconds for owned child-session state to settle."""
        if (
            not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool)
            or not 1 <= timeout_ms <= 60_000
        ):
            raise ValueError("agent timeout_ms must be between 1 and 60000")
        self._require_feature("agent_sessions")
        self._resolve_parent(parent_request_id, required=True)
        waited = call(_imports().wait, timeout_ms)
        return {"timed_out": waited.timed_out, "snapshot": _snapshot(waited.snapshot)}

    def interrupt_agent(self, target: str, *, parent_request_id: Any = MISSING) -> dict:
        """Interrupt an owned child-session tree."""
        _text(target, "target")
        self._require_feature("agent_sessions")
        self._resolve_parent(parent_request_id, required=True)
        interrupted = call(_imports().interrupt, target)
        return {
            "agent_id": interrupted.agent_id,
            "agent_path": interrupted.agent_path,
            "previous_status": _parse(interrupted.previous_status),
            "interrupt_requested": interrupted.interrupt_requested,
        }

    def list_agent_models(self, *, query: Optional[str] = None, limit: int = 50,
                          parent_request_id: Any = MISSING) -> dict:
        """The models a child may select (``agent_model_selection_v1``):
        ``{models: [...], truncated}``."""
        if query is not None and (not isinstance(query, str)
                                  or len(query.encode("utf-8")) > 128):
            raise ValueError("agent model query must be at most 128 UTF-8 bytes")
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
            raise ValueError("agent model limit must be between 1 and 100")
        self._require_feature("agent_sessions")
        self._require_feature("agent_model_selection_v1")
        self._resolve_parent(parent_request_id, required=True)
        listed = call(_imports().list_models, query, limit)
        models = []
        for info in listed.models:
            model: dict = {"model": info.model, "provider": info.provider}
            if info.display_name is not None:
                model["display_name"] = info.display_name
            model.update(reasoning=list(info.reasoning), context_window=info.context_window,
                         max_output_tokens=info.max_output_tokens)
            models.append(model)
        return {"models": models, "truncated": listed.truncated}
