"""Conversions between what handlers return (strings, dicts shaped like the
protocol's JSON, lists) and the WIT records the shim checks, plus the small
helpers that build those dicts.

The dict shapes are the wire's (protocol-core §4): a handler written for the
process-based Python SDK returns the same values here.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, List, Mapping, Optional

from wit_world.imports import types as wit


class AttrDict(dict):
    """A dict whose keys also read as attributes (``event.turn_id``)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class ResultError(Exception):
    """A handler returned a value the protocol cannot carry (answered -32603
    with this text, like the process-based SDK)."""


def to_json(value: Any) -> str:
    """Compact JSON text; key order is kept (the host keeps it too)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise ResultError(f"value is not JSON: {exc}") from None


def _take(value: Mapping[str, Any], what: str, allowed: Iterable[str]) -> None:
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ResultError(f"{what}: unknown keys {', '.join(unknown)}")


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ResultError(f"{what} must be an object, not {type(value).__name__}")
    return value


def _enum(enum: Any, name: Any, what: str) -> Any:
    if isinstance(name, enum):
        return name
    if isinstance(name, str):
        member = getattr(enum, name.upper().replace("-", "_").replace("/", "_"), None)
        if member is not None:
            return member
    choices = ", ".join(m.name.lower() for m in enum)
    raise ResultError(f"{what} must be one of {choices}, not {name!r}")


def _opt_str(value: Any, what: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise ResultError(f"{what} must be a string or null")


# --- content parts and tool results --------------------------------------


def text_content(text: str) -> dict:
    """A text content part: ``{"type": "text", "text": text}``."""
    return {"type": "text", "text": str(text)}


def image_content(artifact_id: str, mime_type: str, alt: Optional[str] = None) -> dict:
    """An image part referencing a published artifact (API 0.2, ``artifacts``)."""
    part = {"type": "image", "artifact_id": artifact_id, "mime_type": mime_type}
    if alt is not None:
        part["alt"] = alt
    return part


def audio_content(artifact_id: str, mime_type: str, transcript: Optional[str] = None) -> dict:
    """An audio part referencing a published artifact (API 0.2, ``artifacts``)."""
    part = {"type": "audio", "artifact_id": artifact_id, "mime_type": mime_type}
    if transcript is not None:
        part["transcript"] = transcript
    return part


_UNSET = object()


def tool_result(
    content: Any,
    *,
    is_error: bool = False,
    metadata: Any = None,
    structured_content: Any = _UNSET,
) -> dict:
    """A tool result: ``content`` is a string (one text part) or a list of
    parts (:func:`text_content`...). ``structured_content`` is sent only when
    given (required exactly when the tool declares an output schema);
    ``metadata`` is kept by the host and never shown to the model."""
    result = {
        "content": content,
        "is_error": bool(is_error),
        "metadata": {} if metadata is None else metadata,
    }
    if structured_content is not _UNSET:
        result["structured_content"] = structured_content
    return result


def _content_part(part: Any) -> Any:
    if isinstance(part, str):
        return wit.ContentPart_Text(part)
    if isinstance(part, (wit.ContentPart_Text, wit.ContentPart_Image, wit.ContentPart_Audio)):
        return part
    part = _mapping(part, "a content part")
    kind = part.get("type")
    if kind == "text":
        _take(part, "text part", ("type", "text"))
        if not isinstance(part.get("text"), str):
            raise ResultError("text part: text must be a string")
        return wit.ContentPart_Text(part["text"])
    if kind == "image":
        _take(part, "image part", ("type", "artifact_id", "mime_type", "alt"))
        return wit.ContentPart_Image(
            wit.ImagePart(
                str(part.get("artifact_id", "")),
                str(part.get("mime_type", "")),
                _opt_str(part.get("alt"), "image part: alt"),
            )
        )
    if kind == "audio":
        _take(part, "audio part", ("type", "artifact_id", "mime_type", "transcript"))
        return wit.ContentPart_Audio(
            wit.AudioPart(
                str(part.get("artifact_id", "")),
                str(part.get("mime_type", "")),
                _opt_str(part.get("transcript"), "audio part: transcript"),
            )
        )
    raise ResultError(f"unknown content part type {kind!r}")


def _content(content: Any) -> List[Any]:
    if isinstance(content, (list, tuple)):
        parts = [_content_part(part) for part in content]
    else:
        parts = [_content_part(content)]
    if not parts:
        raise ResultError("tool result content is empty")
    return parts


def to_tool_result(value: Any) -> wit.ToolResult:
    """What a tool handler returned, as the WIT result (protocol-services
    §3.5): a string is one text part, a dict with ``content`` is a result,
    a part or a list of parts is the content, any other scalar its ``str``."""
    if isinstance(value, wit.ToolResult):
        return value
    if value is None:
        raise ResultError("the tool returned no content")
    if isinstance(value, Mapping) and "content" in value:
        _take(value, "tool result", ("content", "is_error", "metadata", "structured_content"))
        is_error = value.get("is_error", False)
        if not isinstance(is_error, bool):
            raise ResultError("tool result: is_error must be a boolean")
        metadata = value.get("metadata")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ResultError("tool result: metadata must be an object")
        structured = (
            to_json(value["structured_content"]) if "structured_content" in value else None
        )
        return wit.ToolResult(
            _content(value["content"]),
            structured,
            is_error,
            None if metadata is None else to_json(metadata),
        )
    if isinstance(value, (str, Mapping, list, tuple)):
        return wit.ToolResult(_content(value), None, False, None)
    return wit.ToolResult([wit.ContentPart_Text(str(value))], None, False, None)


# --- notifications, context, status, segments ----------------------------


def to_notification(value: Any) -> wit.Notification:
    """``{"level", "message", "title"?}`` (level defaults to ``info``)."""
    if isinstance(value, wit.Notification):
        return value
    if isinstance(value, str):
        return wit.Notification(wit.NotifyLevel.INFO, None, value)
    value = _mapping(value, "a notification")
    _take(value, "notification", ("level", "title", "message"))
    return wit.Notification(
        _enum(wit.NotifyLevel, value.get("level", "info"), "notification level"),
        _opt_str(value.get("title"), "notification title"),
        str(value.get("message", "")),
    )


def to_context_item(value: Any) -> wit.ContextItem:
    """``{"label", "content", "placement"?}`` (placement defaults to
    ``prompt_suffix``)."""
    if isinstance(value, wit.ContextItem):
        return value
    value = _mapping(value, "a context item")
    _take(value, "context item", ("label", "content", "placement"))
    return wit.ContextItem(
        str(value.get("label", "")),
        str(value.get("content", "")),
        _enum(wit.Placement, value.get("placement", "prompt_suffix"), "placement"),
    )


def to_context_items(value: Any) -> List[wit.ContextItem]:
    """None → none; one item or a list of items."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [to_context_item(item) for item in value]
    return [to_context_item(value)]


def to_status(value: Any, surface: str) -> Optional[wit.StatusItem]:
    """None → nothing shown; a string is the text; a dict
    ``{"surface"?, "text", "style_role"?, "priority"?}`` (surface defaults to
    the requested one)."""
    if value is None or isinstance(value, wit.StatusItem):
        return value
    if isinstance(value, str):
        return wit.StatusItem(surface, value, None, 0)
    value = _mapping(value, "a status item")
    _take(value, "status item", ("surface", "text", "style_role", "priority"))
    priority = value.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise ResultError("status item: priority must be an integer")
    return wit.StatusItem(
        str(value.get("surface") or surface),
        str(value.get("text", "")),
        _opt_str(value.get("style_role"), "status item: style_role"),
        priority,
    )


def _segment(value: Any) -> wit.Segment:
    if isinstance(value, wit.Segment):
        return value
    if isinstance(value, str):
        return wit.Segment(value, None)
    value = _mapping(value, "a segment")
    _take(value, "segment", ("text", "style_role"))
    return wit.Segment(
        str(value.get("text", "")), _opt_str(value.get("style_role"), "segment: style_role")
    )


def to_segments(value: Any) -> List[wit.Segment]:
    """None → none; a string or ``{"text", "style_role"?}`` is one segment;
    a list of them, or ``{"segments": [...]}``."""
    if value is None:
        return []
    if isinstance(value, Mapping) and "segments" in value:
        _take(value, "rendering", ("segments",))
        value = value["segments"]
    if isinstance(value, (list, tuple)):
        return [_segment(item) for item in value]
    return [_segment(value)]


def to_command_result(value: Any) -> wit.CommandResult:
    """None → empty text; a string is the text; a dict
    ``{"text"?, "notifications"?, "context"?}``."""
    if isinstance(value, wit.CommandResult):
        return value
    if value is None:
        return wit.CommandResult("", [], [])
    if isinstance(value, str):
        return wit.CommandResult(value, [], [])
    value = _mapping(value, "a command result")
    _take(value, "command result", ("text", "notifications", "context"))
    return wit.CommandResult(
        str(value.get("text", "")),
        [to_notification(n) for n in value.get("notifications") or []],
        to_context_items(value.get("context")),
    )


# --- hooks ----------------------------------------------------------------


def hook_result(
    *,
    deny: Optional[str] = None,
    context: Any = None,
    notifications: Any = None,
    provider_retry: Any = None,
    persistence_metadata: Any = None,
    post_mutation: Any = None,
) -> dict:
    """A hook result in the wire's shape; ``deny`` blocks the prompt or tool
    call (honoured only for ``before_prompt`` and ``before_tool_call``)."""
    result: dict = {
        "disposition": (
            {"action": "continue"} if deny is None else {"action": "deny", "reason": deny}
        ),
        "context": list(context or []),
        "notifications": list(notifications or []),
    }
    for key, extra in (
        ("provider_retry", provider_retry),
        ("persistence_metadata", persistence_metadata),
        ("post_mutation", post_mutation),
    ):
        if extra is not None:
            result[key] = extra
    return result


def _disposition(value: Any) -> Any:
    if value is None:
        return wit.Disposition_Continue()
    if isinstance(value, str):
        value = {"action": value}
    value = _mapping(value, "a disposition")
    action = value.get("action", "continue")
    if action == "continue":
        return wit.Disposition_Continue()
    if action == "deny":
        return wit.Disposition_Deny(str(value.get("reason", "")))
    raise ResultError(f"unknown disposition action {action!r}")


def _retry(value: Any) -> Any:
    if value is None:
        return None
    if value == "retry":
        return wit.RetryDecision_Retry()
    if value == "stop":
        return wit.RetryDecision_Stop()
    value = _mapping(value, "provider_retry")
    delay = _mapping(value.get("delay"), "provider_retry.delay")
    return wit.RetryDecision_Delay(int(delay.get("additional_delay_ms", 0)))


def _persistence(value: Any) -> Any:
    if value is None:
        return None
    value = _mapping(value, "persistence_metadata")
    _take(value, "persistence_metadata", ("value", "public"))
    return wit.PersistenceMetadata(to_json(value.get("value")), bool(value.get("public", False)))


def _rescan(value: Any) -> Any:
    if value is None:
        return None
    value = _mapping(value, "post_mutation")
    action = value.get("action")
    if action == "no_rescan":
        return wit.RescanDecision_NoRescan()
    if action == "request_rescan":
        return wit.RescanDecision_RequestRescan([str(i) for i in value.get("resource_ids", [])])
    raise ResultError(f"unknown post_mutation action {action!r}")


def to_hook_result(value: Any) -> wit.HookResult:
    """None → continue; a dict in the wire's shape (see :func:`hook_result`)."""
    if isinstance(value, wit.HookResult):
        return value
    if value is None:
        value = {}
    value = _mapping(value, "a hook result")
    _take(
        value,
        "hook result",
        (
            "disposition",
            "context",
            "notifications",
            "provider_retry",
            "persistence_metadata",
            "post_mutation",
        ),
    )
    return wit.HookResult(
        _disposition(value.get("disposition")),
        to_context_items(value.get("context")),
        [to_notification(n) for n in value.get("notifications") or []],
        _retry(value.get("provider_retry")),
        _persistence(value.get("persistence_metadata")),
        _rescan(value.get("post_mutation")),
    )


# --- what the host sends --------------------------------------------------


class Context(AttrDict):
    """Where a request comes from, in the wire's shape: ``request_id``,
    ``workspace``, ``execution_scope``, ``resource_owner`` (a dict of
    ``session_id``, ``extension_instance_id``, ``process_generation``, or
    None on API 0.1) and ``host`` (session, model, skills). Keys read as
    attributes too."""

    __slots__ = ()

    @property
    def cancellation(self) -> Any:
        """The request's :class:`~octet_guest.Cancellation`."""
        from .cancellation import current_cancellation

        return current_cancellation()

    @property
    def cancelled(self) -> bool:
        """Whether the request has been cancelled."""
        return self.cancellation.cancelled


def from_call_context(cx: wit.CallContext) -> Context:
    owner = cx.resource_owner
    return Context(
        request_id=cx.request_id,
        workspace=cx.workspace,
        execution_scope=cx.execution_scope,
        resource_owner=None
        if owner is None
        else AttrDict(
            session_id=owner.session_id,
            extension_instance_id=owner.extension_instance_id,
            process_generation=owner.process_generation,
        ),
        host=parse_json(cx.host, default={}),
    )


def parse_json(text: Optional[str], default: Any = None) -> Any:
    if text is None or text == "":
        return default
    return json.loads(text)


LIFECYCLE_METHODS = {
    wit.LifecycleKind.SESSION_STARTED: "session/started",
    wit.LifecycleKind.SESSION_SETTLED: "session/settled",
    wit.LifecycleKind.TURN_STARTED: "turn/started",
    wit.LifecycleKind.TURN_SETTLED: "turn/settled",
    wit.LifecycleKind.TOOL_STARTED: "tool/started",
    wit.LifecycleKind.TOOL_SETTLED: "tool/settled",
}


def lifecycle_kind(method: Any) -> Any:
    """The kind for ``turn/settled``, ``turn_settled`` or a LifecycleKind."""
    if isinstance(method, wit.LifecycleKind):
        return method
    wanted = str(method).replace("_", "/")
    for kind, name in LIFECYCLE_METHODS.items():
        if name == wanted:
            return kind
    known = ", ".join(LIFECYCLE_METHODS.values())
    raise ValueError(f"unknown lifecycle event {method!r} (known: {known})")


def from_lifecycle_event(event: wit.LifecycleEvent) -> AttrDict:
    """The notification's params plus ``method``; absent fields are left out."""
    out = AttrDict(method=LIFECYCLE_METHODS[event.kind], session_id=event.session_id)
    for key in (
        "run_id",
        "turn_id",
        "tool_call_id",
        "tool_name",
        "outcome",
        "duration_ms",
        "reason",
    ):
        value = getattr(event, key)
        if value is not None:
            out[key] = value
    return out
