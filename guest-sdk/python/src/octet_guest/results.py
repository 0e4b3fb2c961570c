"""What handlers return, normalized into the wire's result JSON exactly as
the process-based SDK does it: the same defaults, the same conversions (a
plain value becomes text with ``str``), the same checks and the same -32603
texts. :mod:`octet_guest.witvalues` then carries the JSON across the WIT
boundary.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Optional

from . import hooks_v04
from .protocol import RpcError
from .values import MAX_POST_MUTATION_RESOURCES, MAX_TOOL_CONTENT_PARTS, text_content

_TOOL_RESULT_FIELDS = {"content", "is_error", "metadata", "structured_content"}


def _fields(names: Any) -> list:
    return sorted(map(str, names))


def tool_v01(value: Any) -> dict:
    """An API 0.1 result: ``content`` always a string."""
    if isinstance(value, Mapping):
        content = value.get("content", "")
        return {
            "content": content if isinstance(content, str) else str(content),
            "is_error": bool(value.get("is_error", False)),
            "metadata": value.get("metadata", {}),
        }
    return {"content": "" if value is None else str(value), "is_error": False, "metadata": {}}


def tool_v02(value: Any, *, output_schema: bool, artifacts: bool) -> dict:
    """An API 0.2 result, checked like the SDK checks it."""
    if not isinstance(value, Mapping):
        value = {"content": [] if value is None else [text_content(value)]}
    unknown = set(value) - _TOOL_RESULT_FIELDS
    if unknown:
        raise RpcError(-32603, f"unknown API 0.2 tool result fields: {_fields(unknown)}")
    content = value.get("content", [])
    if isinstance(content, str):
        content = [text_content(content)]
    if not isinstance(content, list):
        raise RpcError(-32603, "API 0.2 tool content must be an array")
    if not content:
        raise RpcError(-32603, "API 0.2 tool content must not be empty")
    if len(content) > MAX_TOOL_CONTENT_PARTS:
        raise RpcError(-32603, f"API 0.2 tool content exceeds {MAX_TOOL_CONTENT_PARTS} parts")
    parts = [_content_part(part) for part in content]
    if not any(part["type"] == "text" for part in parts):
        raise RpcError(-32603, "API 0.2 tool content requires an explicit text part")
    if any(part["type"] in {"image", "audio"} for part in parts) and not artifacts:
        raise RpcError(-32603, "media tool content requires artifacts negotiation")
    is_error = value.get("is_error", False)
    if not isinstance(is_error, bool):
        raise RpcError(-32603, "tool is_error must be a boolean")
    metadata = value.get("metadata", {})
    if metadata is not None and not isinstance(metadata, Mapping):
        raise RpcError(-32603, "tool metadata must be an object or null")
    structured = "structured_content" in value
    if not output_schema and structured:
        raise RpcError(-32603, "structured_content requires a declared output_schema")
    if output_schema and not structured and not is_error:
        raise RpcError(-32603, "tool declared output_schema but omitted structured_content")
    result: dict = {
        "content": parts,
        "is_error": is_error,
        "metadata": None if metadata is None else dict(metadata),
    }
    if structured:
        result["structured_content"] = value["structured_content"]
    return result


def _content_part(part: Any) -> dict:
    if not isinstance(part, Mapping):
        raise RpcError(-32603, "tool content parts must be objects")
    result = dict(part)
    kind = result.get("type")
    if kind == "text":
        allowed = {"type", "text"}
        if not isinstance(result.get("text"), str):
            raise RpcError(-32603, "text content requires a string text field")
    elif kind in {"image", "audio"}:
        annotation = "alt" if kind == "image" else "transcript"
        allowed = {"type", "artifact_id", "mime_type", annotation}
        if not isinstance(result.get("artifact_id"), str) or not result["artifact_id"]:
            raise RpcError(-32603, f"{kind} content requires artifact_id")
        if not isinstance(result.get("mime_type"), str) or "/" not in result["mime_type"]:
            raise RpcError(-32603, f"{kind} content requires mime_type")
        if annotation in result and not isinstance(result[annotation], str):
            raise RpcError(-32603, f"{kind} content {annotation} must be a string")
    else:
        raise RpcError(-32603, f"unknown tool content type: {kind}")
    unknown = set(result) - allowed
    if unknown:
        raise RpcError(-32603, f"unknown {kind} content fields: {_fields(unknown)}")
    return result


def tool_failure(api: str, error: BaseException, *, output_schema: bool) -> dict:
    """The result for a tool handler that raised: the model reads the
    exception's text."""
    if api != "0.1":
        failed = {"content": [text_content(str(error))], "is_error": True, "metadata": {}}
        return tool_v02(failed, output_schema=output_schema, artifacts=False)
    return {"content": str(error), "is_error": True, "metadata": {}}


def command(value: Any) -> dict:
    if value is None:
        return {"text": "", "notifications": [], "context": []}
    if isinstance(value, Mapping):
        text = value.get("text", "")
        return {
            "text": text if isinstance(text, str) else str(text),
            "notifications": value.get("notifications", []),
            "context": value.get("context", []),
        }
    return {"text": str(value), "notifications": [], "context": []}


def default_hook() -> dict:
    return {"disposition": {"action": "continue"}, "context": [], "notifications": []}


def hook(name: str, value: Any) -> dict:
    if value is None:
        return default_hook()
    if not isinstance(value, Mapping):
        raise RpcError(-32603, "hook handler must return an object")
    result: dict = {
        "disposition": value.get("disposition", {"action": "continue"}),
        "context": value.get("context", []),
        "notifications": value.get("notifications", []),
    }
    if name == "provider_retry" and "provider_retry" in value:
        result["provider_retry"] = _provider_retry(value["provider_retry"])
    elif name == "before_persistence" and "persistence_metadata" in value:
        result["persistence_metadata"] = _persistence(value["persistence_metadata"])
    elif name == "post_mutation" and "post_mutation" in value:
        result["post_mutation"] = _post_mutation(value["post_mutation"])
    else:
        # API 0.4: each hook's own member, checked against octet's bounds.
        result.update(hooks_v04.extra(name, value))
    return result


def _provider_retry(value: Any) -> Any:
    if isinstance(value, str) and value in {"retry", "stop"}:
        return value
    if not isinstance(value, Mapping) or set(value) != {"delay"}:
        raise RpcError(-32603, "invalid provider_retry advice")
    delay = value["delay"]
    if (
        not isinstance(delay, Mapping)
        or set(delay) != {"additional_delay_ms"}
        or not isinstance(delay["additional_delay_ms"], int)
        or isinstance(delay["additional_delay_ms"], bool)
        or not 0 <= delay["additional_delay_ms"] <= (2**64) - 1
    ):
        raise RpcError(-32603, "invalid provider_retry delay")
    return {"delay": {"additional_delay_ms": delay["additional_delay_ms"]}}


def _persistence(value: Any) -> dict:
    if not isinstance(value, Mapping) or set(value) - {"public", "value"} or "value" not in value:
        raise RpcError(-32603, "invalid persistence_metadata proposal")
    public = value.get("public", False)
    if not isinstance(public, bool):
        raise RpcError(-32603, "persistence_metadata public must be a boolean")
    try:
        json.dumps(value["value"], ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise RpcError(-32603, "persistence_metadata value must be JSON") from error
    return {"public": public, "value": value["value"]}


def _post_mutation(value: Any) -> dict:
    if not isinstance(value, Mapping):
        raise RpcError(-32603, "invalid post_mutation disposition")
    action = value.get("action")
    if action == "no_rescan" and set(value) == {"action"}:
        return {"action": "no_rescan"}
    ids = value.get("resource_ids")
    if (
        action != "request_rescan"
        or set(value) != {"action", "resource_ids"}
        or not isinstance(ids, list)
        or not ids
        or len(ids) > MAX_POST_MUTATION_RESOURCES
        or not all(isinstance(resource, str) and resource for resource in ids)
    ):
        raise RpcError(-32603, "invalid post_mutation rescan request")
    return {"action": "request_rescan", "resource_ids": list(ids)}


def context(value: Any) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RpcError(-32603, "context handler must return an array")
    return value


def status(value: Any) -> Optional[dict]:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise RpcError(-32603, "status handler must return an object or null")
    result: dict = {
        "surface": value.get("surface", "status"),
        "text": value.get("text", ""),
        "priority": value.get("priority", 0),
    }
    if "style_role" in value:
        result["style_role"] = value["style_role"]
    return result


def render(value: Any) -> dict:
    if value is None:
        return {"segments": []}
    if isinstance(value, Mapping):
        segments = value.get("segments", [])
    else:
        segments = [{"text": str(value), "style_role": None}]
    if not isinstance(segments, list):
        raise RpcError(-32603, "renderer must return a segments array")
    return {"segments": segments}
