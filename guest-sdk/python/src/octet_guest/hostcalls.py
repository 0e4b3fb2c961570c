"""The process-based SDK's host calls that need no feature beyond the
manifest (notifications, confirmations, input), progress, presentation and
the run loop, as :class:`~octet_guest.Extension` methods.

Each checks what the SDK checks, with the SDK's exception and text, before
calling the WIT import; the shim then checks the manifest, the negotiated
features and every bound again before anything is written, and numbers
progress the same way. A request is always acted for by the instance
serving it, so ``parent_request_id=`` and ``request_id=`` may only name
that request.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Optional

from componentize_py_types import Err
from wit_world.imports import cancellation, host, presentation
from wit_world.imports import types as wit

from .cancellation import CURRENT
from .errors import from_wit
from .protocol import RpcError
from .unavailable import refuse
from .values import (
    MAX_INPUT_PROMPT_BYTES,
    MAX_INPUT_VALUE_BYTES,
    MAX_PRESENTATION_ACTIONS,
    MAX_PRESENTATION_ACTIVITIES,
    MAX_PRESENTATION_BYTES,
    MAX_PRESENTATION_NODES,
    MAX_PRESENTATION_REVISION,
    MAX_PROGRESS_DECORATION_DETAIL_BYTES,
    MAX_PROGRESS_DECORATION_LABEL_BYTES,
    MISSING,
)

_LEVELS = ("info", "success", "warning", "error")


def call(function: Any, *args: Any) -> Any:
    """Calls a WIT import; its error becomes the SDK's exception."""

    try:
        return function(*args)
    except Err as err:
        scope = CURRENT.get()
        reason = None
        if scope is not None:

            reason = cancellation.reason()
        raise from_wit(err.value, reason) from None


class HostCalls:
    """Notifications, confirmations, input, progress and presentation."""

    # --- parents --------------------------------------------------------------

    def _resolve_parent(self, explicit: Any, *, required: bool) -> Any:
        """The request a host call acts for. The shim derives it from the
        request being served, so an explicit id must name that request."""
        scope = CURRENT.get()
        current = scope.request_id if scope is not None and scope.extension is self else None
        if explicit is not MISSING:
            if (
                not isinstance(explicit, int)
                or isinstance(explicit, bool)
                or not 0 <= explicit <= (2**64) - 1
            ):
                raise RpcError(-32602, "parent_request_id must be an unsigned 64-bit integer")
            if explicit != current:
                raise RpcError(
                    -32602,
                    f"parent_request_id {explicit} is not the request this handler serves"
                    + ("" if current is None else f" ({current})")
                    + ": octet-wasm acts for the request being served and no other",
                )
            return explicit
        if current is not None:
            return current
        if required:
            raise RpcError(-32602, "operation-scoped host request requires parent_request_id")
        return MISSING

    # --- notifications, confirmations, input ----------------------------------

    def notify(self, message: str, *, level: str = "info", title: Optional[str] = None) -> None:

        if level not in _LEVELS:
            raise ValueError(f"unknown notification level: {level}")
        self._require_capability("notifications")
        notification = wit.Notification(
            getattr(wit.NotifyLevel, level.upper()),
            None if title is None else str(title),
            str(message),
        )
        call(host.notify, notification)

    send_notification = notify

    def confirm(self, prompt: str, *, detail: Optional[str] = None, destructive: bool = False,
                default: bool = False, parent_request_id: Any = MISSING) -> bool:

        self._require_capability("confirmations")
        self._require_initialized()
        self._resolve_parent(parent_request_id, required=self._feature_wire())
        request = wit.Confirmation(str(prompt), None if detail is None else str(detail),
                                   bool(destructive), bool(default))
        return bool(call(host.confirm, request))

    def request_input(self, prompt: str, *, secret: bool = False,
                      parent_request_id: Any = MISSING) -> Optional[str]:
        """Request ephemeral text input owned by the active API 0.2 request.

        ``None`` means the frontend cancelled or could not answer."""

        if not isinstance(prompt, str):
            raise TypeError("input prompt must be a string")
        if not prompt.strip():
            raise ValueError("input prompt must be non-empty")
        if len(prompt.encode("utf-8")) > min(self.max_message_bytes, MAX_INPUT_PROMPT_BYTES):
            raise ValueError("input prompt exceeds the 16 KiB bound")
        if not isinstance(secret, bool):
            raise TypeError("input secret must be a boolean")
        self._require_initialized()
        if not self._feature_wire():
            raise RpcError(-32601, "input/request requires extension API 0.2")
        self._resolve_parent(parent_request_id, required=True)
        value = call(host.request_input, prompt, secret)
        if value is not None and len(value.encode("utf-8")) > min(
            self.max_message_bytes, MAX_INPUT_VALUE_BYTES
        ):
            raise RpcError(-32603, "input response exceeds the 256 KiB bound")
        return value

    # --- progress ---------------------------------------------------------------

    def progress(self, event: Any = None, *, message: Optional[str] = None,
                 current: Any = MISSING, total: Any = MISSING, unit: Optional[str] = None,
                 request_id: Any = MISSING) -> int:
        """Send monotonic request-scoped API 0.2 progress and return its
        sequence."""

        self._require_feature("request_progress")
        scope = CURRENT.get()
        if scope is None or scope.extension is not self:
            if request_id is MISSING:
                raise RpcError(-32602, "progress requires an active parent request")
            raise RpcError(-32602, "unknown progress request_id")
        if request_id is not MISSING and request_id != scope.request_id:
            raise RpcError(
                -32602,
                "unknown progress request_id: octet-wasm reports progress only for the "
                "request being served",
            )
        if event is None:
            if message is None:
                raise ValueError("progress requires an event or status message")
            value: dict = {"type": "status", "message": str(message)}
            if current is not MISSING:
                value["current"] = current
            if total is not MISSING:
                value["total"] = total
            if unit is not None:
                value["unit"] = str(unit)
            event = value
        if not isinstance(event, Mapping):
            raise TypeError("progress event must be an object")
        if event.get("type") == "decoration":
            self._require_feature("progress_decoration")
        wit_event = _progress_event(dict(event))
        sequence = scope.cancellation._next_sequence()
        call(host.progress, wit_event)
        scope.cancellation._sent(sequence)
        return sequence

    report_progress = progress

    def progress_decoration(self, label: str, detail: Optional[str] = None, *,
                            request_id: Any = MISSING) -> int:
        """Replace the active request's bounded semantic progress
        decoration."""
        event: dict = {"type": "decoration", "label": label}
        if detail is not None:
            event["detail"] = detail
        return self.progress(event, request_id=request_id)

    # --- presentation -------------------------------------------------------

    def publish_presentation(self, snapshot: Mapping, *,
                             resource_owner: Optional[Mapping] = None) -> None:
        """Publish one complete, monotonic API 0.2 semantic UI snapshot."""

        if not self._feature_wire():
            raise RpcError(-32601, "semantic presentation requires extension API 0.2")
        self._require_capability("presentation")
        payload = _snapshot(snapshot)
        owner = None
        if resource_owner is not None:
            owner = _owner(resource_owner)
            owner = wit.ResourceOwner(owner["session_id"], owner["extension_instance_id"],
                                      owner["process_generation"])
        revision = payload["revision"]
        if self._presentation_revision is not None and revision <= self._presentation_revision:
            raise ValueError("presentation revision must increase monotonically")
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        call(presentation.update, text, owner)
        self._presentation_revision = revision

    presentation = publish_presentation

    # --- octet-wasm's unsolicited contributions -------------------------------

    def contribute_context(self, item: Mapping) -> None:
        """octet-wasm's addition: sends unsolicited prompt context
        (``context/contribution``; manifest ``context = true``)."""

        from .witvalues import context_item

        self._require_initialized()
        call(host.contribute_context, context_item(item, "contribution"))

    def contribute_status(self, item: Mapping) -> None:
        """octet-wasm's addition: sends a status line for a declared
        surface (``status/contribution``)."""

        from . import results, witvalues

        self._require_initialized()
        call(host.contribute_status, witvalues.status(results.status(item)))

    # --- the loop the shim runs ---------------------------------------------

    def run(self, *, stdin: Any = None, stdout: Any = None) -> None:
        """Kept for the SDK's ``ext.run()``: in a component the shim runs
        the loop, so at build time this returns at once."""
        if stdin is not None or stdout is not None:
            refuse("Extension.run(stdin=..., stdout=...)")
        if self._initialized:
            raise RuntimeError("extension is already running")

    def handle_message(self, message: Mapping) -> bool:
        refuse("Extension.handle_message()")
        return False

    def request(self, method: str, params: Optional[Mapping] = None, *,
                parent_request_id: Any = MISSING, operation_scoped: bool = False) -> Any:
        refuse("Extension.request()")


def _progress_event(event: dict) -> Any:
    """A progress event checked like the SDK checks it, as the WIT event."""

    kind = event.get("type")
    if kind == "status":
        if not isinstance(event.get("message"), str):
            raise ValueError("status progress requires a string message")
        for field in ("current", "total"):
            value = event.get(field)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 0
            ):
                raise ValueError(f"status progress {field} must be a non-negative integer")
        if event.get("unit") is not None and not isinstance(event["unit"], str):
            raise ValueError("status progress unit must be a string")
        allowed = {"type", "message", "current", "total", "unit"}
        made: Any = wit.ProgressEvent_Status(wit.ProgressStatus(
            event["message"], event.get("current"), event.get("total"), event.get("unit")))
    elif kind == "output":
        stream = event.get("stream")
        if stream not in {"stdout", "stderr"}:
            raise ValueError("output progress stream must be stdout or stderr")
        if event.get("encoding") not in {"utf8", "base64"}:
            raise ValueError("output progress encoding must be utf8 or base64")
        if not isinstance(event.get("data"), str):
            raise ValueError("output progress data must be a string")
        if event["encoding"] == "base64":
            try:
                data = base64.b64decode(event["data"], validate=True)
            except ValueError as error:
                raise ValueError("output progress data is not valid base64") from error
        else:
            data = event["data"].encode("utf-8")
        allowed = {"type", "stream", "encoding", "data"}
        made = wit.ProgressEvent_Output(wit.ProgressOutput(
            getattr(wit.OutputStream, stream.upper()), data))
    elif kind == "decoration":
        label, detail = event.get("label"), event.get("detail")
        if not _decoration_text(label, MAX_PROGRESS_DECORATION_LABEL_BYTES):
            raise ValueError("decoration progress label is invalid")
        if detail is not None and not _decoration_text(detail,
                                                       MAX_PROGRESS_DECORATION_DETAIL_BYTES):
            raise ValueError("decoration progress detail is invalid")
        allowed = {"type", "label", "detail"}
        made = wit.ProgressEvent_Decoration(wit.ProgressDecoration(label, detail))
    else:
        raise ValueError("progress event type must be status, output, or decoration")
    unknown = set(event) - allowed
    if unknown:
        raise ValueError(f"unknown progress event fields: {sorted(unknown)}")
    return made


def _decoration_text(text: Any, limit: int) -> bool:
    return (
        isinstance(text, str)
        and bool(text)
        and len(text.encode("utf-8")) <= limit
        and not any(ord(c) < 32 or 127 <= ord(c) <= 159 for c in text)
    )


def _snapshot(snapshot: Any) -> dict:
    if not isinstance(snapshot, Mapping):
        raise TypeError("presentation snapshot must be an object")
    payload = dict(snapshot)
    unknown = set(payload) - {"revision", "status", "activities", "collection", "actions"}
    if unknown:
        raise ValueError(f"unknown presentation snapshot fields: {sorted(unknown)}")
    revision = payload.get("revision")
    if (
        not isinstance(revision, int)
        or isinstance(revision, bool)
        or not 0 <= revision <= MAX_PRESENTATION_REVISION
    ):
        raise ValueError("presentation revision must be a portable non-negative integer")
    activities, actions = payload.get("activities", []), payload.get("actions", [])
    if not isinstance(activities, list) or len(activities) > MAX_PRESENTATION_ACTIVITIES:
        raise ValueError("presentation activities must be an array of at most "
                         f"{MAX_PRESENTATION_ACTIVITIES} items")
    if not isinstance(actions, list) or len(actions) > MAX_PRESENTATION_ACTIONS:
        raise ValueError("presentation actions must be an array of at most "
                         f"{MAX_PRESENTATION_ACTIONS} items")
    collection = payload.get("collection")
    if collection is not None:
        if not isinstance(collection, Mapping):
            raise ValueError("presentation collection must be an object or null")
        nodes = collection.get("nodes", [])
        if not isinstance(nodes, list) or len(nodes) > MAX_PRESENTATION_NODES:
            raise ValueError("presentation collection nodes must contain at most "
                             f"{MAX_PRESENTATION_NODES} items")
    try:
        encoded = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise ValueError("presentation snapshot must be JSON-serializable") from error
    if len(encoded) > MAX_PRESENTATION_BYTES:
        raise ValueError(f"presentation snapshot is {len(encoded)} bytes; "
                         f"limit is {MAX_PRESENTATION_BYTES}")
    return payload


def _owner(owner: Any) -> dict:
    if not isinstance(owner, Mapping):
        raise TypeError("presentation resource_owner must be an object")
    value = dict(owner)
    if set(value) != {"session_id", "extension_instance_id", "process_generation"}:
        raise ValueError("presentation resource_owner must contain the exact owner triple")
    if any(
        not isinstance(value[key], str) or not value[key].strip()
        for key in ("session_id", "extension_instance_id")
    ) or (
        not isinstance(value["process_generation"], int)
        or isinstance(value["process_generation"], bool)
        or value["process_generation"] < 1
    ):
        raise ValueError("presentation resource_owner is invalid")
    return value
