"""The JSON-RPC error type, the structured logger and the wire constants of
the process-based SDK's ``protocol`` module.

In a component the shim owns the protocol stream, so there is no transport
here (see :mod:`octet_guest.unavailable`); what remains is what handlers
touch: :class:`RpcError` to choose an error reply, and :class:`Logger` for
diagnostics that never reach the protocol stream.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import IO, Any, Mapping, Optional

from . import runtime

DEFAULT_API_VERSION = "0.1"
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024


class RpcError(Exception):
    """A JSON-RPC error. Raised from a handler it is the request's error
    reply (the shim passes -32602, -32601, -32603, -32800 and
    -32099..=-32000 through and answers any other code as -32603, so a
    guest cannot imitate the host's transport errors)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def error_object(self) -> dict:
        error: dict = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    @classmethod
    def from_response(cls, response: Mapping[str, Any]) -> "RpcError":
        error = response.get("error")
        if not isinstance(error, Mapping):
            return cls(-32603, "invalid JSON-RPC error response")
        code = error.get("code", -32603)
        message = error.get("message", "remote JSON-RPC error")
        if not isinstance(code, int) or isinstance(code, bool):
            code = -32603
        if not isinstance(message, str):
            message = str(message)
        return cls(code, message, error.get("data"))


class ProtocolError(RpcError):
    """A malformed or otherwise invalid JSON-RPC message."""


class Logger:
    """Structured diagnostics, one JSON record per call, never on the
    protocol stream.

    Without a ``stream`` a record goes to the shim's stderr log (as
    ``{"level", "message", ...fields, "source": "guest"}``), or to the build
    output while the app module runs at build time. With a ``stream`` each
    record is one compact JSON line written to it. Fields that are not JSON
    are written as their ``str``, so logging an exception cannot fail.
    """

    _LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}

    def __init__(self, stream: Optional[IO[Any]] = None, *, level: str = "info") -> None:
        level = level.lower()
        if level not in self._LEVELS:
            raise ValueError(f"unknown log level: {level}")
        self.stream = stream
        self.level = level
        self._lock = threading.Lock()

    def log(self, level: str, message: str, **fields: Any) -> None:
        level = level.lower()
        if level not in self._LEVELS:
            raise ValueError(f"unknown log level: {level}")
        if self._LEVELS[level] < self._LEVELS[self.level]:
            return
        if self.stream is None and runtime.serving():
            runtime.host_log(level, str(message), _encode(fields) if fields else None)
            return
        entry: dict = {"level": level, "message": str(message)}
        entry.update(fields)
        line = _encode(entry) + "\n"
        stream = self.stream if self.stream is not None else sys.stderr
        with self._lock:
            try:
                stream.write(line)
            except TypeError:
                stream.write(line.encode("utf-8"))
            stream.flush()

    def debug(self, message: str, **fields: Any) -> None:
        self.log("debug", message, **fields)

    def info(self, message: str, **fields: Any) -> None:
        self.log("info", message, **fields)

    def warning(self, message: str, **fields: Any) -> None:
        self.log("warning", message, **fields)

    def error(self, message: str, **fields: Any) -> None:
        self.log("error", message, **fields)


def _encode(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


__all__ = [
    "DEFAULT_API_VERSION",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "Logger",
    "ProtocolError",
    "RpcError",
]
