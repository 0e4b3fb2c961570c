"""The results of the API 0.4 hooks (docs/api-0.4.md#v04-hook-results):
cache-warming advice, compaction frames, and the provider pipeline's
payload and header changes, with the host's bounds.

Each member is checked twice with the same rules: by the helpers a handler
may call (:func:`cache_warming_decision`, :func:`compaction_frames`,
:func:`provider_payload`, :func:`provider_headers`), which raise
``ValueError`` at the line that built the bad value, and again when the
handler's result is turned into the reply (:func:`extra`), where a bad
member is -32603 naming the bound, as the shim would answer it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Literal, Optional, TypedDict, Union

from . import jsonbounds
from .protocol import RpcError

#: The hooks only an API 0.4 manifest may declare that octet-wasm serves,
#: and the member each one's result may carry (None: an observation).
SERVED = {
    "cache_warming_decision": "cache_warming_decision",
    "compaction_strategy": "compaction_frames",
    "before_provider_request": "provider_payload",
    "before_provider_headers": "provider_headers",
    "after_provider_response": None,
}
#: The 0.4 hooks octet-wasm refuses at initialize, with the feature each
#: needs (docs/api-0.4.md#v04-hooks).
UNSERVED = {
    "resources_discover": "resource_paths_v1",
    **{hook: "session_entries" for hook in (
        "provider_context", "model_turn_start", "model_turn_end", "session_before_compact",
        "session_compact", "session_before_tree", "session_tree")},
}

MAX_COMPACTION_FRAMES = 32
MAX_COMPACTION_FRAME_BYTES = 512 * 1024
# The frames travel base64 in one protocol frame of at most 1 MiB, with
# room for the envelope (the shim's margin).
MAX_COMPACTION_ENCODED_BYTES = (1 << 20) - 16 * 1024
MAX_PROVIDER_PAYLOAD_BYTES = 768 * 1024
MAX_PROVIDER_PAYLOAD_DEPTH = 32
MAX_PROVIDER_PAYLOAD_NODES = 65_536
MAX_PROVIDER_HEADER_NAMES = 256
MAX_PROVIDER_HEADER_BYTES = 64 * 1024
MAX_PROVIDER_HEADER_NAME_BYTES = 256
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_TCHAR = frozenset(b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


# --- octet's types (octet_extension.cache_warming) --------------------------

CacheWarmingAction = Literal["warm", "stop"]


class CacheWarmingDecision(TypedDict):
    """What octet knows about one due cache refresh."""

    phase: Literal["streaming", "idle"]
    warm_cost_microdollars: int
    miss_cost_microdollars: int
    continuation_probability: float
    expected_savings_microdollars: int
    economics_available: bool
    action: CacheWarmingAction


class CacheWarmingDecisionPayload(TypedDict):
    """The ``cache_warming_decision`` hook's payload."""

    decision: CacheWarmingDecision
    model: Any


class CacheWarmingDecisionResult(TypedDict):
    """One opinion; None leaves octet's decision as it was."""

    cache_warming_decision: Optional[CacheWarmingAction]


CacheWarmingDecisionHandler = Union[
    Callable[[CacheWarmingDecisionPayload], Optional[CacheWarmingAction]],
    Callable[[CacheWarmingDecisionPayload, dict], Optional[CacheWarmingAction]],
]


# --- the checks, shared by the helpers and the replies ----------------------


def _action(value: Any) -> Optional[str]:
    if value is None or (isinstance(value, str) and value in ("warm", "stop")):
        return value
    raise ValueError("invalid cache_warming_decision action")


def _frames(frames: Any) -> list:
    """PNG bytes of each frame; a string is one frame in base64."""
    if isinstance(frames, (str, bytes, bytearray)) or not isinstance(frames, Sequence):
        raise ValueError("compaction_frames must be a list of PNG images")
    if not 1 <= len(frames) <= MAX_COMPACTION_FRAMES:
        raise ValueError(f"compaction_strategy returned {len(frames)} frames; "
                         f"1 to {MAX_COMPACTION_FRAMES} are allowed")
    out, encoded = [], 0
    for index, frame in enumerate(frames, start=1):
        if isinstance(frame, str):
            try:
                data = base64.b64decode(frame.encode("ascii"), validate=True)
            except (UnicodeEncodeError, binascii.Error):
                raise ValueError(f"compaction frame {index} is not base64") from None
        elif isinstance(frame, (bytes, bytearray, memoryview)):
            data = bytes(frame)
        else:
            raise ValueError(f"compaction frame {index} must be PNG bytes or base64 text")
        if len(data) > MAX_COMPACTION_FRAME_BYTES:
            raise ValueError(f"compaction frame {index} has {len(data)} bytes; "
                             "the limit is 512 KiB")
        if not data.startswith(PNG_SIGNATURE):
            raise ValueError(f"compaction frame {index} is not a PNG image")
        encoded += 4 * ((len(data) + 2) // 3)
        out.append(data)
    if encoded > MAX_COMPACTION_ENCODED_BYTES:
        raise ValueError(f"the compaction frames take {encoded} bytes in base64, more than "
                         "fit in one 1 MiB protocol frame")
    return out


def _payload(value: Any) -> str:
    """The payload as JSON text."""
    if not isinstance(value, (Mapping, list, tuple)):
        raise ValueError("provider_payload must be a JSON object or array")
    problem = jsonbounds.shape_problem(value, "provider_payload",
                                       max_depth=MAX_PROVIDER_PAYLOAD_DEPTH,
                                       max_nodes=MAX_PROVIDER_PAYLOAD_NODES)
    if problem is not None:
        raise ValueError(problem)
    text = jsonbounds.dumps(value, "provider_payload")
    size = len(text.encode("utf-8"))
    if size > MAX_PROVIDER_PAYLOAD_BYTES:
        raise ValueError(f"provider_payload has {size} bytes; the limit is 768 KiB")
    return text


def _headers(headers: Any) -> list:
    """``[(name, [values] or None)]``; None deletes the header."""
    if not isinstance(headers, Mapping):
        raise ValueError("provider_headers must map header names to a value, a list of "
                         "values or None")
    if len(headers) > MAX_PROVIDER_HEADER_NAMES:
        raise ValueError(f"provider_headers changes {len(headers)} headers; "
                         f"the limit is {MAX_PROVIDER_HEADER_NAMES}")
    edits, seen, size = [], set(), 0
    for name, value in headers.items():
        raw = name.encode("utf-8") if isinstance(name, str) else b""
        if not 1 <= len(raw) <= MAX_PROVIDER_HEADER_NAME_BYTES or not set(raw) <= _TCHAR:
            raise ValueError(f"provider header name {name!r} is not an HTTP token of "
                             "1 to 256 bytes")
        if name.lower() in seen:
            raise ValueError(f"provider header {name} is changed twice")
        seen.add(name.lower())
        size += len(raw)
        if value is None:
            edits.append((name, None))
            continue
        values = [value] if isinstance(value, str) else value
        if isinstance(values, (bytes, bytearray)) or not isinstance(values, Sequence):
            raise ValueError(f"provider header {name} must be a string, a list of strings "
                             "or None")
        if not values:
            raise ValueError(f"provider header {name} has an empty list of values "
                             "(None deletes it)")
        for item in values:
            if not isinstance(item, str):
                raise ValueError(f"a value of provider header {name} is not a string")
            if any(c in item for c in "\r\n\0"):
                raise ValueError(f"a value of provider header {name} contains CR, LF or NUL")
            size += len(item.encode("utf-8"))
        edits.append((name, list(values)))
    if size > MAX_PROVIDER_HEADER_BYTES:
        raise ValueError(f"provider_headers take {size} bytes; the limit is 64 KiB")
    return edits


# --- helpers for handlers ---------------------------------------------------


def cache_warming_decision(action: Optional[CacheWarmingAction]) -> CacheWarmingDecisionResult:
    """A ``cache_warming_decision`` result: ``"warm"``, ``"stop"`` or None
    (no opinion)."""
    if action is not None and not (isinstance(action, str) and action in ("warm", "stop")):
        raise ValueError("cache warming action must be warm, stop, or None")
    return {"cache_warming_decision": action}


def compaction_frames(*frames: bytes) -> dict:
    """A ``compaction_strategy`` result: 1 to 32 PNG images (bytes) of at
    most 512 KiB each, sent base64 as octet reads them."""
    pngs = _frames(list(frames))
    return {"compaction_frames": [base64.b64encode(png).decode("ascii") for png in pngs]}


def provider_payload(payload: Any) -> dict:
    """A ``before_provider_request`` result: the JSON object or array (at
    most 768 KiB) octet sends to the provider instead of its own."""
    _payload(payload)
    return {"provider_payload": payload}


def provider_headers(headers: Mapping) -> dict:
    """A ``before_provider_headers`` result: ``{name: value}``, ``{name:
    [values]}``, or ``{name: None}`` to delete; at most 256 names and
    64 KiB together."""
    _headers(headers)
    return {"provider_headers": dict(headers)}


# --- the reply --------------------------------------------------------------


def extra(hook: str, value: Mapping) -> dict:
    """The 0.4 member of ``hook``'s result in ``value``, checked and ready
    for the WIT record (other hooks' members are ignored, as the shim only
    sends a hook's own)."""
    member = SERVED.get(hook)
    if member is None or value.get(member) is None:
        return {}
    check = {"cache_warming_decision": _action, "compaction_frames": _frames,
             "provider_payload": _payload, "provider_headers": _headers}[member]
    try:
        return {member: check(value[member])}
    except ValueError as error:
        raise RpcError(-32603, str(error)) from None
