"""Tool composition on the 0.4.0 bindings: what ``composition.context``,
``call`` and ``store`` hand the WIT imports, what they return, and every
refusal made before anything reaches the shim (nothing recorded)."""

from __future__ import annotations

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Err, context, error_of, fresh, serve, texts, tool, wit  # noqa: E402

FEATURES = ("request_cancellation", "content_parts", "tool_composition_v1")


def composing(handler, *, declare=True, features=FEATURES):
    """A 0.4 extension whose tool `t` runs ``handler()``, served."""
    from octet_extension import Extension

    ext = Extension(api_version="0.4")
    if declare:
        ext.uses_composition()
    ext.tool(name="t", description="d")(lambda args: handler(args))
    ext.command(name="c", description="d")(lambda args: handler({}))
    return ext, serve("0.4", features)


class Composition(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_uses_composition_declares_the_feature_once(self) -> None:
        from octet_extension import Extension
        from octet_guest.component import Guest

        Extension(api_version="0.4").uses_composition().uses_composition()
        self.assertEqual(Guest().describe().features.count("tool_composition_v1"), 1)

    def test_call_context_and_store_reach_the_imports(self) -> None:
        from octet_extension import composition

        self.host.answers["composition_call"] = lambda name, arguments, full: json.dumps(
            {"name": name, "arguments": json.loads(arguments), "full": full})
        self.host.answers["composition_context"] = wit_context()

        def run(args):
            return json.dumps({
                "value": composition.call("read", {"path": "a.txt"}),
                "outcome": composition.call("read", full_outcome=True),
                "context": composition.context(),
                "stored": composition.store({"count": 2, "note": {"a": [1]}}, ["old"]),
            })

        _, guest = composing(run)
        answer = json.loads(texts(tool(guest, "t"))[0])
        self.assertEqual(answer["value"], {"name": "read", "arguments": {"path": "a.txt"},
                                           "full": False})
        self.assertEqual(answer["outcome"]["full"], True)
        self.assertEqual(answer["outcome"]["arguments"], {})
        self.assertEqual(answer["context"], {
            "tools": [{"name": "read"}], "store": {"seen": 1},
            "limits": {"timeout_ms": 30000, "max_calls": 256}})
        self.assertIsNone(answer["stored"])
        self.assertEqual(self.host.named("composition_store"),
                         [("composition_store", [("count", "2"), ("note", '{"a":[1]}')], ["old"])])
        self.assertEqual(self.host.named("composition_call")[0][1:],
                         ("read", '{"path":"a.txt"}', False))

    def test_octets_errors_reach_the_handler(self) -> None:
        from octet_extension import RpcError, composition

        self.host.fail["composition_call"] = wit.Error_Rpc(
            wit.RpcError(-32602, "unknown tool: gone", None))
        seen = []

        def run(args):
            try:
                composition.call("gone")
            except RpcError as error:
                seen.append((error.code, error.message))
                raise

        _, guest = composing(run)
        with self.assertRaises(Err) as raised:
            tool(guest, "t")
        self.assertEqual(error_of(raised)[:2], (-32602, "unknown tool: gone"))
        self.assertEqual(seen, [(-32602, "unknown tool: gone")])

    def test_refused_outside_a_tool_call_and_without_the_feature(self) -> None:
        from octet_extension import composition

        _, guest = composing(lambda args: composition.call("read"))
        with self.assertRaises(Err) as raised:
            guest.execute_command("c", [], context())
        self.assertEqual(error_of(raised)[:2], (
            -32602, "composition.call is only available while serving a model tool call"))
        fresh_host = fresh()
        _, guest = composing(lambda args: composition.context(), declare=False,
                             features=("request_cancellation", "content_parts"))
        with self.assertRaises(Err) as raised:
            tool(guest, "t")
        code, message, _ = error_of(raised)
        self.assertEqual(code, -32601)
        self.assertIn("tool_composition_v1", message)
        self.assertEqual([c for c in self.host.calls + fresh_host.calls
                          if c[0].startswith("composition")], [])

    def test_bounds_are_checked_before_anything_is_sent(self) -> None:
        from octet_extension import composition

        deep: dict = {}
        for _ in range(32):
            deep = {"a": deep}
        cases = [
            (lambda: composition.call("no spaces"), "is not an identifier"),
            (lambda: composition.call("x" * 65), "is not an identifier"),
            (lambda: composition.call("read", ["a"]), "must be a JSON object"),
            (lambda: composition.call("read", {"a": deep}), "nested deeper than 32 levels"),
            (lambda: composition.call("read", {"a": "x" * (128 * 1024)}),
             "composition call arguments have 131080 bytes; the limit is 128 KiB"),
            (lambda: composition.store({"k": 1}, ["k"]), "appears twice in one commit"),
            (lambda: composition.store({"": 1}), "keys have 1 to 1024"),
            (lambda: composition.store(delete=["k" * 1025]), "has 1025 bytes"),
            (lambda: composition.store(delete=[f"k{i}" for i in range(4097)]),
             "changes 4097 keys; the limit is 4096"),
            (lambda: composition.store({"k": "x" * (256 * 1024)}), "the limit is 256 KiB"),
            (lambda: composition.store({f"k{i}": "x" * (256 * 1024 - 8) for i in range(5)}),
             "the limit is 1 MiB"),
            (lambda: composition.store({"k": object()}), "is not JSON"),
        ]
        for run, text in cases:
            fresh()
            _, guest = composing(lambda args, run=run: run())
            with self.subTest(text=text):
                result = tool(guest, "t")
                self.assertTrue(result.is_error)
                self.assertIn(text, texts(result)[0])
        self.assertEqual([c for c in self.host.calls if c[0].startswith("composition")], [])

    def test_one_store_commit_and_256_calls_per_tool_call(self) -> None:
        from octet_extension import RpcError, composition

        def run(args):
            composition.store({"a": 1})
            with self.assertRaisesRegex(RpcError, "commit to the composition store once"):
                composition.store({"b": 2})
            for _ in range(256):
                composition.call("read")
            with self.assertRaisesRegex(RpcError, "at most 256 composition calls"):
                composition.call("read")
            return "done"

        _, guest = composing(run)
        self.assertEqual(texts(tool(guest, "t")), ["done"])
        self.assertEqual(len(self.host.named("composition_store")), 1)
        self.assertEqual(len(self.host.named("composition_call")), 256)
        # The budget is the tool call's: the next call starts afresh.
        fresh_calls = len(self.host.calls)
        self.assertEqual(texts(tool(guest, "t")), ["done"])
        self.assertEqual(len(self.host.calls) - fresh_calls, 257)


class Streaming(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_updates_then_the_value(self) -> None:
        from octet_extension import composition

        self.host.updates = [(1, '{"line":"a.rs:1"}'), (3, '"b"')]
        self.host.answers["finish"] = '{"matches":2}'

        def run(args):
            call = composition.call_streaming("grep", {"pattern": "TODO"})
            seen = [(update.sequence, update["result"]) for update in call]
            return json.dumps({"updates": seen, "value": call.finish()})

        _, guest = composing(run)
        self.assertEqual(json.loads(texts(tool(guest, "t"))[0]), {
            "updates": [[1, {"line": "a.rs:1"}], [3, "b"]], "value": {"matches": 2}})
        steps = [c for c in self.host.calls if c[0] != "log"]
        self.assertEqual(steps, [
            ("composition_start_call", "grep", '{"pattern":"TODO"}', False),
            ("next_update",), ("next_update",), ("next_update",), ("finish",), ("drop",)])

    def test_finish_once_close_abandons_and_errors_arrive(self) -> None:
        from octet_extension import RpcError, composition

        def run(args):
            with composition.call_streaming("grep", full_outcome=True) as abandoned:
                pass
            self.assertEqual(list(abandoned), [])
            call = composition.call_streaming("grep")
            call.finish()
            with self.assertRaisesRegex(RpcError, "already finished or closed"):
                call.finish()
            self.host.fail["finish"] = wit.Error_Rpc(wit.RpcError(-32602, "unknown tool: grep",
                                                                  None))
            failing = composition.call_streaming("grep")
            with self.assertRaises(RpcError) as raised:
                failing.finish()
            return f"{raised.exception.code} {raised.exception.message}"

        _, guest = composing(run)
        self.assertEqual(texts(tool(guest, "t")), ["-32602 unknown tool: grep"])
        starts = self.host.named("composition_start_call")
        self.assertEqual([call[3] for call in starts], [True, False, False])
        self.assertEqual(len(self.host.named("drop")), 3)

    def test_the_bounds_and_budget_of_call(self) -> None:
        from octet_extension import RpcError, composition

        def run(args):
            with self.assertRaisesRegex(ValueError, "is not an identifier"):
                composition.call_streaming("no spaces")
            for _ in range(256):
                composition.call_streaming("grep").close()
            with self.assertRaisesRegex(RpcError, "at most 256 composition calls"):
                composition.call("grep")
            return "done"

        _, guest = composing(run)
        self.assertEqual(texts(tool(guest, "t")), ["done"])
        self.assertEqual(len(self.host.named("composition_start_call")), 256)


def wit_context():
    from wit_world.imports import composition

    return composition.CompositionContext(
        '[{"name":"read"}]', '{"seen":1}', composition.CompositionLimits(30000, 256))


if __name__ == "__main__":
    unittest.main()
