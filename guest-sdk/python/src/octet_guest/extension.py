"""`Extension`: the registry an app module fills in with decorators, and the
``describe`` answer built from it.

The app module runs once, when ``componentize-py`` builds the component
(its state is snapshotted), so registering at import time is free at run
time. Every instance of the component starts from that snapshot: state kept
in module globals lasts as long as the instance.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

from wit_world.imports import types as wit

from . import agents, host, services
from .values import lifecycle_kind, to_json

Handler = Callable[..., Any]

# Every Extension made, in order; the component serves the last one.
_EXTENSIONS: List["Extension"] = []

# What the process-based SDK calls a tool's default parameters.
DEFAULT_PARAMETERS: Dict[str, Any] = {"type": "object"}


def _arity(function: Handler) -> int:
    """How many positional arguments ``function`` takes (large for ``*args``)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    count = 0
    for parameter in parameters:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            return 1 << 16
        if parameter.kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            count += 1
    return count


class _Registered:
    """A handler with the number of arguments it takes: ``(input)`` or
    ``(input, ctx)`` (or none at all)."""

    __slots__ = ("function", "arity")

    def __init__(self, function: Handler) -> None:
        if not callable(function):
            raise TypeError(f"a handler must be callable, not {function!r}")
        self.function = function
        self.arity = _arity(function)

    def __call__(self, *args: Any) -> Any:
        return self.function(*args[: self.arity])


class Extension:
    """An octet extension: register handlers with the decorators, then build
    the module with ``componentize-py`` (see the README).

    ``name`` should equal the manifest's ``name``. The other keywords of the
    process-based SDK (``version``, ``api_version``, ``description``) are
    accepted and ignored: the manifest decides them.
    """

    def __init__(self, name: str, *, max_concurrency: int = 1,
                 features: Optional[List[str]] = None, **_manifest_facts: Any) -> None:
        self.name = name
        self.max_concurrency = max_concurrency
        self._features: List[str] = []
        for feature in features or []:
            self.uses_feature(feature)
        self._tools: Dict[str, Tuple[wit.ToolDefinition, _Registered]] = {}
        # Tools with a handler but not in the described catalog (revision 0):
        # offered once `register_tools` adds them.
        self._dynamic_tools: Dict[str, Tuple[wit.ToolDefinition, _Registered]] = {}
        self._commands: Dict[str, Tuple[wit.CommandDefinition, _Registered]] = {}
        self._hooks: Dict[str, _Registered] = {}
        self._context: Optional[_Registered] = None
        self._status: Dict[str, _Registered] = {}
        self._renderers: Dict[str, _Registered] = {}
        self._menu: Optional[_Registered] = None
        self._lifecycle: Dict[Any, List[_Registered]] = {}
        self._init: List[_Registered] = []
        self._shutdown: List[_Registered] = []
        # Filled in by `init`.
        self.api_version: Optional[str] = None
        self.features: List[str] = []
        self.workspace: Optional[str] = None
        self.initialize_params: Dict[str, Any] = {}
        _EXTENSIONS.append(self)

    # --- settings ---------------------------------------------------------

    @property
    def max_concurrency(self) -> int:
        """How many requests may run at once (default 1). Above 1 the shim
        runs tool calls on a pool of separate instances, each with its own
        memory: module state is then per instance."""
        return self._max_concurrency

    @max_concurrency.setter
    def max_concurrency(self, value: int) -> None:
        self._max_concurrency = max(1, int(value))

    def uses_feature(self, *features: str) -> "Extension":
        """Declares optional API 0.2 features the extension uses (e.g.
        ``request_progress``). The shim negotiates exactly these, plus
        ``request_cancellation`` and ``content_parts``, which it always
        speaks; ``lifecycle_events`` is added when a lifecycle handler
        exists."""
        for feature in features:
            if feature not in self._features:
                self._features.append(feature)
        return self

    def uses_progress(self) -> "Extension":
        """Declares ``request_progress``, needed by :meth:`progress`."""
        return self.uses_feature("request_progress")

    def uses_progress_decoration(self) -> "Extension":
        """Declares ``request_progress`` and ``progress_decoration``."""
        return self.uses_feature("request_progress", "progress_decoration")

    def uses_artifacts(self) -> "Extension":
        """Declares ``artifacts``, needed by :meth:`publish_artifact` and by
        image and audio parts."""
        return self.uses_feature("artifacts")

    def uses_dynamic_tools(self) -> "Extension":
        """Declares ``dynamic_tools``, needed by :meth:`register_tools`,
        :meth:`unregister_tools` and :meth:`current_tools`."""
        return self.uses_feature("dynamic_tools")

    def uses_secrets(self) -> "Extension":
        """Declares ``secrets``, needed by :meth:`get_secret` (the host
        offers it only with a non-empty ``[capabilities] secrets``)."""
        return self.uses_feature("secrets")

    def uses_policy(self) -> "Extension":
        """Declares ``policy_intents``, needed by :meth:`evaluate_policy`."""
        return self.uses_feature("policy_intents")

    def uses_approvals(self) -> "Extension":
        """Declares ``policy_intents`` and ``approvals`` (approval tokens)."""
        return self.uses_policy().uses_feature("approvals")

    def uses_agents(self, model_selection: bool = False) -> "Extension":
        """Declares ``agent_sessions`` (child agents), and with
        ``model_selection`` also ``agent_model_selection_v1`` (choosing a
        child's model, :meth:`list_models`)."""
        self.uses_feature("agent_sessions")
        return self.uses_feature("agent_model_selection_v1") if model_selection else self

    def has_feature(self, feature: str) -> bool:
        """Whether ``feature`` was negotiated (known after ``init``)."""
        return feature in self.features

    # --- registration -----------------------------------------------------

    def tool(self, name: str, description: Optional[str] = None,
             parameters: Optional[Dict[str, Any]] = None, *,
             output_schema: Optional[Dict[str, Any]] = None) -> Callable[[Handler], Handler]:
        """Registers a tool. The handler takes the arguments (a dict), and
        optionally the call :class:`Context`; it returns a string, a
        :func:`tool_result`, a content part or a list of parts. Exceptions
        become an ``is_error`` result with their text; raise
        :class:`InvalidParams` for -32602, :class:`Cancelled` for -32800."""

        return self._tool_decorator(self._tools, name, description, parameters, output_schema)

    def dynamic_tool(self, name: str, description: Optional[str] = None,
                     parameters: Optional[Dict[str, Any]] = None, *,
                     output_schema: Optional[Dict[str, Any]] = None
                     ) -> Callable[[Handler], Handler]:
        """Registers the handler of a tool that is not in the initial
        catalog (API 0.2, ``dynamic_tools``; see :meth:`uses_dynamic_tools`):
        it is offered once :meth:`register_tools` adds it by name, and its
        calls then reach this handler. Register at module level, so every
        instance can serve it. Handlers work as for :meth:`tool`."""
        return self._tool_decorator(
            self._dynamic_tools, name, description, parameters, output_schema
        )

    def _tool_decorator(self, registry: Dict[str, Any], name: str,
                        description: Optional[str], parameters: Optional[Dict[str, Any]],
                        output_schema: Optional[Dict[str, Any]]) -> Callable[[Handler], Handler]:
        def register(function: Handler) -> Handler:
            if name in self._tools or name in self._dynamic_tools:
                raise ValueError(f"tool {name!r} is registered twice")
            text = description or _doc(function) or name
            definition = wit.ToolDefinition(
                name,
                text,
                to_json(DEFAULT_PARAMETERS if parameters is None else parameters),
                None if output_schema is None else to_json(output_schema),
            )
            registry[name] = (definition, _Registered(function))
            return function

        return register

    def _tool_handler(self, name: str) -> Optional["_Registered"]:
        entry = self._tools.get(name) or self._dynamic_tools.get(name)
        return None if entry is None else entry[1]

    def _definitions(self) -> Dict[str, wit.ToolDefinition]:
        """Every tool definition this extension registered, by name."""
        known = {name: entry[0] for name, entry in self._tools.items()}
        known.update((name, entry[0]) for name, entry in self._dynamic_tools.items())
        return known

    def command(self, name: str, description: Optional[str] = None,
                usage: Optional[str] = None) -> Callable[[Handler], Handler]:
        """Registers a slash command (``name`` without the ``/``). The handler
        takes the arguments (a list of strings) and optionally the context;
        it returns the text, None, or ``{"text", "notifications",
        "context"}``."""

        def register(function: Handler) -> Handler:
            _unique(self._commands, name, "command")
            text = description or _doc(function) or name
            definition = wit.CommandDefinition(name, text, usage)
            self._commands[name] = (definition, _Registered(function))
            return function

        return register

    def hook(self, name: str) -> Callable[[Handler], Handler]:
        """Handles a hook (``before_prompt``, ``before_tool_call``...). The
        handler takes the payload (a dict) and optionally the context; it
        returns None (continue) or a :func:`hook_result` / wire-shaped dict."""

        def register(function: Handler) -> Handler:
            _unique(self._hooks, name, "hook")
            self._hooks[name] = _Registered(function)
            return function

        return register

    def context(self, function: Optional[Handler] = None) -> Any:
        """Answers ``context/collect`` (``@ext.context`` or
        ``@ext.context()``). The handler takes the prompt (or None) and
        optionally the context; it returns None, one ``{"label", "content",
        "placement"}`` dict or a list of them."""

        def register(handler: Handler) -> Handler:
            if self._context is not None:
                raise ValueError("the context handler is registered twice")
            self._context = _Registered(handler)
            return handler

        return register if function is None else register(function)

    def status(self, surface: str = "status") -> Callable[[Handler], Handler]:
        """Answers ``status/collect`` for ``surface`` (``status``, ``header``
        or ``footer``). The handler takes the surface and optionally the
        context; it returns None (nothing shown), the text, or
        ``{"text", "style_role", "priority", "surface"}``."""

        def register(function: Handler) -> Handler:
            _unique(self._status, surface, "status surface")
            self._status[surface] = _Registered(function)
            return function

        return register

    def renderer(self, tool: str) -> Callable[[Handler], Handler]:
        """Renders calls of ``tool``. The handler takes the request
        (``name``, ``arguments``, ``output`` — None while there is none —
        and ``is_error``) and optionally the context; it returns a string,
        ``{"text", "style_role"}``, a list of them, or None."""

        def register(function: Handler) -> Handler:
            _unique(self._renderers, tool, "renderer")
            self._renderers[tool] = _Registered(function)
            return function

        return register

    def menu(self, function: Optional[Handler] = None) -> Any:
        """Answers ``menu/collect`` (API 0.2, manifest ``menu = true``) with the
        complete menu as a dict, or None for the host's generated one. The
        handler optionally takes the context; the host waits at most 5 s."""

        def register(handler: Handler) -> Handler:
            if self._menu is not None:
                raise ValueError("the menu handler is registered twice")
            self._menu = _Registered(handler)
            return handler

        return register if function is None else register(function)

    def on_lifecycle(self, *methods: Any) -> Any:
        """Observes lifecycle events: ``@ext.on_lifecycle("turn/started",
        "turn/settled")`` (``turn_settled`` spellings too); bare
        ``@ext.on_lifecycle`` observes all six. The handler takes the event
        (its params plus ``method``, keys readable as attributes). Adds the
        ``lifecycle_events`` feature; exceptions are logged."""
        if len(methods) == 1 and callable(methods[0]):
            return self._register_lifecycle(list(_ALL_LIFECYCLE), methods[0])
        kinds = [lifecycle_kind(method) for method in methods] or list(_ALL_LIFECYCLE)
        return lambda function: self._register_lifecycle(kinds, function)

    def _register_lifecycle(self, kinds: List[Any], function: Handler) -> Handler:
        registered = _Registered(function)
        for kind in kinds:
            self._lifecycle.setdefault(kind, []).append(registered)
        return function

    def on_init(self, function: Handler) -> Handler:
        """Runs once per instance before its first request, after
        :attr:`api_version`, :attr:`features` and :attr:`workspace` are set."""
        self._init.append(_Registered(function))
        return function

    def on_shutdown(self, function: Handler) -> Handler:
        """Runs at graceful shutdown, after in-flight requests finished."""
        self._shutdown.append(_Registered(function))
        return function

    # --- host services ----------------------------------------------------

    def notify(self, *args: Any, **kwargs: Any) -> None:
        """See :func:`octet_guest.host.notify`."""
        host.notify(*args, **kwargs)

    def confirm(self, prompt: str, detail: Optional[str] = None, **kwargs: Any) -> bool:
        """See :func:`octet_guest.host.confirm`."""
        return host.confirm(prompt, detail, **kwargs)

    def request_input(self, prompt: str, secret: bool = False) -> Optional[str]:
        """See :func:`octet_guest.host.request_input`."""
        return host.request_input(prompt, secret)

    def progress(self, *args: Any, **kwargs: Any) -> None:
        """See :func:`octet_guest.host.progress`."""
        host.progress(*args, **kwargs)

    def log(self, level: str, message: str, **fields: Any) -> None:
        """See :func:`octet_guest.host.log`."""
        host.log(level, message, **fields)

    def contribute_context(self, item: Any) -> None:
        """See :func:`octet_guest.host.contribute_context`."""
        host.contribute_context(item)

    def contribute_status(self, item: Any, surface: str = "status") -> None:
        """See :func:`octet_guest.host.contribute_status`."""
        host.contribute_status(item, surface)

    # --- API 0.2 host services (see octet_guest.services) ------------------

    def publish_artifact(self, mime_type: str, data: bytes) -> str:
        """See :func:`octet_guest.services.publish_artifact`."""
        return services.publish_artifact(mime_type, data)

    def register_tools(self, tools: Any) -> "services.CatalogUpdate":
        """See :func:`octet_guest.services.register_tools`; names are looked
        up among this extension's tools."""
        return services.register_tools(tools, self._definitions())

    def unregister_tools(self, names: Any) -> "services.CatalogUpdate":
        """See :func:`octet_guest.services.unregister_tools`."""
        return services.unregister_tools(names)

    def current_tools(self) -> "services.CatalogUpdate":
        """See :func:`octet_guest.services.current_tools`."""
        return services.current_tools()

    def get_secret(self, name: str) -> str:
        """See :func:`octet_guest.services.get_secret`."""
        return services.get_secret(name)

    def evaluate_policy(self, intent: Any, token: Optional[str] = None) -> "services.Verdict":
        """See :func:`octet_guest.services.evaluate_policy`."""
        return services.evaluate_policy(intent, token)

    def update_presentation(self, snapshot: Any, owner: Any = None) -> None:
        """See :func:`octet_guest.services.update_presentation`."""
        services.update_presentation(snapshot, owner)

    def spawn_agent(self, task_name: str, message: str, **policy: Any) -> Any:
        """See :func:`octet_guest.agents.spawn_agent`."""
        return agents.spawn_agent(task_name, message, **policy)

    def message_agent(self, target: str, message: str) -> Any:
        """See :func:`octet_guest.agents.message_agent`."""
        return agents.message_agent(target, message)

    def follow_up_agent(self, target: str, message: str) -> Any:
        """See :func:`octet_guest.agents.follow_up_agent`."""
        return agents.follow_up_agent(target, message)

    def list_agents(self) -> Any:
        """See :func:`octet_guest.agents.list_agents`."""
        return agents.list_agents()

    def wait_agents(self, timeout_ms: Optional[int] = None) -> Any:
        """See :func:`octet_guest.agents.wait_agents`."""
        return agents.wait_agents(timeout_ms)

    def interrupt_agent(self, target: str) -> Any:
        """See :func:`octet_guest.agents.interrupt_agent`."""
        return agents.interrupt_agent(target)

    def list_models(self, query: Optional[str] = None, limit: Optional[int] = None) -> Any:
        """See :func:`octet_guest.agents.list_models`."""
        return agents.list_models(query, limit)

    def run(self) -> None:
        """Kept for apps written for the process-based SDK: in a component the
        shim drives the extension, so this does nothing."""

    # --- describe ---------------------------------------------------------

    def describe(self) -> wit.Description:
        """The ``describe`` answer: registrations in the order they were made."""
        lifecycle = [kind for kind in _ALL_LIFECYCLE if self._lifecycle.get(kind)]
        features = list(self._features)
        if lifecycle and "lifecycle_events" not in features:
            features.append("lifecycle_events")
        return wit.Description(
            self.name,
            [definition for definition, _ in self._tools.values()],
            [definition for definition, _ in self._commands.values()],
            list(self._hooks),
            self._context is not None,
            list(self._status),
            list(self._renderers),
            self._menu is not None,
            lifecycle,
            self._max_concurrency,
            features,
        )


_ALL_LIFECYCLE = (
    wit.LifecycleKind.SESSION_STARTED,
    wit.LifecycleKind.SESSION_SETTLED,
    wit.LifecycleKind.TURN_STARTED,
    wit.LifecycleKind.TURN_SETTLED,
    wit.LifecycleKind.TOOL_STARTED,
    wit.LifecycleKind.TOOL_SETTLED,
)


def _unique(registry: Dict[str, Any], name: str, what: str) -> None:
    if name in registry:
        raise ValueError(f"{what} {name!r} is registered twice")


def _doc(function: Handler) -> Optional[str]:
    doc = inspect.getdoc(function)
    return doc.strip().splitlines()[0] if doc and doc.strip() else None


def served_extension() -> Extension:
    """The extension the component serves: the one the app module made."""
    if not _EXTENSIONS:
        raise RuntimeError(
            "the app module made no octet_guest.Extension: create one with "
            'ext = Extension("<manifest name>") at module level'
        )
    return _EXTENSIONS[-1]
