"""Cancellation's error, and the mapping between the SDK's exceptions and
the WIT ``error`` variant in both directions.

What a handler raises decides its reply as in the process-based SDK: an
:class:`~octet_guest.RpcError` (a :class:`CancelledError` too) is that
error reply; any other exception is an ``is_error`` result for a tool call
and -32603 ``internal error`` for every other request (the component
module decides which, and logs the exception).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from wit_world.imports import types as wit

from .protocol import RpcError

REQUEST_CANCELLED = -32800


class CancelledError(RpcError):
    """The host cancelled an in-flight extension request."""

    def __init__(self, reason: str = "cancelled") -> None:
        super().__init__(REQUEST_CANCELLED, "request cancelled", {"reason": str(reason)})


def to_wit(error: RpcError) -> Any:
    """The WIT error that answers ``error`` exactly (code, message, data)."""

    data = None if error.data is None else json.dumps(error.data, ensure_ascii=False,
                                                      default=str)
    return wit.Error_Rpc(wit.RpcError(int(error.code), str(error.message), data))


def internal_error() -> Any:
    """The SDK's reply to a failed handler: -32603 ``internal error``, no
    data (the reason goes to the log)."""
    return to_wit(RpcError(-32603, "internal error"))


def from_wit(error: Any, reason: Optional[str] = None) -> RpcError:
    """The exception for a WIT error a host import returned. ``reason`` is
    the current request's cancellation reason, for ``cancelled``."""

    if isinstance(error, wit.Error_Cancelled):
        return CancelledError(reason or "cancelled")
    if isinstance(error, wit.Error_InvalidParams):
        return RpcError(-32602, error.value)
    if isinstance(error, wit.Error_Rpc):
        data = None
        if error.value.data is not None:
            try:
                data = json.loads(error.value.data)
            except ValueError:
                data = error.value.data
        if error.value.code == REQUEST_CANCELLED:
            return CancelledError(
                (data or {}).get("reason", reason or "cancelled")
                if isinstance(data, dict) else reason or "cancelled"
            )
        return RpcError(error.value.code, error.value.message, data)
    if isinstance(error, wit.Error_Failed):
        # A reply the SDK would refuse locally, or a frame that could not
        # be written: the SDK raises these as -32603 / -32000 errors.
        return RpcError(-32603, error.value)
    return RpcError(-32603, repr(error))


__all__ = ["REQUEST_CANCELLED", "CancelledError"]
