"""Native unit tests of the SDK: the dispatch and conversions, driven through
the `Guest` export class with the host imports replaced by recorders.

Needs componentize-py (for the bindings it generates from ../../../wit):

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SDK = Path(__file__).resolve().parent.parent
WIT = SDK.parent.parent / "wit"
_BINDINGS = tempfile.mkdtemp(prefix="octet-guest-bindings-")


def setUpModule() -> None:
    componentize_py = Path(sys.executable).parent / "componentize-py"
    subprocess.run(
        [str(componentize_py), "-d", str(WIT), "-w", "extension", "bindings", _BINDINGS],
        check=True,
    )
    sys.path[:0] = [_BINDINGS, str(SDK / "src")]


def tearDownModule() -> None:
    shutil.rmtree(_BINDINGS, ignore_errors=True)


class Recorder:
    """Stands in for the host imports, recording every call."""

    def __init__(self) -> None:
        self.calls = []
        self.cancelled = False

    def install(self) -> None:
        from wit_world.imports import cancellation, host

        host.log = lambda level, message, fields: self.calls.append(("log", level.name, message))
        host.notify = lambda n: self.calls.append(("notify", n.level.name, n.message, n.title))
        cancellation.is_cancelled = lambda: self.cancelled
        cancellation.reason = lambda: "user" if self.cancelled else None
        cancellation.sleep = lambda ms: self.calls.append(("sleep", ms)) or self.cancelled


def context():
    from wit_world.imports import types as wit

    return wit.CallContext(7, "/w", None, None, '{"model":"m"}')


class GuestTest(unittest.TestCase):
    def setUp(self) -> None:
        from octet_guest import extension

        extension._EXTENSIONS.clear()
        self.host = Recorder()
        self.host.install()

    def guest(self):
        from octet_guest.component import Guest

        return Guest()

    def test_describe_keeps_order_and_adds_lifecycle_events(self) -> None:
        from octet_guest import Extension

        ext = Extension("demo")
        ext.uses_progress()

        @ext.tool("b", description="B", parameters={"type": "object", "properties": {}})
        def b(args):
            return "b"

        @ext.tool("a")
        def a(args):
            """A tool documented by its docstring."""

        @ext.on_lifecycle("turn_settled", "session/started")
        def observe(event):
            pass

        description = self.guest().describe()
        self.assertEqual([t.name for t in description.tools], ["b", "a"])
        self.assertEqual(description.tools[0].parameters, '{"type":"object","properties":{}}')
        self.assertEqual(description.tools[1].description, "A tool documented by its docstring.")
        self.assertEqual(description.tools[1].parameters, '{"type":"object"}')
        self.assertEqual(
            [k.name for k in description.lifecycle], ["SESSION_STARTED", "TURN_SETTLED"]
        )
        self.assertEqual(description.features, ["request_progress", "lifecycle_events"])

    def test_tool_results_and_failures(self) -> None:
        from componentize_py_types import Err
        from octet_guest import Extension, InvalidParams, text_content, tool_result
        from wit_world.imports import types as wit

        ext = Extension("demo")
        returns = {
            "text": lambda args: "hi",
            "parts": lambda args: [text_content("a"), "b"],
            "result": lambda args, ctx: tool_result(
                ctx.workspace, metadata={"k": 1}, structured_content={"n": 1}
            ),
            "boom": lambda args: 1 / 0,
            "bad": lambda args: (_ for _ in ()).throw(InvalidParams("nope")),
            "none": lambda args: None,
        }
        for name, handler in returns.items():
            ext.tool(name)(handler)
        guest = self.guest()

        def call(name):
            return guest.call_tool(wit.ToolCall(name, "{}", None), context())

        self.assertEqual(call("text").content, [wit.ContentPart_Text("hi")])
        self.assertEqual(
            call("parts").content, [wit.ContentPart_Text("a"), wit.ContentPart_Text("b")]
        )
        result = call("result")
        self.assertEqual(result.content, [wit.ContentPart_Text("/w")])
        self.assertEqual((result.structured_content, result.metadata), ('{"n":1}', '{"k":1}'))
        with self.assertRaises(Err) as failed:
            call("boom")
        self.assertEqual(failed.exception.value, wit.Error_Failed("division by zero"))
        with self.assertRaises(Err) as invalid:
            call("bad")
        self.assertEqual(invalid.exception.value, wit.Error_InvalidParams("nope"))
        with self.assertRaises(Err) as empty:
            call("none")
        self.assertEqual(empty.exception.value.value.code, -32603)
        with self.assertRaises(Err) as unknown:
            call("missing")
        self.assertEqual(unknown.exception.value.value.code, -32601)

    def test_cancellation_wait_and_cancelled(self) -> None:
        from componentize_py_types import Err
        from octet_guest import Cancelled, Extension, current_cancellation
        from wit_world.imports import types as wit

        ext = Extension("demo")

        @ext.tool("wait")
        def wait(args):
            if current_cancellation().wait(1.5):
                raise Cancelled()
            return "done"

        guest = self.guest()
        call = wit.ToolCall("wait", "{}", None)
        self.assertEqual(guest.call_tool(call, context()).content, [wit.ContentPart_Text("done")])
        self.host.cancelled = True
        with self.assertRaises(Err) as cancelled:
            guest.call_tool(call, context())
        self.assertEqual(cancelled.exception.value, wit.Error_Cancelled())
        self.assertEqual([c for c in self.host.calls if c[0] == "sleep"], [("sleep", 1500)] * 2)

    def test_other_handlers_map_their_values(self) -> None:
        from octet_guest import Extension, hook_result
        from wit_world.imports import types as wit

        ext = Extension("demo")
        ext.command("c", description="C")(lambda args: None)
        ext.hook("before_prompt")(lambda payload: hook_result(deny=payload["prompt"]))
        ext.context(lambda: {"label": "l", "content": "c"})
        ext.status("status")(lambda surface: {"text": "t", "priority": 3})
        ext.renderer("c")(lambda request: request.output or "waiting")
        ext.notify(level="success", message="m", title="t")
        guest = self.guest()

        self.assertEqual(guest.execute_command("c", [], context()), wit.CommandResult("", [], []))
        hook = guest.run_hook("before_prompt", '{"prompt":"no"}', context())
        self.assertEqual(hook.disposition, wit.Disposition_Deny("no"))
        self.assertEqual(
            guest.run_hook("after_response", "{}", context()).disposition,
            wit.Disposition_Continue(),
        )
        self.assertEqual(
            guest.collect_context(None, context()),
            [wit.ContextItem("l", "c", wit.Placement.PROMPT_SUFFIX)],
        )
        self.assertEqual(
            guest.collect_status("status", context()), wit.StatusItem("status", "t", None, 3)
        )
        self.assertIsNone(guest.collect_status("footer", context()))
        render = wit.RenderRequest("c", "{}", None, False)
        self.assertEqual(guest.render_tool(render, context()), [wit.Segment("waiting", None)])
        self.assertIn(("notify", "SUCCESS", "m", "t"), self.host.calls)

    def test_lifecycle_failures_are_logged(self) -> None:
        from octet_guest import Extension
        from wit_world.imports import types as wit

        ext = Extension("demo")
        seen = []

        @ext.on_lifecycle("turn/started")
        def started(event):
            seen.append((event.method, event.session_id, event.turn_id, "run_id" in event))
            raise RuntimeError("oops")

        event = wit.LifecycleEvent(
            wit.LifecycleKind.TURN_STARTED, "s", None, "t", None, None, None, None, None
        )
        self.guest().on_lifecycle(event)
        self.assertEqual(seen, [("turn/started", "s", "t", False)])
        self.assertIn(("log", "WARNING", "turn/started handler failed: oops"), self.host.calls)

    def test_octet_extension_is_an_alias(self) -> None:
        import octet_extension
        import octet_guest

        self.assertIs(octet_extension.Extension, octet_guest.Extension)
        self.assertEqual(json.loads(octet_guest.values.to_json({"a": "λ"})), {"a": "λ"})


if __name__ == "__main__":
    unittest.main()
