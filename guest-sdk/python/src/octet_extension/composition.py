"""``octet_extension.composition``: :mod:`octet_guest.composition` under the
SDK's package name (API 0.4 tool composition; octet-wasm's addition)."""

from octet_guest.composition import FEATURE, call, context, store  # noqa: F401

__all__ = ["FEATURE", "call", "context", "store"]
