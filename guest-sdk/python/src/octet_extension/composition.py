"""``octet_extension.composition``: :mod:`octet_guest.composition` under the
SDK's package name (API 0.4 tool composition; octet-wasm's addition)."""

from octet_guest.composition import (  # noqa: F401
    FEATURE,
    StreamingCall,
    call,
    call_streaming,
    context,
    store,
)

__all__ = ["FEATURE", "StreamingCall", "call", "call_streaming", "context", "store"]
