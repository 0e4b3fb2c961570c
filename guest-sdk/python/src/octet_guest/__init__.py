"""octet_guest: octet extensions in Python, built into WebAssembly components
by componentize-py and run sandboxed by octet-wasm.

The API is octet's process-based Python SDK (``octet_extension``, which is
also importable under that name), so an app written for it builds
unchanged::

    from octet_extension import Extension

    ext = Extension()

    @ext.tool(name="hello", description="Greet someone")
    def hello(args):
        return f"Hello, {args.get('name', 'world')}!"

    if __name__ == "__main__":
        ext.run()

The app module runs at build time (``build.py``); the build adds the
component's exports (:mod:`octet_guest.component`). What a sandboxed
component cannot do fails the build with the reason
(:mod:`octet_guest.unavailable`).
"""

#: The SDK's version (README, "Versions and compatibility").
__version__ = "0.2.0"

from .cancellation import CancellationToken, current_cancellation, current_request_id
from .errors import REQUEST_CANCELLED, CancelledError
from .extension import Extension
from .hooks_v04 import (
    CacheWarmingAction,
    CacheWarmingDecision,
    CacheWarmingDecisionHandler,
    CacheWarmingDecisionPayload,
    CacheWarmingDecisionResult,
    cache_warming_decision,
    compaction_frames,
    provider_headers,
    provider_payload,
)
from .prompt import MAX_PROMPT_GUIDELINES, MAX_PROMPT_TEXT_BYTES
from .protocol import (
    DEFAULT_API_VERSION,
    DEFAULT_MAX_MESSAGE_BYTES,
    Logger,
    ProtocolError,
    RpcError,
)
from .unavailable import UnsupportedInComponent, missing_name
from .values import (
    API_V02_FEATURES,
    API_V04_FEATURES,
    LIFECYCLE_METHODS,
    MAX_INPUT_PROMPT_BYTES,
    MAX_INPUT_VALUE_BYTES,
    MAX_POST_MUTATION_RESOURCES,
    MAX_PROGRESS_DECORATION_DETAIL_BYTES,
    MAX_PROGRESS_DECORATION_LABEL_BYTES,
    MAX_SECRET_VALUE_BYTES,
    audio_content,
    image_content,
    persistence_metadata,
    post_mutation_rescan,
    provider_retry_delay,
    text_content,
    tool_result,
)

__all__ = [
    "API_V02_FEATURES",
    "API_V04_FEATURES",
    "CacheWarmingAction",
    "CacheWarmingDecision",
    "CacheWarmingDecisionHandler",
    "CacheWarmingDecisionPayload",
    "CacheWarmingDecisionResult",
    "MAX_PROMPT_GUIDELINES",
    "MAX_PROMPT_TEXT_BYTES",
    "cache_warming_decision",
    "compaction_frames",
    "provider_headers",
    "provider_payload",
    "DEFAULT_API_VERSION",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "LIFECYCLE_METHODS",
    "MAX_INPUT_PROMPT_BYTES",
    "MAX_INPUT_VALUE_BYTES",
    "MAX_POST_MUTATION_RESOURCES",
    "MAX_PROGRESS_DECORATION_DETAIL_BYTES",
    "MAX_PROGRESS_DECORATION_LABEL_BYTES",
    "MAX_SECRET_VALUE_BYTES",
    "REQUEST_CANCELLED",
    "CancellationToken",
    "CancelledError",
    "Extension",
    "Logger",
    "ProtocolError",
    "RpcError",
    "UnsupportedInComponent",
    "audio_content",
    "current_cancellation",
    "current_request_id",
    "image_content",
    "persistence_metadata",
    "post_mutation_rescan",
    "provider_retry_delay",
    "text_content",
    "tool_result",
]


def __getattr__(name: str):
    """0.1's names (:mod:`octet_guest.deprecated`) still work, warning once
    with their replacement; the SDK's names a component cannot have fail
    the build with the reason (an ImportError from ``from octet_guest
    import NAME``)."""
    from .renamed import NAMES

    if name in NAMES:
        from .deprecated import lookup

        return lookup(name)
    raise missing_name(__name__, name)
