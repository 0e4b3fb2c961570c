"""The exceptions a handler raises to choose how its request fails.

Any other exception is a plain failure: a tool call answers it as an
``is_error`` result carrying ``str(exc)`` (what the model reads), every other
request as JSON-RPC -32603.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from wit_world.imports import types as wit


class ExtensionError(Exception):
    """Base class of the SDK's exceptions."""

    def to_wit(self) -> wit.Error:
        """The WIT ``error`` this exception is answered with."""
        return wit.Error_Failed(error_text(self))


class InvalidParams(ExtensionError):
    """The arguments or parameters are not acceptable: answered -32602."""

    def to_wit(self) -> wit.Error:
        return wit.Error_InvalidParams(error_text(self))


class ToolError(ExtensionError):
    """The handler failed. A tool call becomes an ``is_error`` result with
    this text; any other request is answered -32603."""


class HostError(ToolError):
    """The host refused a service (a notification the manifest does not
    declare, progress without ``request_progress``...)."""


class Cancelled(ExtensionError):
    """The request was cancelled: answered -32800 with the host's reason.

    Raised by :func:`current_cancellation` ``.raise_if_cancelled()`` and by
    host services that were waiting when the request was cancelled.
    """

    def __init__(self, reason: Optional[str] = None) -> None:
        super().__init__(reason or "request cancelled")
        self.reason = reason

    def to_wit(self) -> wit.Error:
        return wit.Error_Cancelled()


class RpcError(ExtensionError):
    """An explicit JSON-RPC error. The shim lets through -32602, -32601,
    -32603, -32800 and -32099..=-32000; any other code becomes -32603."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wit(self) -> wit.Error:
        data = None if self.data is None else json.dumps(self.data, ensure_ascii=False)
        return wit.Error_Rpc(wit.RpcError(self.code, self.message, data))


# Names other Python SDKs use for the same ideas.
CancelledError = Cancelled
ExtensionCancelled = Cancelled
JsonRpcError = RpcError


def error_text(exc: BaseException) -> str:
    """``str(exc)``, or the exception's class name when that is empty."""
    text = str(exc)
    return text if text else type(exc).__name__


def to_wit_error(exc: Exception) -> wit.Error:
    """The WIT ``error`` for any exception a handler raised."""
    if isinstance(exc, ExtensionError):
        return exc.to_wit()
    return wit.Error_Failed(error_text(exc))


def from_wit_error(error: Any) -> ExtensionError:
    """The exception for a WIT ``error`` a host service returned."""
    if isinstance(error, wit.Error_Cancelled):
        from . import cancellation

        return Cancelled(cancellation.current_cancellation().reason)
    if isinstance(error, wit.Error_InvalidParams):
        return InvalidParams(error.value)
    if isinstance(error, wit.Error_Rpc):
        data = None
        if error.value.data is not None:
            try:
                data = json.loads(error.value.data)
            except ValueError:
                data = error.value.data
        return RpcError(error.value.code, error.value.message, data)
    if isinstance(error, wit.Error_Failed):
        return HostError(error.value)
    return HostError(repr(error))
