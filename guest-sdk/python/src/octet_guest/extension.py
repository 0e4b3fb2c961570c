"""`Extension`: the process-based SDK's class, with its constructor, its
decorators and its properties; the host services are in the mixins
(:mod:`.hostcalls`, :mod:`.services`, :mod:`.agents`).

The app module runs once, when componentize-py builds the component, and
every instance starts from that snapshot: registration happens at build
time, and what the SDK learns from ``initialize`` (the API version, the
declared contributions, the negotiated features) is set in each instance
by its ``init``. What the shim does for the SDK (the stdio transport, the
reader and writer threads, admission, the drain) cannot be configured
from here; constructor arguments that would change it fail the build
naming why (see :mod:`.unavailable`).
"""

from __future__ import annotations

import inspect
import sys
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from . import hooks_v04, prompt, runtime, wit_version
from .agents import Agents
from .cancellation import CURRENT, CancellationToken
from .hostcalls import HostCalls
from .protocol import DEFAULT_MAX_MESSAGE_BYTES, Logger, RpcError
from .services import Services
from .unavailable import refuse
from .values import (
    API_V02_FEATURES,
    API_V04_FEATURES,
    EXTRA_FEATURES,
    LIFECYCLE_METHODS,
    parse_json,
)

Handler = Callable[..., Any]

_TYPED_MUTATION_HOOKS = frozenset({"provider_retry", "before_persistence", "post_mutation"})
# Features the shim negotiates; the SDK's others are never declared.
_SHIM_FEATURES = (frozenset(API_V02_FEATURES + EXTRA_FEATURES + API_V04_FEATURES)
                  - {"delegation_telemetry_v1"})
# The shim's own cap on concurrency (initialize.rs MAX_CONCURRENCY).
_SHIM_MAX_CONCURRENCY = 64
# The SDK's own refusal text stays octet's, byte for byte: apps written for
# octet's Python SDK get the same frames (the shim's own refusals, which no
# seed app can observe as its own, name where each SDK declares a feature).
_DECLARE_HINTS: dict = {}
# The SDK's defaults for what the shim does for it.
_PENDING, _SHUTDOWN, _GRACE = 64, 2.0, 0.25

# Every Extension made, in order; the component serves the last one.
EXTENSIONS: list = []


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict
    output_schema: Optional[dict]
    handler: Handler
    # API 0.4 (tool_prompt_metadata_v1), checked by `prompt.check`.
    prompt_snippet: Optional[str] = None
    prompt_guidelines: list = field(default_factory=list)


@dataclass
class Command:
    name: str
    description: str
    usage: Optional[str]
    handler: Handler


class Extension(HostCalls, Services, Agents):
    """Define an octet extension; octet-wasm runs it as a sandboxed
    component (build it with ``guest-sdk/python/build.py``)."""

    def __init__(
        self,
        legacy_name: Optional[str] = None,
        /,
        *,
        api_version: Optional[str] = None,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        logger: Optional[Logger] = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_concurrent_requests: Optional[int] = 8,
        max_pending_requests: int = _PENDING,
        writer_queue_size: int = 64,
        shutdown_timeout: float = _SHUTDOWN,
        cancellation_grace: float = _GRACE,
        supported_features: Optional[Sequence[str]] = None,
    ) -> None:
        if legacy_name is not None:
            from .deprecated import warn

            warn("Extension(name)")
        # The manifest's version, as octet's environment would select it.
        manifest_api = runtime.build_fact("api_version")
        if api_version and manifest_api and api_version != manifest_api:
            raise ValueError(
                f"Extension(api_version={api_version!r}) differs from api_version "
                f"{manifest_api!r} in {runtime.build_fact('manifest')}: octet initializes "
                "with the manifest's version, which this extension would refuse"
            )
        self._pinned_api = api_version or manifest_api
        self.api_version = self._pinned_api
        if max_concurrent_requests is None:
            max_concurrent_requests = 8
        if isinstance(max_concurrent_requests, bool) or max_concurrent_requests <= 0:
            raise ValueError("max_concurrent_requests must be greater than zero")
        if isinstance(max_pending_requests, bool) or max_pending_requests <= 0:
            raise ValueError("max_pending_requests must be greater than zero")
        if shutdown_timeout < 0 or cancellation_grace < 0:
            raise ValueError("shutdown timeouts cannot be negative")
        if writer_queue_size <= 0:
            raise ValueError("writer_queue_size must be greater than zero")
        if isinstance(max_message_bytes, bool) or max_message_bytes <= 0:
            raise ValueError("max_message_bytes must be greater than zero")
        if stdin is not None and stdin is not sys.stdin:
            refuse("Extension(stdin=...)")
        if stdout is not None and stdout is not sys.stdout:
            refuse("Extension(stdout=...)")
        if max_pending_requests != _PENDING:
            refuse("Extension(max_pending_requests=...)")
        if shutdown_timeout != _SHUTDOWN or cancellation_grace != _GRACE:
            refuse("Extension(shutdown_timeout=..., cancellation_grace=...)")
        self.stdin = stdin
        self.stdout = stdout
        self.logger = logger or Logger(stderr)
        self.log = self.logger
        self.max_message_bytes = max_message_bytes
        self.max_concurrent_requests = max_concurrent_requests
        self.max_pending_requests = max_pending_requests
        self.writer_queue_size = writer_queue_size
        self.shutdown_timeout = shutdown_timeout
        self.cancellation_grace = cancellation_grace
        selected = API_V02_FEATURES if supported_features is None else supported_features
        if not all(isinstance(feature, str) and feature for feature in selected):
            raise ValueError("supported_features must contain non-empty strings")
        unknown = (set(selected) - set(API_V02_FEATURES) - set(EXTRA_FEATURES)
                   - set(API_V04_FEATURES))
        if unknown:
            raise ValueError(f"unknown supported_features: {sorted(unknown)}")
        self._supported_features = tuple(dict.fromkeys(selected))

        self._tools: dict = {}
        self._commands: dict = {}
        self._hooks: dict = {}
        self._context_handler: Optional[Handler] = None
        self._status_handlers: dict = {}
        self._renderer_handlers: dict = {}
        self._lifecycle_handlers: dict = {}
        self._shutdown_handler: Optional[Handler] = None
        self._menu_handler: Optional[Handler] = None
        self._init_handlers: list = []
        # Handlers of tools outside the initial catalog, found by name in
        # every instance (see `dynamic_tool`).
        self._dynamic_handlers: dict = {}

        self._initialized = False
        self._initialization: Optional[dict] = None
        self._declared: dict = {}
        self._features: frozenset = frozenset()
        self._negotiated_concurrency = 1
        self._tool_catalog_revision = 0
        self._tool_catalogs: OrderedDict = OrderedDict()
        self._staged_tool_catalog: Optional[dict] = None
        self._staged_tool_catalog_revision: Optional[int] = None
        self._presentation_revision: Optional[int] = None
        EXTENSIONS.append(self)

    # --- state --------------------------------------------------------------

    @property
    def initialized(self) -> bool:
        return self._initialized

    @property
    def running(self) -> bool:
        """Whether this instance serves requests (the shim drives it)."""
        return self._initialized

    @property
    def initialization(self) -> Optional[dict]:
        return self._initialization

    @property
    def negotiated_features(self) -> frozenset:
        """The API 0.2 feature subset accepted during initialization."""
        return self._features

    @property
    def negotiated_concurrency(self) -> int:
        return self._negotiated_concurrency

    @property
    def cancellation(self) -> Optional[CancellationToken]:
        """The ambient cancellation token of the request being served."""
        scope = CURRENT.get()
        if scope is None or scope.extension is not self:
            return None
        return scope.cancellation

    @property
    def request_id(self) -> Any:
        """The ambient host request ID of the request being served."""
        scope = CURRENT.get()
        return scope.request_id if scope is not None and scope.extension is self else None

    @property
    def host(self) -> dict:
        if not self._initialization:
            return {}
        value = self._initialization.get("host")
        return dict(value) if isinstance(value, Mapping) else {}

    @property
    def workspace(self) -> Optional[str]:
        """The workspace path from ``initialize``; with ``filesystem =
        "workspace"`` the guest sees the workspace at this same path."""
        if not self._initialization:
            return None
        value = self._initialization.get("workspace")
        return value if isinstance(value, str) else None

    # --- registration -------------------------------------------------------

    def tool(self, legacy_name: Optional[str] = None, /, *, name: Optional[str] = None,
             description: Optional[str] = None, parameters: Optional[Mapping] = None,
             output_schema: Optional[Mapping] = None, prompt_snippet: Optional[str] = None,
             prompt_guidelines: Optional[Sequence[str]] = None) -> Callable[[Handler], Handler]:
        """A model tool. ``prompt_snippet`` (a line for the system prompt's
        list of tools) and ``prompt_guidelines`` (at most 16, for the model)
        are API 0.4's prompt metadata: each at most 1,024 UTF-8 bytes, LF
        and TAB the only control characters; they declare
        ``tool_prompt_metadata_v1``."""
        name, description = _legacy_positional("tool", legacy_name, name, description)
        self._validate_name("tool", name)
        if not isinstance(description, str) or not description.strip():
            raise ValueError("tool description must be non-empty")
        schema = dict(parameters) if parameters is not None else {"type": "object"}
        result_schema = dict(output_schema) if output_schema is not None else None
        self._require_v02_for("output_schema", result_schema is not None)
        snippet, guidelines = self._prompt_metadata(name, prompt_snippet, prompt_guidelines)

        def decorate(handler: Handler) -> Handler:
            if name in self._tools:
                raise ValueError(f"duplicate tool: {name}")
            self._tools[name] = Tool(name, description, schema, result_schema, handler,
                                     snippet, guidelines)
            return handler

        return decorate

    def dynamic_tool(self, *, name: str, description: str,
                     parameters: Optional[Mapping] = None,
                     output_schema: Optional[Mapping] = None,
                     prompt_snippet: Optional[str] = None,
                     prompt_guidelines: Optional[Sequence[str]] = None,
                     ) -> Callable[[Handler], Handler]:
        """octet-wasm's addition for tools outside the initial catalog: the
        handler is registered at module level, so every instance (each one
        of a concurrency pool, or the one replacing a trapped instance) can
        serve the tool once ``register_tool(name=...)`` (without a handler)
        or ``register_tools([{"name": ...}])`` adds it."""
        self._validate_name("tool", name)
        if not isinstance(description, str) or not description.strip():
            raise ValueError("tool description must be non-empty")
        snippet, guidelines = self._prompt_metadata(name, prompt_snippet, prompt_guidelines)

        def decorate(handler: Handler) -> Handler:
            if name in self._dynamic_handlers:
                raise ValueError(f"duplicate dynamic tool: {name}")
            self._dynamic_handlers[name] = Tool(
                name, description,
                dict(parameters) if parameters is not None else {"type": "object"},
                dict(output_schema) if output_schema is not None else None, handler,
                snippet, guidelines)
            return handler

        return decorate

    def command(self, legacy_name: Optional[str] = None, /, *, name: Optional[str] = None,
                description: Optional[str] = None,
                usage: Optional[str] = None) -> Callable[[Handler], Handler]:
        name, description = _legacy_positional("command", legacy_name, name, description)
        self._validate_name("command", name)
        if not isinstance(description, str) or not description.strip():
            raise ValueError("command description must be non-empty")
        if usage is not None and not isinstance(usage, str):
            raise TypeError("command usage must be a string or None")

        def decorate(handler: Handler) -> Handler:
            if name in self._commands:
                raise ValueError(f"duplicate command: {name}")
            self._commands[name] = Command(name, description, usage, handler)
            return handler

        return decorate

    def hook(self, name: str) -> Callable[[Handler], Handler]:
        self._validate_name("hook", name)
        self._require_v02_for(name, name in _TYPED_MUTATION_HOOKS)
        self._check_v04_hook(name)

        def decorate(handler: Handler) -> Handler:
            if name in self._hooks:
                raise ValueError(f"duplicate hook: {name}")
            self._hooks[name] = handler
            return handler

        return decorate

    def cache_warming_decision(self, handler: Handler) -> Handler:
        """The ``cache_warming_decision`` hook (API 0.4), typed: the handler
        gets the payload (and the context, if it takes two arguments) and
        returns ``"warm"``, ``"stop"`` or None for no opinion."""
        self._check_v04_hook("cache_warming_decision")
        if "cache_warming_decision" in self._hooks:
            raise ValueError("duplicate hook: cache_warming_decision")

        def advise(payload: Any, context: Any) -> dict:
            action = self._invoke(handler, payload, context)
            if isinstance(action, Mapping):
                return action
            return {"cache_warming_decision": action}

        self._hooks["cache_warming_decision"] = advise
        return handler

    def uses_composition(self) -> "Extension":
        """octet-wasm's addition: declares ``tool_composition_v1`` (API 0.4),
        which :mod:`octet_guest.composition` needs (the same as naming it in
        ``supported_features``)."""
        wit_version.require_0_4("tool composition (tool_composition_v1)")
        if "tool_composition_v1" not in self._supported_features:
            self._supported_features += ("tool_composition_v1",)
        return self

    def context(self, handler: Optional[Handler] = None) -> Any:
        def decorate(callback: Handler) -> Handler:
            if self._context_handler is not None:
                raise ValueError("duplicate context handler")
            self._context_handler = callback
            return callback

        return decorate(handler) if handler is not None else decorate

    def status(self, surface: Any = "status") -> Any:
        if callable(surface):
            return self._register_status("status", surface)
        self._validate_name("UI surface", surface)
        return lambda handler: self._register_status(surface, handler)

    def _register_status(self, surface: str, handler: Handler) -> Handler:
        if surface in self._status_handlers:
            raise ValueError(f"duplicate status handler: {surface}")
        self._status_handlers[surface] = handler
        return handler

    def renderer(self, name: str) -> Callable[[Handler], Handler]:
        self._validate_name("renderer", name)

        def decorate(handler: Handler) -> Handler:
            if name in self._renderer_handlers:
                raise ValueError(f"duplicate renderer: {name}")
            self._renderer_handlers[name] = handler
            return handler

        return decorate

    tool_renderer = renderer

    def on_lifecycle(self, event: str) -> Callable[[Handler], Handler]:
        """Subscribe to an observational API 0.2 lifecycle notification."""
        method = self._lifecycle_method(event)

        def decorate(handler: Handler) -> Handler:
            if method in self._lifecycle_handlers:
                raise ValueError(f"duplicate lifecycle handler: {method}")
            self._lifecycle_handlers[method] = handler
            return handler

        return decorate

    lifecycle = on_lifecycle

    def on_shutdown(self, handler: Handler) -> Handler:
        if self._shutdown_handler is not None:
            raise ValueError("duplicate shutdown handler")
        self._shutdown_handler = handler
        return handler

    def menu(self, handler: Optional[Handler] = None) -> Any:
        """octet-wasm's addition: answers ``menu/collect`` (API 0.2,
        manifest ``menu = true``) with the complete menu, or None for the
        host's generated one."""

        def decorate(callback: Handler) -> Handler:
            if self._menu_handler is not None:
                raise ValueError("duplicate menu handler")
            self._menu_handler = callback
            return callback

        return decorate(handler) if handler is not None else decorate

    def on_init(self, handler: Handler) -> Handler:
        """octet-wasm's addition: runs in each instance once ``initialize``
        is known, before its first request (the app module itself ran at
        build time)."""
        self._init_handlers.append(handler)
        return handler

    # --- checks shared by the host services ---------------------------------

    def _require_initialized(self) -> None:
        if not self._initialized:
            raise RpcError(-32600, "initialize must be the first request")

    def _require_capability(self, capability: str) -> None:
        self._require_initialized()
        if self._declared.get(capability) is not True:
            raise RpcError(-32601, f"{capability} are not declared")

    def _require_feature(self, feature: str) -> None:
        self._require_initialized()
        if not self._feature_wire() or feature not in self._features:
            raise RpcError(-32601, f"API 0.2 feature is not negotiated: {feature}"
                           + _DECLARE_HINTS.get(feature, ""))

    def _feature_wire(self) -> bool:
        """Whether the host speaks the feature-negotiated wire (API 0.2, and
        the later versions that reuse it), not the frozen 0.1 one."""
        return self.api_version is not None and self.api_version != "0.1"

    def _require_v02_for(self, what: str, needed: bool) -> None:
        # Before init the version is the manifest's (or unknown: checked
        # again by init, when the host names it).
        if needed and self.api_version == "0.1":
            raise ValueError(f"{what} requires extension API 0.2")

    def _require_v04_for(self, what: str) -> None:
        # As `_require_v02_for`: the manifest's version, or unknown yet.
        if self.api_version in ("0.1", "0.2"):
            raise ValueError(f"{what} requires extension API 0.4")

    def _prompt_metadata(self, tool: str, snippet: Any, guidelines: Any) -> tuple:
        """A tool's checked prompt metadata (None and [] when it has none)."""
        if snippet is None and (guidelines is None or (isinstance(guidelines, (list, tuple))
                                                       and not guidelines)):
            return None, []
        self._require_v04_for("tool prompt metadata (prompt_snippet, prompt_guidelines)")
        wit_version.require_0_4("tool prompt metadata (prompt_snippet, prompt_guidelines)")
        return prompt.check(tool, snippet, guidelines)

    def _check_v04_hook(self, name: str) -> None:
        """API 0.4's hooks: only for a 0.4 extension, with a result the
        component can carry; the ones octet-wasm cannot serve fail the
        build with the reason."""
        if name in hooks_v04.UNSERVED:
            from .unavailable import UnsupportedInComponent

            raise UnsupportedInComponent(
                f"hook {name} is not available in an octet-wasm component: it needs "
                f"protocol feature {hooks_v04.UNSERVED[name]}, which octet-wasm does not "
                "implement (docs/api-0.4.md, \"Hooks only a 0.4 manifest may declare\")")
        if name not in hooks_v04.SERVED:
            return
        self._require_v04_for(name)
        if hooks_v04.SERVED[name] is not None:
            wit_version.require_0_4(f"hook {name}")

    @staticmethod
    def _validate_name(kind: str, name: Any) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{kind} name must be non-empty")

    @staticmethod
    def _lifecycle_method(event: Any) -> str:
        if not isinstance(event, str):
            raise TypeError("lifecycle event must be a string")
        method = event.replace("_", "/")
        if method not in LIFECYCLE_METHODS:
            raise ValueError(f"unknown lifecycle event: {event}")
        return method

    @staticmethod
    def _invoke(handler: Handler, *args: Any) -> Any:
        """Calls ``handler`` with as many of ``args`` as it takes."""
        try:
            signature = inspect.signature(handler)
        except (TypeError, ValueError):
            return handler(*args)
        parameters = signature.parameters.values()
        if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in parameters):
            return handler(*args)
        positional = [
            p for p in parameters
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                          inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        if len(positional) >= len(args):
            return handler(*args)
        if len(positional) == 1:
            return handler(args[0])
        return handler()

    # --- the component's view ------------------------------------------------

    def _declared_features(self) -> list:
        """The features ``describe`` declares: every supported one (the
        shim negotiates those the host offers), ``lifecycle_events`` only
        with a lifecycle handler; none on API 0.1."""
        if self._pinned_api == "0.1":
            return []
        features = [f for f in self._supported_features if f in _SHIM_FEATURES]
        if not self._lifecycle_handlers:
            features = [f for f in features if f != "lifecycle_events"]
        tools = list(self._tools.values()) + list(self._dynamic_handlers.values())
        if any(prompt.has(tool) for tool in tools) and prompt.FEATURE not in features:
            # The shim selects it for the initial catalog itself; declared,
            # tools registered at run time keep their metadata too.
            features.append(prompt.FEATURE)
        return features

    def _declared_concurrency(self) -> int:
        return 1 if self._pinned_api == "0.1" else int(self.max_concurrent_requests)

    def _start(self, api_version: str, features: list, initialize: str) -> None:
        """What ``initialize`` settled, for this instance (WIT ``init``)."""
        if self._pinned_api is not None and self._pinned_api != api_version:
            raise RpcError(
                -32000,
                f"unsupported API version: host requested {api_version!r}, "
                f"SDK implements {self._pinned_api!r}",
            )
        self.api_version = api_version
        if api_version == "0.1":
            for tool in self._tools.values():
                self._require_v02_for("output_schema", tool.output_schema is not None)
            for hook in self._hooks:
                self._require_v02_for(hook, hook in _TYPED_MUTATION_HOOKS)
        params = parse_json(initialize, default={})
        params = params if isinstance(params, dict) else {}
        contributes = params.get("contributes", {})
        self._declared = dict(contributes) if isinstance(contributes, Mapping) else {}
        self._features = frozenset(features) if self._feature_wire() else frozenset()
        if self._feature_wire():
            protocol = params.get("protocol") if isinstance(params.get("protocol"), Mapping) else {}
            limits = protocol.get("limits") if isinstance(protocol.get("limits"), Mapping) else {}
            requested = limits.get("max_concurrent_requests", 1)
            self._negotiated_concurrency = min(int(requested), self._declared_concurrency(),
                                               _SHIM_MAX_CONCURRENCY)
        else:
            self._negotiated_concurrency = 1
        self._tool_catalogs.clear()
        if "dynamic_tools" in self._features:
            self._tool_catalogs[0] = dict(self._tools)
        self._initialization = params
        self._initialized = True
        runtime.start_serving()
        for handler in self._init_handlers:
            self._invoke(handler)


def _legacy_positional(kind: str, legacy_name: Optional[str], name: Optional[str],
                       description: Optional[str]) -> tuple:
    """0.1's ``@ext.tool("name", description=...)``: the name may come
    first, positionally (deprecated); the description defaults to the name
    there, as it did."""
    if legacy_name is None:
        if name is None or description is None:
            raise TypeError(f"ext.{kind}() needs name= and description=")
        return name, description
    if name is not None:
        raise TypeError(f"ext.{kind}() got the name twice")
    from .deprecated import warn

    warn(f'@ext.{kind}("name", ...)')
    return legacy_name, description if description is not None else legacy_name


def served_extension() -> Extension:
    """The extension the component serves: the last one the app made."""
    if not EXTENSIONS:
        raise RuntimeError(
            "the app module made no Extension: create one at module level "
            "(ext = Extension()) and register its handlers with ext's decorators"
        )
    return EXTENSIONS[-1]
