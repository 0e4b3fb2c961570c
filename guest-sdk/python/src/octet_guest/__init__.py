"""octet_guest: octet extensions in Python, built into WebAssembly components
by componentize-py and run sandboxed by octet-wasm.

The authoring API is the process-based Python SDK's (``octet_extension``,
also importable under that name)::

    from octet_guest import Extension

    ext = Extension("hello")

    @ext.tool("hello", description="Greet someone")
    def hello(args):
        return f"Hello, {args.get('name', 'world')}!"

The app module only registers; the build step (``build.py``) adds the
component's exports (:mod:`octet_guest.component`). What the SDK leaves to
the shim: the wire, the manifest checks, feature negotiation, deadlines and
cancellation of handlers that never look.
"""

from .cancellation import Cancellation, current_cancellation, sleep
from .errors import (
    Cancelled,
    CancelledError,
    ExtensionCancelled,
    ExtensionError,
    HostError,
    InvalidParams,
    JsonRpcError,
    RpcError,
    ToolError,
)
from .extension import Extension
from .host import (
    confirm,
    contribute_context,
    contribute_status,
    log,
    notify,
    progress,
    request_input,
)
from .values import (
    AttrDict,
    Context,
    audio_content,
    hook_result,
    image_content,
    text_content,
    tool_result,
)

__all__ = [
    "AttrDict",
    "Cancellation",
    "Cancelled",
    "CancelledError",
    "Context",
    "Extension",
    "ExtensionCancelled",
    "ExtensionError",
    "HostError",
    "InvalidParams",
    "JsonRpcError",
    "RpcError",
    "ToolError",
    "audio_content",
    "confirm",
    "contribute_context",
    "contribute_status",
    "current_cancellation",
    "hook_result",
    "image_content",
    "log",
    "notify",
    "progress",
    "request_input",
    "sleep",
    "text_content",
    "tool_result",
]
