"""The ambient request: its id and its :class:`CancellationToken`, as the
process-based SDK exposes them to handlers (``current_cancellation()``,
``current_request_id()``, ``ext.cancellation``, ``ext.request_id``).

An instance serves one request at a time, so the token reads the shim's
cancellation state for that request (the ``cancellation`` import). A
handler that never looks is still stopped: the shim answers -32800 on
``$/cancelRequest`` at once and, after a short grace, interrupts the
instance and replaces it. Looking lets a handler stop cleanly and keep its
instance and state.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any, Optional

from wit_world.imports import cancellation

from .errors import CancelledError
from .protocol import RpcError

# One wait of the `sleep` import, for waits without a timeout.
_WAIT_SLICE_MS = 60_000


class CancellationToken:
    """Cooperative cancellation of one request.

    While its request runs every property asks the shim; once the request
    has its answer the token keeps the last state it had.
    """

    def __init__(self, request_id: Any) -> None:
        self.request_id = request_id
        self._live = True
        self._final_cancelled = False
        self._final_reason: Optional[str] = None
        self._sequence = 0

    @property
    def cancelled(self) -> bool:
        if not self._live:
            return self._final_cancelled

        return bool(cancellation.is_cancelled())

    @property
    def reason(self) -> Optional[str]:
        if not self._live:
            return self._final_reason
        if not self.cancelled:
            return None

        return cancellation.reason() or "cancelled"

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Waits until cancellation (or ``timeout`` seconds) and returns
        whether it was observed."""
        if not self._live:
            return self._final_cancelled

        if timeout is None:
            while not cancellation.sleep(_WAIT_SLICE_MS):
                pass
            return True
        millis = max(0, int(round(float(timeout) * 1000)))
        return bool(cancellation.sleep(millis))

    def raise_if_cancelled(self) -> None:
        """Raise :class:`CancelledError` when cancellation was requested."""
        if self.cancelled:
            raise CancelledError(self.reason or "cancelled")

    def _next_sequence(self) -> int:
        """The sequence the next progress report gets (the shim numbers
        them the same way, from 1 per request)."""
        if not self._live:
            raise RpcError(-32000, "request has already settled")
        if self.cancelled:
            raise CancelledError(self.reason or "cancelled")
        return self._sequence + 1

    def _sent(self, sequence: int) -> None:
        self._sequence = sequence

    def _finish(self) -> None:
        """The request has its answer: keep the state it ended with."""
        if self._live:
            self._final_cancelled = self.cancelled
            self._final_reason = self.reason
            self._live = False


@dataclass(frozen=True)
class RequestScope:
    extension: Any
    request_id: Any
    cancellation: CancellationToken
    # Model tool calls and declared commands may make child requests
    # (confirmations, input, artifacts, policy, secrets, agents).
    active_parent: bool
    # The request's method (`tool/call` may compose, API 0.4).
    method: str = ""
    # What this request has used of per-request budgets (composition).
    used: dict = field(default_factory=dict)


CURRENT: contextvars.ContextVar[Optional[RequestScope]] = contextvars.ContextVar(
    "octet_guest_current_request", default=None
)


def current_cancellation() -> Optional[CancellationToken]:
    """Return the ambient handler cancellation token, if inside a request."""
    scope = CURRENT.get()
    return scope.cancellation if scope is not None else None


def current_request_id() -> Any:
    """Return the ambient host request ID, or ``None`` outside a handler."""
    scope = CURRENT.get()
    return scope.request_id if scope is not None else None


__all__ = ["CancellationToken", "current_cancellation", "current_request_id"]
