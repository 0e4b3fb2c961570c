"""What a handler may ask of the octet host, for the request it serves.

Each function calls the matching import of the WIT ``host`` interface. The
shim checks every call against the manifest and the negotiated features; a
refused call raises :class:`~octet_guest.HostError` (or
:class:`~octet_guest.Cancelled` when the request was cancelled while
waiting) and writes nothing.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from componentize_py_types import Err
from wit_world.imports import host as wit_host
from wit_world.imports import types as wit

from .errors import from_wit_error
from .values import to_context_item, to_notification, to_status

_LOG_LEVELS = {
    "debug": wit_host.LogLevel.DEBUG,
    "info": wit_host.LogLevel.INFO,
    "warning": wit_host.LogLevel.WARNING,
    "warn": wit_host.LogLevel.WARNING,
    "error": wit_host.LogLevel.ERROR,
}

_STREAMS = {"stdout": wit.OutputStream.STDOUT, "stderr": wit.OutputStream.STDERR}


def _call(function: Any, *args: Any) -> Any:
    try:
        return function(*args)
    except Err as err:
        raise from_wit_error(err.value) from None


def log(level: str, message: str, **fields: Any) -> None:
    """One structured record on the shim's stderr (never the protocol
    stream): ``debug``, ``info``, ``warning`` or ``error``, plus any JSON
    fields."""
    wit_level = _LOG_LEVELS.get(str(level).lower(), wit_host.LogLevel.INFO)
    encoded = json.dumps(fields, ensure_ascii=False, default=str) if fields else None
    wit_host.log(wit_level, str(message), encoded)


def notify(*args: Any, level: Optional[str] = None, message: Optional[str] = None,
           title: Optional[str] = None) -> None:
    """Shows a notification (manifest ``contributes.notifications``):
    ``notify(level="success", message="done", title=None)``, also
    ``notify("done")`` or ``notify("success", "done")``."""
    if len(args) == 2:
        level, message = args
    elif len(args) == 1:
        message = args[0]
    elif args:
        raise TypeError("notify takes at most two positional arguments (level, message)")
    if message is None:
        raise TypeError("notify needs a message")
    notification = to_notification(
        {"level": level or "info", "title": title, "message": str(message)}
    )
    _call(wit_host.notify, notification)


def confirm(prompt: str, detail: Optional[str] = None, *, destructive: bool = False,
            default: bool = False) -> bool:
    """Asks the user a yes/no question and waits (manifest
    ``contributes.confirmations``; API 0.2 only from a tool call or a
    command). False when the frontend cannot ask."""
    request = wit.Confirmation(str(prompt), detail, bool(destructive), bool(default))
    return _call(wit_host.confirm, request)


def request_input(prompt: str, secret: bool = False) -> Optional[str]:
    """Asks the user for text (API 0.2, from a tool call or a command). None
    when cancelled, unavailable or headless. Never log or return a secret
    answer."""
    return _call(wit_host.request_input, str(prompt), bool(secret))


def progress(message: Optional[str] = None, current: Optional[int] = None,
             total: Optional[int] = None, unit: Optional[str] = None, *,
             output: Any = None, stream: str = "stdout",
             label: Optional[str] = None, detail: Optional[str] = None) -> None:
    """Reports progress for the current request (needs ``request_progress``,
    see :meth:`Extension.uses_progress`):

    * ``progress("indexing", 3, 10, "files")``: a status line;
    * ``progress(output="chunk", stream="stderr")``: streamed output (str or
      bytes);
    * ``progress(label="Scanning", detail="src/")``: the request's decoration
      (needs ``progress_decoration``).
    """
    if output is not None:
        data = output.encode("utf-8") if isinstance(output, str) else bytes(output)
        if stream not in _STREAMS:
            raise ValueError("stream must be 'stdout' or 'stderr'")
        event: Any = wit.ProgressEvent_Output(wit.ProgressOutput(_STREAMS[stream], data))
    elif label is not None:
        event = wit.ProgressEvent_Decoration(wit.ProgressDecoration(str(label), detail))
    else:
        if message is None:
            raise TypeError("progress needs a message, output or label")
        event = wit.ProgressEvent_Status(wit.ProgressStatus(str(message), current, total, unit))
    _call(wit_host.progress, event)


def contribute_context(item: Any) -> None:
    """Sends unsolicited prompt context (manifest ``contributes.context``):
    ``{"label", "content", "placement"?}``."""
    _call(wit_host.contribute_context, to_context_item(item))


def contribute_status(item: Any, surface: str = "status") -> None:
    """Sends a status line for a declared surface (manifest
    ``contributes.ui``): a string or ``{"surface"?, "text", ...}``."""
    status = to_status(item, surface)
    if status is not None:
        _call(wit_host.contribute_status, status)


__all__ = [
    "confirm",
    "contribute_context",
    "contribute_status",
    "log",
    "notify",
    "progress",
    "request_input",
]
