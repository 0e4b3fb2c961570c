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
cancellation of handlers that never look, and every bound of the API 0.2
services (:mod:`octet_guest.services`).
"""

from .agents import (
    AGENT_TOOLS,
    follow_up_agent,
    interrupt_agent,
    list_agents,
    list_models,
    message_agent,
    spawn_agent,
    wait_agents,
)
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
from .services import (
    MIME_TYPES,
    CatalogUpdate,
    Verdict,
    current_tools,
    evaluate_policy,
    get_secret,
    intent,
    publish_artifact,
    register_tools,
    tool_definition,
    unregister_tools,
    update_presentation,
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
    "AGENT_TOOLS",
    "AttrDict",
    "Cancellation",
    "Cancelled",
    "CancelledError",
    "CatalogUpdate",
    "Context",
    "Extension",
    "ExtensionCancelled",
    "ExtensionError",
    "HostError",
    "InvalidParams",
    "JsonRpcError",
    "MIME_TYPES",
    "RpcError",
    "ToolError",
    "Verdict",
    "audio_content",
    "confirm",
    "contribute_context",
    "contribute_status",
    "current_cancellation",
    "current_tools",
    "evaluate_policy",
    "follow_up_agent",
    "get_secret",
    "hook_result",
    "image_content",
    "intent",
    "interrupt_agent",
    "list_agents",
    "list_models",
    "log",
    "message_agent",
    "notify",
    "progress",
    "publish_artifact",
    "register_tools",
    "request_input",
    "sleep",
    "spawn_agent",
    "text_content",
    "tool_definition",
    "tool_result",
    "unregister_tools",
    "update_presentation",
    "wait_agents",
]
