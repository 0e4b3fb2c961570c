"""The component's exports: the WIT ``guest`` interface, implemented once for
every app by dispatching to the handlers its :class:`Extension` registered,
the way the process-based SDK dispatches wire requests.

``componentize-py`` looks for a class named ``Guest`` in the module it
builds; the build step generates that module (it imports the app, then this
class), so the app itself stays free of WIT.

Each request runs with its ambient scope set (``current_request_id()``,
``current_cancellation()``); handlers get the SDK's arguments: tools
``(arguments, context)``, commands ``(arguments, context)``, hooks
``(payload, context)``, context, status and renderer handlers their whole
params object and the context, lifecycle handlers the notification's
params, the shutdown handler the shutdown params and their context; each
takes as many as it declares. Replies are the SDK's: a raised
:class:`RpcError` is that error, any other exception is logged and answered
``internal error`` (a tool call answers an ``is_error`` result instead).
"""

from __future__ import annotations

import json
from typing import Any, Callable, List, Optional

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types as wit

from . import results, witvalues
from .cancellation import CURRENT, CancellationToken, RequestScope
from .errors import CancelledError, internal_error, to_wit
from .extension import Extension, served_extension
from .protocol import DEFAULT_MAX_MESSAGE_BYTES, RpcError
from .values import LIFECYCLE_METHODS, parse_json

_KINDS = {
    "session/started": wit.LifecycleKind.SESSION_STARTED,
    "session/settled": wit.LifecycleKind.SESSION_SETTLED,
    "turn/started": wit.LifecycleKind.TURN_STARTED,
    "turn/settled": wit.LifecycleKind.TURN_SETTLED,
    "tool/started": wit.LifecycleKind.TOOL_STARTED,
    "tool/settled": wit.LifecycleKind.TOOL_SETTLED,
}
_METHODS = {kind: method for method, kind in _KINDS.items()}


def _failed(ext: Extension, what: str, **fields: Any) -> RpcError:
    """Logs a handler's exception the way the SDK does; the reply is
    -32603 ``internal error``, the reason stays in the log."""
    ext.logger.error(what, **fields)
    return RpcError(-32603, "internal error")


class Guest(exports.Guest):
    """The exported ``guest`` interface, serving the app's extension."""

    def __init__(self) -> None:
        # Made at build time, after the app module ran: a broken app fails
        # the build, not its first request.
        self.ext: Extension = served_extension()
        self.describe()

    # --- the handshake ------------------------------------------------------

    def describe(self) -> wit.Description:
        ext = self.ext
        from .services import _definition

        return wit.Description(
            _name(),
            [_definition(tool) for tool in ext._tools.values()],
            [wit.CommandDefinition(c.name, c.description, c.usage)
             for c in ext._commands.values()],
            list(ext._hooks),
            ext._context_handler is not None,
            list(ext._status_handlers),
            list(ext._renderer_handlers),
            ext._menu_handler is not None,
            [_KINDS[m] for m in LIFECYCLE_METHODS if m in ext._lifecycle_handlers],
            ext._declared_concurrency(),
            ext._declared_features(),
        )

    def init(self, params: wit.InitParams) -> None:
        try:
            self.ext._start(params.api_version, list(params.features), params.initialize)
        except RpcError as error:
            raise Err(to_wit(error)) from None
        except Exception as error:  # noqa: BLE001 - the reason is the answer
            raise Err(to_wit(RpcError(-32603, f"{type(error).__name__}: {error}"))) from None

    # --- requests -------------------------------------------------------------

    def _serve(self, cx: wit.CallContext, active_parent: bool, method: str,
               run: Callable[[], Any], convert: Callable[[Any], Any]) -> Any:
        ext = self.ext
        token = CancellationToken(cx.request_id)
        reset = CURRENT.set(RequestScope(ext, cx.request_id, token, active_parent, method))
        try:
            result = run()
            _check_frame(ext, cx.request_id, result)
            return convert(result)
        except RpcError as error:
            if not isinstance(error, CancelledError):
                ext.logger.error("request failed", method=method, code=error.code,
                                 error=error.message)
            raise Err(to_wit(error)) from None
        except Exception as error:  # noqa: BLE001 - extension code never breaks the wire
            ext.logger.error("request handler failed", method=method, error=str(error))
            raise Err(internal_error()) from None
        finally:
            CURRENT.reset(reset)
            token._finish()

    def call_tool(self, call: wit.ToolCall, cx: wit.CallContext) -> wit.ToolResult:
        ext = self.ext

        def run() -> dict:
            tool = ext._resolve_tool(call.name, call.catalog_revision)
            schema = tool.output_schema is not None
            try:
                value = ext._invoke(tool.handler, _json(call.arguments, {}),
                                    witvalues.call_context(cx))
            except RpcError:
                raise
            except Exception as error:  # noqa: BLE001 - the model reads the failure
                ext.logger.error("tool handler failed", tool=call.name, error=str(error))
                return results.tool_failure(ext.api_version, error, output_schema=schema)
            if ext._feature_wire():
                return results.tool_v02(value, output_schema=schema,
                                        artifacts="artifacts" in ext._features)
            return results.tool_v01(value)

        return self._serve(cx, True, "tool/call", run, witvalues.tool)

    def execute_command(self, name: str, arguments: List[str],
                        cx: wit.CallContext) -> wit.CommandResult:
        ext = self.ext

        def run() -> dict:
            command = ext._commands.get(name)
            if command is None:
                raise RpcError(-32601, f"unknown command: {name}")
            try:
                value = ext._invoke(command.handler, list(arguments), witvalues.call_context(cx))
            except RpcError:
                raise
            except Exception as error:  # noqa: BLE001
                raise _failed(ext, "command handler failed", command=name,
                              error=str(error)) from error
            return results.command(value)

        return self._serve(cx, True, "command/execute", run, witvalues.command)

    def run_hook(self, hook: str, payload: str, cx: wit.CallContext) -> wit.HookResult:
        ext = self.ext

        def run() -> dict:
            handler = ext._hooks.get(hook)
            if handler is None:
                return results.default_hook()
            try:
                value = ext._invoke(handler, _json(payload, {}), witvalues.call_context(cx))
            except RpcError:
                raise
            except Exception as error:  # noqa: BLE001
                raise _failed(ext, "hook handler failed", hook=hook, error=str(error)) from error
            return results.hook(hook, value)

        return self._serve(cx, False, "hook/run", run, witvalues.hook)

    def collect_context(self, prompt: Optional[str],
                        cx: wit.CallContext) -> List[wit.ContextItem]:
        ext = self.ext

        def run() -> list:
            if ext._context_handler is None:
                return []
            context = witvalues.call_context(cx)
            params = {"prompt": prompt, "context": context}
            return results.context(ext._invoke(ext._context_handler, params, context))

        return self._serve(cx, False, "context/collect", run, witvalues.context_items)

    def collect_status(self, surface: str, cx: wit.CallContext) -> Optional[wit.StatusItem]:
        ext = self.ext

        def run() -> Optional[dict]:
            handler = ext._status_handlers.get(surface)
            if handler is None:
                return None
            context = witvalues.call_context(cx)
            params = {"surface": surface, "context": context}
            return results.status(ext._invoke(handler, params, context))

        return self._serve(cx, False, "status/collect", run, witvalues.status)

    def render_tool(self, request: wit.RenderRequest, cx: wit.CallContext) -> List[wit.Segment]:
        ext = self.ext

        def run() -> dict:
            handler = ext._renderer_handlers.get(request.name)
            if handler is None:
                return {"segments": []}
            context = witvalues.call_context(cx)
            params: dict = {"name": request.name, "arguments": _json(request.arguments, {})}
            if request.output is not None:
                params["output"] = request.output
            params.update(is_error=request.is_error, context=context)
            return results.render(ext._invoke(handler, params, context))

        return self._serve(cx, False, "tool/render", run, witvalues.segments)

    def collect_menu(self, cx: wit.CallContext) -> Optional[str]:
        ext = self.ext

        def run() -> Any:
            if ext._menu_handler is None:
                raise RpcError(-32601, "unknown method: menu/collect")
            return ext._invoke(ext._menu_handler, witvalues.call_context(cx))

        def convert(menu: Any) -> Optional[str]:
            if menu is None:
                return None
            try:
                return json.dumps(menu, ensure_ascii=False, separators=(",", ":"))
            except (TypeError, ValueError) as error:
                raise witvalues.invalid(f"the menu is not JSON: {error}") from None

        return self._serve(cx, False, "menu/collect", run, convert)

    # --- notifications --------------------------------------------------------

    def on_lifecycle(self, event: wit.LifecycleEvent) -> None:
        # Never answered and never allowed to trap: failures are logged.
        ext = self.ext
        method = _METHODS.get(event.kind, "lifecycle")
        handler = ext._lifecycle_handlers.get(method)
        if handler is None:
            ext.logger.warning("ignored unknown notification", method=method)
            return
        try:
            ext._invoke(handler, witvalues.lifecycle_params(event))
        except Exception as error:  # noqa: BLE001
            ext.logger.error("lifecycle handler failed", event=method, error=str(error))

    def on_shutdown(self) -> None:
        ext = self.ext
        if ext._shutdown_handler is None:
            return
        # The shim does not pass the host's shutdown params; the reference
        # host sends {} (see the README).
        values: dict = {}
        try:
            ext._invoke(ext._shutdown_handler, values, {})
        except Exception as error:  # noqa: BLE001
            ext.logger.error("shutdown handler failed", error=str(error))
            raise Err(wit.Error_Failed(str(error) or type(error).__name__)) from None


def _json(text: str, default: Any) -> Any:
    try:
        return parse_json(text, default=default)
    except ValueError as error:
        raise RpcError(-32602, f"arguments are not valid JSON: {error}") from None


def _name() -> str:
    from . import runtime

    return runtime.build_fact("name") or "extension"


def _check_frame(ext: Extension, request_id: int, result: Any) -> None:
    """A smaller ``max_message_bytes`` than the protocol's 1 MiB, applied to
    the reply frame like the SDK's writer applies it (the shim enforces the
    1 MiB bound itself)."""
    if ext.max_message_bytes >= DEFAULT_MAX_MESSAGE_BYTES:
        return
    frame = {"jsonrpc": "2.0", "id": request_id, "result": result}
    try:
        line = json.dumps(frame, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise RpcError(-32603, f"cannot serialize JSON-RPC message: {error}") from None
    if len(line.encode("utf-8")) > ext.max_message_bytes:
        raise RpcError(-32603, f"JSON-RPC message exceeds {ext.max_message_bytes} bytes")


__all__ = ["Guest"]
