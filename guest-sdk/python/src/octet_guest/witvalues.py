"""Result JSON (as :mod:`octet_guest.results` normalized it) carried across
the WIT boundary, and what the shim hands over turned back into the JSON a
process-based extension receives.

The process-based SDK passes command, hook, context, status and renderer
values through to the host, which decodes them strictly. Here they become
typed WIT records, so a value the host would refuse is refused now, as
-32603 ``invalid handler result: ...`` naming what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, List, Optional

from wit_world.imports import types as wit

from . import wit_version
from .protocol import RpcError
from .values import AttrDict, parse_json


def invalid(message: str) -> RpcError:
    return RpcError(-32603, f"invalid handler result: {message}")


def _json(value: Any, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as error:
        raise invalid(f"{what} is not JSON: {error}") from None


def _string(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise invalid(f"{what} must be a string")
    return value


def _optional_string(value: Any, what: str) -> Optional[str]:
    return None if value is None else _string(value, what)


def _object(value: Any, what: str, allowed: set) -> Mapping:
    if not isinstance(value, Mapping):
        raise invalid(f"{what} must be an object")
    unknown = sorted(map(str, set(value) - allowed))
    if unknown:
        raise invalid(f"{what} has unknown fields {unknown}")
    return value


def _list(value: Any, what: str) -> list:
    if not isinstance(value, list):
        raise invalid(f"{what} must be an array")
    return value


def _enum(enum: Any, name: Any, what: str) -> Any:
    member = getattr(enum, name.upper(), None) if isinstance(name, str) else None
    if member is None:
        choices = ", ".join(m.name.lower() for m in enum)
        raise invalid(f"{what} must be one of {choices}, not {name!r}")
    return member


# --- results ---------------------------------------------------------------


def tool(result: dict) -> wit.ToolResult:
    """A normalized tool result (0.1: ``content`` a string; 0.2: parts)."""
    content = result["content"]
    if isinstance(content, str):
        parts: List[Any] = [wit.ContentPart_Text(content)]
    else:
        parts = [_part(part) for part in content]
    metadata = result.get("metadata")
    structured = None
    if "structured_content" in result:
        structured = _json(result["structured_content"], "structured_content")
    return wit.ToolResult(
        parts,
        structured,
        result["is_error"],
        _json(metadata, "metadata") if isinstance(metadata, Mapping) else None,
    )


def _part(part: dict) -> Any:
    kind = part["type"]
    if kind == "text":
        return wit.ContentPart_Text(part["text"])
    if kind == "image":
        return wit.ContentPart_Image(wit.ImagePart(part["artifact_id"], part["mime_type"],
                                                   part.get("alt")))
    return wit.ContentPart_Audio(wit.AudioPart(part["artifact_id"], part["mime_type"],
                                               part.get("transcript")))


def notification(value: Any, what: str = "notification") -> wit.Notification:
    value = _object(value, what, {"level", "title", "message"})
    return wit.Notification(
        _enum(wit.NotifyLevel, value.get("level", "info"), f"{what} level"),
        _optional_string(value.get("title"), f"{what} title"),
        _string(value.get("message"), f"{what} message"),
    )


def context_item(value: Any, what: str = "context item") -> wit.ContextItem:
    value = _object(value, what, {"label", "content", "placement"})
    return wit.ContextItem(
        _string(value.get("label"), f"{what} label"),
        _string(value.get("content"), f"{what} content"),
        _enum(wit.Placement, value.get("placement", "prompt_suffix"), f"{what} placement"),
    )


def context_items(items: list) -> List[wit.ContextItem]:
    return [context_item(item) for item in _list(items, "context")]


def command(result: dict) -> wit.CommandResult:
    return wit.CommandResult(
        _string(result["text"], "command text"),
        [notification(n) for n in _list(result["notifications"], "notifications")],
        context_items(result["context"]),
    )


def _disposition(value: Any) -> Any:
    value = _object(value, "disposition", {"action", "reason"})
    action = value.get("action")
    if action == "continue":
        return wit.Disposition_Continue()
    if action == "deny":
        return wit.Disposition_Deny(_string(value.get("reason", ""), "disposition reason"))
    raise invalid(f"disposition action must be continue or deny, not {action!r}")


def hook(result: dict) -> wit.HookResult:
    retry = result.get("provider_retry")
    if retry == "retry":
        retry = wit.RetryDecision_Retry()
    elif retry == "stop":
        retry = wit.RetryDecision_Stop()
    elif retry is not None:
        retry = wit.RetryDecision_Delay(retry["delay"]["additional_delay_ms"])
    persistence = result.get("persistence_metadata")
    if persistence is not None:
        persistence = wit.PersistenceMetadata(_json(persistence["value"], "value"),
                                              persistence["public"])
    rescan = result.get("post_mutation")
    if rescan is not None:
        rescan = (
            wit.RescanDecision_NoRescan()
            if rescan["action"] == "no_rescan"
            else wit.RescanDecision_RequestRescan(list(rescan["resource_ids"]))
        )
    fields = [
        _disposition(result["disposition"]),
        context_items(result["context"]),
        [notification(n) for n in _list(result["notifications"], "notifications")],
        retry,
        persistence,
        rescan,
    ]
    if wit_version.V0_4:
        fields += _hook_extras_v04(result)
    return wit.HookResult(*fields)


def _hook_extras_v04(result: dict) -> list:
    """The 0.4.0 record's members, from :func:`hooks_v04.extra`'s checked
    values (absent: no opinion, no frames, no change)."""
    action = result.get("cache_warming_decision")
    return [
        None if action is None else _enum(wit.CacheWarmingAction, action,
                                          "cache_warming_decision"),
        list(result.get("compaction_frames", [])),
        result.get("provider_payload"),
        [wit.HeaderEdit(name, values) for name, values in result.get("provider_headers", [])],
    ]


def status(result: Optional[dict]) -> Optional[wit.StatusItem]:
    if result is None:
        return None
    priority = result["priority"]
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise invalid("status priority must be an integer")
    return wit.StatusItem(
        _string(result["surface"], "status surface"),
        _string(result["text"], "status text"),
        _optional_string(result.get("style_role"), "status style_role"),
        priority,
    )


def segments(result: dict) -> List[wit.Segment]:
    out = []
    for segment in result["segments"]:
        segment = _object(segment, "segment", {"text", "style_role"})
        out.append(wit.Segment(_string(segment.get("text"), "segment text"),
                               _optional_string(segment.get("style_role"), "segment style_role")))
    return out


# --- what the host sends ---------------------------------------------------


def call_context(cx: wit.CallContext) -> AttrDict:
    """The request's ``context`` object as the host sends it: ``workspace``,
    ``execution_scope``, ``resource_owner`` (API 0.2, only when present)
    and ``host``."""
    context = AttrDict(workspace=cx.workspace, execution_scope=cx.execution_scope)
    owner = cx.resource_owner
    if owner is not None:
        context["resource_owner"] = AttrDict(
            session_id=owner.session_id,
            extension_instance_id=owner.extension_instance_id,
            process_generation=owner.process_generation,
        )
    context["host"] = parse_json(cx.host, default={})
    return context


_EVENT_FIELDS = ("session_id", "run_id", "turn_id", "tool_call_id", "tool_name", "outcome",
                 "duration_ms", "reason")


def lifecycle_params(event: wit.LifecycleEvent) -> AttrDict:
    """A lifecycle notification's params; absent fields are left out."""
    params = AttrDict()
    for key in _EVENT_FIELDS:
        value = getattr(event, key)
        if value is not None:
            params[key] = value
    return params
