"""Tool composition (API 0.4, feature ``tool_composition_v1``): from inside a
model tool call, call the session's other tools through octet, and read or
commit the session's composition store (docs/api-0.4.md#v04-composition).

    from octet_guest import composition   # or octet_extension.composition

    ext = Extension(api_version="0.4").uses_composition()

    @ext.tool(name="summarize_file", description="...")
    def summarize_file(args):
        text = composition.call("read", {"path": args["path"]})
        ...

Each function is one request to octet, made for the tool call being
served (its ``parent_request_id``); octet's answer comes back as JSON
values, read from a sidecar file by the shim when octet sends it that way.
What octet would refuse is refused here first, with the bound named: a
tool name that is not an identifier, arguments that are not a JSON object
of at most 128 KiB nested at most 32 levels, more than 256 calls in one
tool call, and more than one store commit (at most 4,096 keys of 1 to
1,024 bytes, none both set and deleted, values of at most 256 KiB and
1 MiB together). From any handler but a tool call's every function is
refused (-32602), and without the feature negotiated -32601; octet's own
errors arrive as :class:`RpcError` with its code and message.

``call_streaming`` starts a call whose partial results (octet's
``composition/update`` stream) arrive while it runs: iterate the returned
:class:`StreamingCall` for ``{"sequence", "result"}`` updates, then
``finish()`` for the value. At most 4 calls of one tool call are in flight
at once (the shim refuses a fifth); a gap in the sequences means the shim
dropped updates (more than 64 waiting, or one out of bounds).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from . import jsonbounds, wit_version
from .cancellation import CURRENT
from .hostcalls import call as _call
from .protocol import RpcError
from .values import AttrDict

FEATURE = "tool_composition_v1"
MAX_CALLS = 256
MAX_ARGUMENT_BYTES = 128 * 1024
MAX_ARGUMENT_DEPTH = 32
MAX_STORE_KEYS = 4096
MAX_KEY_BYTES = 1024
MAX_VALUE_BYTES = 256 * 1024
MAX_STORE_BYTES = 1 << 20


def _imports() -> Any:
    wit_version.require_0_4("octet_guest.composition")
    from wit_world.imports import composition

    return composition


def _scope(what: str) -> Any:
    """The tool call a composition request is made for."""
    scope = CURRENT.get()
    if scope is None:
        raise RpcError(-32602, f"composition.{what} is only available while serving a "
                               "model tool call")
    ext = scope.extension
    ext._require_initialized()
    if FEATURE not in ext.negotiated_features:
        raise RpcError(-32601, f"API 0.4 feature is not negotiated: {FEATURE} (declare it "
                               "with ext.uses_composition() and use a 0.4 manifest)")
    if scope.method != "tool/call":
        raise RpcError(-32602, f"composition.{what} is only available while serving a "
                               "model tool call")
    return scope


def _valid_tool_name(name: Any) -> bool:
    if not isinstance(name, str) or not name or len(name.encode("utf-8")) > 64:
        return False
    first, rest = name[0], name[1:]
    return first.isascii() and (first.isalpha() or first == "_") and all(
        c.isascii() and (c.isalnum() or c in "_.-") for c in rest)


def _parse(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise RpcError(-32603, f"the {what} is not JSON: {error}") from None


def context() -> dict:
    """``composition/context``: ``{"tools": [definitions], "store": {key:
    value}, "limits": {"timeout_ms", "max_calls"}}``."""
    imports = _imports()
    _scope("context")
    value = _call(imports.context)
    tools = _parse(value.tools, "composition tool list")
    store = _parse(value.store, "composition store")
    if not isinstance(tools, list) or not isinstance(store, dict):
        raise RpcError(-32603, "invalid composition/context response")
    return {"tools": tools, "store": store,
            "limits": {"timeout_ms": value.limits.timeout_ms,
                       "max_calls": value.limits.max_calls}}


def _start(name: Any, arguments: Optional[Mapping], full_outcome: Any) -> str:
    """Checks one call as octet would and counts it against the tool
    call's budget; returns the arguments as JSON text."""
    if not _valid_tool_name(name):
        raise ValueError(f"composition call tool name {name!r} is not an identifier "
                         "(1-64 bytes of [A-Za-z_][A-Za-z0-9_.-]*)")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise TypeError("composition call arguments must be a JSON object")
    if not isinstance(full_outcome, bool):
        raise TypeError("full_outcome must be a boolean")
    problem = jsonbounds.shape_problem(arguments, "the composition call arguments",
                                       max_depth=MAX_ARGUMENT_DEPTH)
    if problem is not None:
        raise ValueError(problem)
    text = jsonbounds.dumps(dict(arguments), "the composition call arguments")
    size = len(text.encode("utf-8"))
    if size > MAX_ARGUMENT_BYTES:
        raise ValueError(f"composition call arguments have {size} bytes; the limit is 128 KiB")
    scope = _scope("call")
    if scope.used.get("calls", 0) >= MAX_CALLS:
        raise RpcError(-32602, f"a tool call may make at most {MAX_CALLS} composition calls")
    scope.used["calls"] = scope.used.get("calls", 0) + 1
    return text


def _what(full_outcome: bool) -> str:
    return "composition outcome" if full_outcome else "composition value"


def call(name: str, arguments: Optional[Mapping] = None, *,
         full_outcome: bool = False) -> Any:
    """``composition/call``: runs tool ``name`` with ``arguments`` (a JSON
    object; ``{}`` when None) and returns its value, or with
    ``full_outcome=True`` its whole outcome as octet reports it."""
    imports = _imports()
    text = _start(name, arguments, full_outcome)
    return _parse(_call(imports.call, name, text, full_outcome), _what(full_outcome))


class StreamingCall:
    """A composition call in flight whose partial results arrive as they
    come (``call_streaming``).

    Iterating it waits for each update, an ``AttrDict`` with ``sequence``
    (increasing; a gap means the shim dropped updates) and ``result`` (the
    called tool's partial result); the iteration ends when no more will
    come (the call has its final reply, failed, or the tool call ended).
    :meth:`finish` then waits for the final value (updates not read yet are
    discarded). :meth:`close`, or leaving a ``with`` block, abandons a call
    not finished (the shim tells octet).
    """

    def __init__(self, pending: Any, full_outcome: bool) -> None:
        self._pending = pending
        self._full_outcome = full_outcome

    def __iter__(self) -> "StreamingCall":
        return self

    def __next__(self) -> AttrDict:
        update = None if self._pending is None else self._pending.next_update()
        if update is None:
            raise StopIteration
        return AttrDict(sequence=update.sequence,
                        result=_parse(update.result, "composition update"))

    def finish(self) -> Any:
        """The call's value (or with ``full_outcome`` its whole outcome)."""
        if self._pending is None:
            raise RpcError(-32602, "this composition call was already finished or closed")
        pending, self._pending = self._pending, None
        try:
            text = _call(pending.finish)
        finally:
            pending.__exit__(None, None, None)
        return _parse(text, _what(self._full_outcome))

    def close(self) -> None:
        """Abandons the call if it is not finished."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.__exit__(None, None, None)

    def __enter__(self) -> "StreamingCall":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def call_streaming(name: str, arguments: Optional[Mapping] = None, *,
                   full_outcome: bool = False) -> StreamingCall:
    """Like :func:`call`, asking octet for the tool's partial results as it
    runs (``updates: true``); returns once the call is sent."""
    imports = _imports()
    text = _start(name, arguments, full_outcome)
    return StreamingCall(_call(imports.start_call, name, text, full_outcome), full_outcome)


def store(set: Optional[Mapping] = None, delete: Iterable[str] = ()) -> None:  # noqa: A002
    """``composition/store``: sets the keys of ``set`` to its (JSON) values
    and deletes the keys in ``delete``, as the one commit a tool call may
    make."""
    imports = _imports()
    entries = dict(set or {})
    removed = list(delete)
    if len(entries) + len(removed) > MAX_STORE_KEYS:
        raise ValueError(f"a composition store commit changes {len(entries) + len(removed)} "
                         f"keys; the limit is {MAX_STORE_KEYS}")
    seen = builtins.set()
    for key in list(entries) + removed:
        if not isinstance(key, str):
            raise TypeError("composition store keys must be strings")
        size = len(key.encode("utf-8"))
        if not 1 <= size <= MAX_KEY_BYTES:
            raise ValueError(f"a composition store key has {size} bytes; keys have 1 to "
                             f"{MAX_KEY_BYTES}")
        if key in seen:
            raise ValueError(f"composition store key {key!r} appears twice in one commit")
        seen.add(key)
    pairs, total = [], 0
    for key, value in entries.items():
        text = jsonbounds.dumps(value, f"the store value of {key!r}")
        size = len(text.encode("utf-8"))
        if size > MAX_VALUE_BYTES:
            raise ValueError(f"the composition store value of {key!r} has {size} bytes; "
                             "the limit is 256 KiB")
        total += size
        pairs.append((key, text))
    if total > MAX_STORE_BYTES:
        raise ValueError(f"a composition store commit holds {total} bytes of values; "
                         "the limit is 1 MiB")
    scope = _scope("store")
    if scope.used.get("stored"):
        raise RpcError(-32602, "a tool call may commit to the composition store once; this "
                               "one already did")
    _call(imports.store, pairs, removed)
    scope.used["stored"] = True


__all__ = ["FEATURE", "StreamingCall", "call", "call_streaming", "context", "store"]
