"""The process-based SDK's constants and value helpers: content parts,
tool results and the typed hook results. Each builds the wire's JSON shape
as a dict, exactly as the SDK does, so a handler returns the same values
here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

MISSING = object()

MAX_INPUT_PROMPT_BYTES = 16 * 1024
MAX_INPUT_VALUE_BYTES = 256 * 1024
MAX_SECRET_VALUE_BYTES = 64 * 1024
MAX_TOOL_CONTENT_PARTS = 256
MAX_DYNAMIC_TOOLS = 256
MAX_PRESENTATION_BYTES = 256 * 1024
MAX_PRESENTATION_ACTIVITIES = 128
MAX_PRESENTATION_NODES = 256
MAX_PRESENTATION_ACTIONS = 64
MAX_PRESENTATION_REVISION = (2**53) - 1
MAX_PROGRESS_DECORATION_LABEL_BYTES = 256
MAX_PROGRESS_DECORATION_DETAIL_BYTES = 4 * 1024
MAX_POST_MUTATION_RESOURCES = 32

#: Every feature the process-based SDK can negotiate. octet-wasm negotiates
#: all of them but `delegation_telemetry_v1`, which the shim does not
#: implement (see the README).
API_V02_FEATURES = (
    "request_cancellation",
    "request_progress",
    "progress_decoration",
    "content_parts",
    "artifacts",
    "lifecycle_events",
    "policy_intents",
    "dynamic_tools",
    "agent_sessions",
    "delegation_telemetry_v1",
    "approvals",
    "secrets",
)
#: Features `supported_features=` may also name: child-model selection
#: (`list_agent_models`, `spawn_agent(model_selection=...)`), opt-in.
EXTRA_FEATURES = ("agent_model_selection_v1",)
#: API 0.4's features octet-wasm implements, which `supported_features=`
#: may name (never negotiated on 0.1/0.2). The hook features are selected
#: by the shim for a manifest that declares their hook, and
#: `tool_prompt_metadata_v1` whenever a tool carries prompt metadata;
#: `tool_composition_v1` only when named (or `ext.uses_composition()`).
API_V04_FEATURES = (
    "tool_prompt_metadata_v1",
    "cache_warming_decision",
    "compaction_strategy",
    "pipeline_hooks_v1",
    "tool_composition_v1",
)
LIFECYCLE_METHODS = (
    "session/started",
    "session/settled",
    "turn/started",
    "turn/settled",
    "tool/started",
    "tool/settled",
)


def provider_retry_delay(additional_delay_ms: int) -> dict:
    """Build bounded-delay advice for a ``provider_retry`` hook result."""
    if (
        not isinstance(additional_delay_ms, int)
        or isinstance(additional_delay_ms, bool)
        or additional_delay_ms < 0
        or additional_delay_ms > (2**64) - 1
    ):
        raise ValueError("additional_delay_ms must be an unsigned 64-bit integer")
    return {"delay": {"additional_delay_ms": additional_delay_ms}}


def persistence_metadata(value: Any, *, public: bool = False) -> dict:
    """Build one ``before_persistence`` metadata proposal."""
    if not isinstance(public, bool):
        raise TypeError("public must be a boolean")
    try:
        json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        raise ValueError("metadata value must be JSON-serializable") from error
    return {"public": public, "value": value}


def post_mutation_rescan(resource_ids: Sequence[str]) -> dict:
    """Build a selected-resource ``post_mutation`` rescan disposition."""
    values = list(resource_ids)
    if not values or len(values) > MAX_POST_MUTATION_RESOURCES:
        raise ValueError("resource_ids must contain 1 through 32 values")
    if not all(isinstance(value, str) and value for value in values):
        raise ValueError("resource_ids must contain non-empty strings")
    return {"action": "request_rescan", "resource_ids": values}


def text_content(text: Any) -> dict:
    """Build a text content part for an API 0.2 tool result."""
    return {"type": "text", "text": str(text)}


def image_content(artifact_id: str, mime_type: str, *, alt: Optional[str] = None) -> dict:
    """Build an image content part backed by a host artifact."""
    part = _media_content("image", artifact_id, mime_type)
    if alt is not None:
        part["alt"] = str(alt)
    return part


def audio_content(artifact_id: str, mime_type: str, *,
                  transcript: Optional[str] = None) -> dict:
    """Build an audio content part backed by a host artifact."""
    part = _media_content("audio", artifact_id, mime_type)
    if transcript is not None:
        part["transcript"] = str(transcript)
    return part


def tool_result(*parts: Mapping[str, Any], structured_content: Any = MISSING,
                is_error: bool = False, metadata: Optional[Mapping[str, Any]] = None) -> dict:
    """Build an API 0.2 structured tool-result envelope."""
    result: dict = {
        "content": [dict(part) for part in parts],
        "is_error": bool(is_error),
        "metadata": dict(metadata) if metadata is not None else {},
    }
    if structured_content is not MISSING:
        result["structured_content"] = structured_content
    return result


def _media_content(kind: str, artifact_id: str, mime_type: str) -> dict:
    if not isinstance(artifact_id, str) or not artifact_id:
        raise ValueError("artifact_id must be non-empty")
    if not isinstance(mime_type, str) or "/" not in mime_type:
        raise ValueError("mime_type must be a media type")
    return {"type": kind, "artifact_id": artifact_id, "mime_type": mime_type}


class AttrDict(dict):
    """A dict whose keys also read as attributes (``event.turn_id``), for
    the values the SDK hands to handlers; it compares equal to the plain
    dict the process-based SDK would pass."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def to_json(value: Any) -> str:
    """Compact JSON text, key order kept (the shim keeps it too)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse_json(text: Optional[str], default: Any = None) -> Any:
    if text is None or text == "":
        return default
    return json.loads(text)


__all__ = [
    "API_V02_FEATURES",
    "LIFECYCLE_METHODS",
    "MAX_INPUT_PROMPT_BYTES",
    "MAX_INPUT_VALUE_BYTES",
    "MAX_POST_MUTATION_RESOURCES",
    "MAX_PROGRESS_DECORATION_DETAIL_BYTES",
    "MAX_PROGRESS_DECORATION_LABEL_BYTES",
    "MAX_SECRET_VALUE_BYTES",
    "audio_content",
    "image_content",
    "persistence_metadata",
    "post_mutation_rescan",
    "provider_retry_delay",
    "text_content",
    "tool_result",
]
