"""The component's exports: the WIT ``guest`` interface, implemented once for
every app by dispatching to the handlers the app's :class:`Extension`
registered.

``componentize-py`` looks for a class named ``Guest`` in the module it
builds; the build step generates that module as two imports (the app, then
this class), so the app itself stays free of WIT.
"""

from __future__ import annotations

import traceback
from typing import Any, Callable, List, Optional

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types as wit

from . import host
from .errors import ExtensionError, InvalidParams, RpcError, error_text, to_wit_error
from .extension import Extension, served_extension
from .values import (
    AttrDict,
    ResultError,
    from_call_context,
    from_lifecycle_event,
    parse_json,
    to_command_result,
    to_context_items,
    to_hook_result,
    to_json,
    to_segments,
    to_status,
    to_tool_result,
)


def _unknown(what: str, name: str) -> RpcError:
    return RpcError(-32601, f"unknown {what}: {name}")


def _guard(what: str, run: Callable[[], Any]) -> Any:
    """Runs a handler; its exception becomes the WIT error (``failed`` unless
    it chose another), a bad return value -32603."""
    try:
        return run()
    except Err:
        raise
    except ResultError as exc:
        host.log("error", f"{what} returned an invalid value: {exc}")
        raise Err(wit.Error_Rpc(wit.RpcError(-32603, f"invalid result: {exc}", None))) from None
    except Exception as exc:  # noqa: BLE001 - every handler failure is answered
        if not isinstance(exc, ExtensionError):
            # Not a deliberate failure: keep the traceback for the author.
            host.log(
                "warning",
                f"{what} failed: {error_text(exc)}",
                traceback=traceback.format_exc(limit=8),
            )
        raise Err(to_wit_error(exc)) from None


def _arguments(text: str) -> Any:
    try:
        return parse_json(text, default={})
    except ValueError as exc:
        raise InvalidParams(f"arguments are not valid JSON: {exc}") from None


class Guest(exports.Guest):
    """The exported ``guest`` interface, serving the app's extension."""

    def __init__(self) -> None:
        # Made when the component is built, after the app module ran: fail
        # the build, not the first request, when the app made no Extension.
        self.ext: Extension = served_extension()
        self.ext.describe()

    def describe(self) -> wit.Description:
        return self.ext.describe()

    def init(self, params: wit.InitParams) -> None:
        ext = self.ext
        ext.api_version = params.api_version
        ext.features = list(params.features)
        ext.workspace = params.workspace
        ext.initialize_params = parse_json(params.initialize, default={})

        def run() -> None:
            for handler in ext._init:
                handler()

        _guard("init", run)

    def call_tool(self, call: wit.ToolCall, cx: wit.CallContext) -> wit.ToolResult:
        # Described and dynamic tools alike: the shim has already checked the
        # name against the catalog revision the call is pinned to.
        handler = self.ext._tool_handler(call.name)

        def run() -> wit.ToolResult:
            if handler is None:
                raise _unknown("tool", call.name)
            value = handler(_arguments(call.arguments), from_call_context(cx))
            return to_tool_result(value)

        return _guard(f"tool {call.name}", run)

    def execute_command(self, name: str, arguments: List[str],
                        cx: wit.CallContext) -> wit.CommandResult:
        entry = self.ext._commands.get(name)

        def run() -> wit.CommandResult:
            if entry is None:
                raise _unknown("command", name)
            return to_command_result(entry[1](list(arguments), from_call_context(cx)))

        return _guard(f"command {name}", run)

    def run_hook(self, hook: str, payload: str, cx: wit.CallContext) -> wit.HookResult:
        handler = self.ext._hooks.get(hook)

        def run() -> wit.HookResult:
            if handler is None:
                return to_hook_result(None)
            return to_hook_result(handler(_arguments(payload), from_call_context(cx)))

        return _guard(f"hook {hook}", run)

    def collect_context(self, prompt: Optional[str],
                        cx: wit.CallContext) -> List[wit.ContextItem]:
        handler = self.ext._context

        def run() -> List[wit.ContextItem]:
            if handler is None:
                return []
            return to_context_items(handler(prompt, from_call_context(cx)))

        return _guard("context", run)

    def collect_status(self, surface: str, cx: wit.CallContext) -> Optional[wit.StatusItem]:
        handler = self.ext._status.get(surface)

        def run() -> Optional[wit.StatusItem]:
            if handler is None:
                return None
            return to_status(handler(surface, from_call_context(cx)), surface)

        return _guard(f"status {surface}", run)

    def render_tool(self, request: wit.RenderRequest, cx: wit.CallContext) -> List[wit.Segment]:
        handler = self.ext._renderers.get(request.name)

        def run() -> List[wit.Segment]:
            if handler is None:
                raise _unknown("renderer", request.name)
            render = AttrDict(
                name=request.name,
                arguments=_arguments(request.arguments),
                output=request.output,
                is_error=request.is_error,
            )
            return to_segments(handler(render, from_call_context(cx)))

        return _guard(f"renderer {request.name}", run)

    def collect_menu(self, cx: wit.CallContext) -> Optional[str]:
        handler = self.ext._menu

        def run() -> Optional[str]:
            if handler is None:
                return None
            menu = handler(from_call_context(cx))
            return None if menu is None else to_json(menu)

        return _guard("menu", run)

    def on_lifecycle(self, event: wit.LifecycleEvent) -> None:
        # Never answered and never allowed to trap: failures are logged.
        try:
            handlers = self.ext._lifecycle.get(event.kind, [])
            observed = from_lifecycle_event(event)
            for handler in handlers:
                try:
                    handler(observed)
                except Exception as exc:  # noqa: BLE001
                    host.log(
                        "warning",
                        f"{observed['method']} handler failed: {error_text(exc)}",
                        traceback=traceback.format_exc(limit=8),
                    )
        except Exception as exc:  # noqa: BLE001
            host.log("warning", f"lifecycle event dropped: {error_text(exc)}")

    def on_shutdown(self) -> None:
        def run() -> None:
            for handler in self.ext._shutdown:
                handler()

        _guard("shutdown", run)


__all__ = ["Guest"]
