"""The cancellation state of the request being served.

A wasm instance serves one request at a time, so there is exactly one
"current" request; the shim answers for it. A guest that never looks is still
stopped (the shim interrupts it after a short grace and replaces the
instance), but looking lets it stop cleanly and keep its state.
"""

from __future__ import annotations

from typing import Optional

from wit_world.imports import cancellation as wit_cancellation

from .errors import Cancelled


class Cancellation:
    """The current request's cancellation, as :func:`current_cancellation`
    returns it. Every property asks the shim, so one object can be kept."""

    @property
    def cancelled(self) -> bool:
        """Whether the request has been cancelled (by the host, a deadline or
        shutdown)."""
        return wit_cancellation.is_cancelled()

    # Spelling used by `threading.Event` and some SDKs.
    is_cancelled = cancelled

    @property
    def reason(self) -> Optional[str]:
        """``user``, ``timeout``, ``shutdown``... once cancelled; else None."""
        return wit_cancellation.reason()

    def wait(self, seconds: float) -> bool:
        """Waits up to ``seconds``; returns True as soon as the request is
        cancelled, False when the time ran out (like ``threading.Event.wait``
        on the cancellation event)."""
        millis = max(0, int(round(float(seconds) * 1000)))
        return wit_cancellation.sleep(millis)

    def sleep(self, seconds: float) -> bool:
        """The same as :meth:`wait`."""
        return self.wait(seconds)

    def raise_if_cancelled(self) -> None:
        """Raises :class:`Cancelled` when the request has been cancelled."""
        if self.cancelled:
            raise Cancelled(self.reason)

    check = raise_if_cancelled

    def __repr__(self) -> str:
        return f"Cancellation(cancelled={self.cancelled!r})"


_CURRENT = Cancellation()


def current_cancellation() -> Cancellation:
    """The cancellation of the request the handler is serving."""
    return _CURRENT


def sleep(seconds: float) -> bool:
    """Waits up to ``seconds``; True when the request was cancelled first."""
    return _CURRENT.wait(seconds)
