"""Names octet_guest 0.1 exported that 0.2 replaced, kept working so an app
written against 0.1 still builds: each warns once, naming what replaces it
(``renamed``). ``build.py`` prints the warnings from its scan of the app's
source, where the author sees them; the aliases print the same line when
the app runs natively (the SDK's tests). They go in 1.0 (README, "Versions
and compatibility").

``from octet_guest import InvalidParams`` reaches :func:`lookup` through
the package's ``__getattr__``; nothing here is loaded by an app that uses
only current names.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Optional, Tuple

from . import renamed, values
from .cancellation import CancellationToken, current_cancellation
from .errors import CancelledError
from .protocol import RpcError

_WARNED: set = set()


def warn(old: str) -> None:
    """One line on stderr, once per name and process (``build.py`` prints
    the same line from its source scan; see ``renamed``)."""
    if old in _WARNED:
        return
    _WARNED.add(old)
    print(f"octet_guest: warning: {renamed.warning(old)}", file=sys.stderr, flush=True)


def _ext() -> Any:
    from .extension import served_extension

    return served_extension()


class InvalidParams(RpcError):
    """0.1's -32602 error: ``RpcError(-32602, message)``."""

    def __init__(self, message: str = "invalid params", data: Any = None) -> None:
        super().__init__(-32602, str(message), data)


class ExtensionError(Exception):
    """0.1's base of the SDK errors; raised, a tool call answers it as an
    ``is_error`` result (any exception does that now)."""


class ToolError(ExtensionError):
    """0.1's failed tool call: any exception is an ``is_error`` result."""


# --- host calls: the served Extension's methods -----------------------------


def log(level: str, message: str, **fields: Any) -> None:
    logger = _ext().log
    getattr(logger, str(level).lower() if str(level).lower() in
            ("debug", "info", "warning", "error") else "info")(str(message), **fields)


def notify(*args: Any, level: Optional[str] = None, message: Optional[str] = None,
           title: Optional[str] = None) -> None:
    if len(args) == 2:
        level, message = args
    elif len(args) == 1:
        message = args[0]
    elif args:
        raise TypeError("notify takes at most two positional arguments (level, message)")
    if message is None:
        raise TypeError("notify needs a message")
    _ext().notify(str(message), level=level or "info", title=title)


def confirm(prompt: str, detail: Optional[str] = None, *, destructive: bool = False,
            default: bool = False) -> bool:
    return _ext().confirm(prompt, detail=detail, destructive=destructive, default=default)


def request_input(prompt: str, secret: bool = False) -> Optional[str]:
    return _ext().request_input(prompt, secret=secret)


def progress(message: Optional[str] = None, current: Optional[int] = None,
             total: Optional[int] = None, unit: Optional[str] = None, *,
             output: Any = None, stream: str = "stdout",
             label: Optional[str] = None, detail: Optional[str] = None) -> None:
    ext = _ext()
    if output is not None:
        ext.progress({"type": "output", "stream": stream, "data": output})
    elif label is not None:
        ext.progress_decoration(label, detail)
    else:
        if message is None:
            raise TypeError("progress needs a message, output or label")
        ext.progress(message=message, current=current, total=total, unit=unit)


def contribute_context(item: Any) -> None:
    _ext().contribute_context(item)


def contribute_status(item: Any, surface: str = "status") -> None:
    if isinstance(item, str):
        item = {"text": item}
    _ext().contribute_status({"surface": surface, **item})


def sleep(seconds: float) -> bool:
    token = current_cancellation()
    if token is None:
        from wit_world.imports import cancellation

        return bool(cancellation.sleep(max(0, int(round(float(seconds) * 1000)))))
    return token.wait(seconds)


# --- services -----------------------------------------------------------------

MIME_TYPES = (
    "image/png", "image/jpeg", "image/gif", "image/webp", "audio/wav", "audio/mpeg",
    "audio/flac", "audio/opus", "audio/aac", "audio/mp4",
)

AGENT_TOOLS = ("read", "search", "edit", "write", "bash")


def publish_artifact(mime_type: str, data: Any) -> Any:
    return _ext().publish_artifact(mime_type=mime_type, data=data)


def tool_definition(name: str, description: Optional[str] = None,
                    parameters: Any = None, *, output_schema: Any = None) -> dict:
    definition: dict = {"name": str(name), "description": str(description or name),
                        "parameters": {"type": "object"} if parameters is None else parameters}
    if output_schema is not None:
        definition["output_schema"] = output_schema
    return definition


def register_tools(tools: Any, known: Any = None) -> Any:
    items = [tools] if isinstance(tools, (str, dict)) else list(tools)
    return _ext().register_tools([{"name": item} if isinstance(item, str) else item
                                  for item in items])


def unregister_tools(names: Any) -> Any:
    return _ext().unregister_tools(*([names] if isinstance(names, str) else list(names)))


def current_tools() -> Any:
    return _ext().tool_catalog_revision()


def get_secret(name: str) -> str:
    return _ext().get_secret(name)


def intent(kind: str, operation: str, target: Any = None, *, data_classes: Any = (),
           read_only: Optional[bool] = None, destructive: Optional[bool] = None) -> dict:
    value: dict = {"kind": kind, "operation": operation,
                   "target": {} if target is None else target,
                   "data_classes": list(data_classes)}
    if read_only is not None:
        value["read_only"] = read_only
    if destructive is not None:
        value["destructive"] = destructive
    return value


def evaluate_policy(intent_value: Any, token: Optional[str] = None) -> Any:
    return _ext().evaluate_policy(intent_value, approval_token=token)


def update_presentation(snapshot: Any, owner: Any = None) -> None:
    _ext().publish_presentation(snapshot, resource_owner=owner)


def hook_result(*, deny: Optional[str] = None, context: Any = None, notifications: Any = None,
                provider_retry: Any = None, persistence_metadata: Any = None,
                post_mutation: Any = None) -> dict:
    result: dict = {
        "disposition": ({"action": "continue"} if deny is None
                        else {"action": "deny", "reason": deny}),
        "context": list(context or []),
        "notifications": list(notifications or []),
    }
    for key, extra in (("provider_retry", provider_retry),
                       ("persistence_metadata", persistence_metadata),
                       ("post_mutation", post_mutation)):
        if extra is not None:
            result[key] = extra
    return result


# --- agents -------------------------------------------------------------------


def spawn_agent(task_name: str, message: str, *, idempotency_key: str,
                tools: Any = ("read", "search"), max_output_bytes: int = 4096,
                max_concurrent_children: int = 1, **rest: Any) -> Any:
    return _ext().spawn_agent(task_name=task_name, message=message,
                              idempotency_key=idempotency_key, tools=list(tools),
                              max_depth=1, max_concurrent_children=max_concurrent_children,
                              max_output_bytes=max_output_bytes, **rest)


def message_agent(target: str, message: str) -> Any:
    return _ext().send_agent_message(target, message)


def follow_up_agent(target: str, message: str) -> Any:
    return _ext().follow_up_agent(target, message)


def list_agents() -> Any:
    return _ext().list_agents()


def wait_agents(timeout_ms: Optional[int] = None) -> Any:
    return _ext().wait_agents(**({} if timeout_ms is None else {"timeout_ms": timeout_ms}))


def interrupt_agent(target: str) -> Any:
    return _ext().interrupt_agent(target)


def list_models(query: Optional[str] = None, limit: Optional[int] = None) -> Any:
    return _ext().list_agent_models(query=query, **({} if limit is None else {"limit": limit}))


#: Every 0.1 name and what it is now (renamed.NAMES has its replacement).
VALUES: Dict[str, Callable[[], Any]] = {
    "InvalidParams": lambda: InvalidParams,
    "ToolError": lambda: ToolError,
    "ExtensionError": lambda: ExtensionError,
    "HostError": lambda: RpcError,
    "JsonRpcError": lambda: RpcError,
    "Cancelled": lambda: CancelledError,
    "ExtensionCancelled": lambda: CancelledError,
    "Cancellation": lambda: CancellationToken,
    "AttrDict": lambda: values.AttrDict,
    "Context": lambda: values.AttrDict,
    "CatalogUpdate": lambda: values.AttrDict,
    "Verdict": lambda: values.AttrDict,
    "MIME_TYPES": lambda: MIME_TYPES,
    "AGENT_TOOLS": lambda: AGENT_TOOLS,
    "log": lambda: log,
    "notify": lambda: notify,
    "confirm": lambda: confirm,
    "request_input": lambda: request_input,
    "progress": lambda: progress,
    "contribute_context": lambda: contribute_context,
    "contribute_status": lambda: contribute_status,
    "sleep": lambda: sleep,
    "publish_artifact": lambda: publish_artifact,
    "tool_definition": lambda: tool_definition,
    "register_tools": lambda: register_tools,
    "unregister_tools": lambda: unregister_tools,
    "current_tools": lambda: current_tools,
    "get_secret": lambda: get_secret,
    "intent": lambda: intent,
    "evaluate_policy": lambda: evaluate_policy,
    "update_presentation": lambda: update_presentation,
    "hook_result": lambda: hook_result,
    "spawn_agent": lambda: spawn_agent,
    "message_agent": lambda: message_agent,
    "follow_up_agent": lambda: follow_up_agent,
    "list_agents": lambda: list_agents,
    "wait_agents": lambda: wait_agents,
    "interrupt_agent": lambda: interrupt_agent,
    "list_models": lambda: list_models,
}
NAMES: Dict[str, Tuple[Callable[[], Any], str]] = {
    name: (value, renamed.NAMES[name]) for name, value in VALUES.items()
}


def lookup(name: str) -> Any:
    """The 0.1 name ``name``, warning once (a name of ``NAMES`` only)."""
    value, _ = NAMES[name]
    warn(f"octet_guest.{name}")
    return value()
