"""What an extension built into a sandboxed component cannot do, and why.

The app module runs at build time, so each of these fails the build with a
sentence naming the call and the reason, instead of behaving differently
from the process-based SDK at run time: names of the SDK's package that
belong to the stdio transport, to API 0.3, or to the parts of API 0.4 this
SDK cannot back yet (through the package's ``__getattr__``), constructor
arguments that configure what the shim does, and methods that would speak
the wire directly.
"""

from __future__ import annotations

# The shim, not the extension, speaks the protocol: it owns stdin and
# stdout, admission, the writer and the drain.
_WIRE = (
    "octet-wasm owns the protocol stream: it reads the host's frames, "
    "admits requests (64 at most), writes every frame and drains at "
    "shutdown itself, so a sandboxed component has no stdio transport to "
    "configure"
)
_OTHER_API = (
    "octet-wasm runs API 0.1, 0.2 and 0.4 extensions; this belongs to API {api}, "
    "which the shim does not speak"
)
# API 0.4 names the shim speaks but this SDK cannot back yet: each says
# what is missing and where it exists.
_DIAGNOSTICS = (
    "octet-wasm's Python SDK does not offer API 0.4's typed diagnostics "
    "(the octet_diagnostics_v1 tool-result metadata) yet, and no other "
    "octet-wasm SDK does either; report problems as text content"
)
_RESOURCES = (
    "octet-wasm does not negotiate API 0.4's native resources "
    "(resource_refs_v1; docs/api-0.4.md, \"What octet-wasm does not negotiate\"), "
    "so octet-wasm's Python SDK does not offer them"
)

REASONS = {
    "Extension(stdin=...)": _WIRE,
    "Extension(stdout=...)": _WIRE,
    "Extension(max_pending_requests=...)": _WIRE,
    "Extension(shutdown_timeout=..., cancellation_grace=...)": (
        "octet-wasm drains in-flight requests for up to 1 s on shutdown (2 s on stdin "
        "EOF) and gives cancelled handlers its cancellation grace, so the "
        "acknowledgement always fits the host's 2 s stage; a component cannot change "
        "either"
    ),
    "Extension.request()": (
        "a sandboxed component reaches the host only through the shim's typed "
        "services (confirm, request_input, progress, publish_artifact, "
        "evaluate_policy, get_secret, the tool catalog, presentation, agents), each "
        "checked before anything is written; there is no raw host request"
    ),
    "Extension.handle_message()": _WIRE,
    "Extension.run(stdin=..., stdout=...)": _WIRE,
    "JsonRpcTransport": _WIRE,
    "BusEnvelope": _OTHER_API.format(api="0.3 (the event bus)"),
    "BusError": _OTHER_API.format(api="0.3 (the event bus)"),
    "BusLimits": _OTHER_API.format(api="0.3 (the event bus)"),
    "BoundedQueue": _OTHER_API.format(api="0.3 (the event bus)"),
    "DEFAULT_LIMITS": _OTHER_API.format(api="0.3 (the event bus)"),
    "EventBusKernel": _OTHER_API.format(api="0.3 (the event bus)"),
    "FieldSpec": _OTHER_API.format(api="0.3 (the event bus)"),
    "HostEventBus": _OTHER_API.format(api="0.3 (the event bus)"),
    "TopicRegistry": _OTHER_API.format(api="0.3 (the event bus)"),
    "TopicSpec": _OTHER_API.format(api="0.3 (the event bus)"),
}

#: Submodules of the SDK's package that a component cannot import.
MODULES = {
    "api_v03": _OTHER_API.format(api="0.3"),
    "event_bus": _OTHER_API.format(api="0.3 (the event bus)"),
    "diagnostics": _DIAGNOSTICS,
    "resources": _RESOURCES,
}


class UnsupportedInComponent(RuntimeError):
    """Something the process-based SDK offers that a sandboxed component
    cannot do; raised while the app module runs, so the build fails."""


def message(what: str) -> str:
    return f"{what} is not available in an octet-wasm component: {REASONS[what]}"


def refuse(what: str) -> None:
    raise UnsupportedInComponent(message(what))


def missing_name(package: str, name: str) -> Exception:
    """The error for a missing attribute of the SDK's package: for a name
    above, an ``ImportError`` with the reason (``from <package> import
    <name>`` fails the build with it); for any other, the usual
    ``AttributeError`` (so submodule imports still work)."""
    if name in REASONS:
        return ImportError(f"{package}.{message(name)}", name=name)
    return AttributeError(f"module {package!r} has no attribute {name!r}")
