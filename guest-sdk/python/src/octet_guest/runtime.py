"""Where the SDK is running: at build time (componentize-py imports the app
module once and snapshots it) or serving requests in an instance.

The difference matters because the host imports only work in an instance,
and because facts a process-based extension reads from its environment at
start (the manifest's ``api_version`` and ``name``) are only known to the
build: ``build.py`` reads the manifest beside the app and hands them over
through :func:`configure` before the app module is imported.
"""

from __future__ import annotations

from typing import Any, Optional

_SERVING = False
_BUILD: dict = {}


def configure(*, name: Optional[str] = None, api_version: Optional[str] = None,
              manifest: Optional[str] = None) -> None:
    """Records the build's manifest facts (called by the generated entry
    module, before the app is imported)."""
    _BUILD.update(name=name, api_version=api_version, manifest=manifest)


def build_fact(key: str) -> Any:
    """A manifest fact of the build (``name``, ``api_version``,
    ``manifest``), or None when the app was built without a manifest."""
    return _BUILD.get(key)


def serving() -> bool:
    """Whether this is an instance serving requests (after ``init``)."""
    return _SERVING


def start_serving() -> None:
    global _SERVING
    _SERVING = True


def host_log(level: str, message: str, fields: Optional[str]) -> None:
    """One record through the WIT ``log`` import (imported here: this
    module is also loaded by the build tools, without the bindings)."""
    from wit_world.imports import host

    levels = {
        "debug": host.LogLevel.DEBUG,
        "info": host.LogLevel.INFO,
        "warning": host.LogLevel.WARNING,
        "error": host.LogLevel.ERROR,
    }
    host.log(levels[level], message, fields)
