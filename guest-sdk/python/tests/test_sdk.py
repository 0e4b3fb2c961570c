"""Native unit tests of the SDK's registration, handshake and dispatch: the
process-based SDK's constructor and decorators, the features and
concurrency ``describe`` declares, what ``init`` settles, the arguments
handlers get and the replies their values and exceptions become.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import io
import json
import re
import sys
import unittest

from harness import Err, context, error_of, fresh, serve, texts, tool, wit

SHIM_FEATURES = [
    "request_cancellation", "request_progress", "progress_decoration", "content_parts",
    "artifacts", "lifecycle_events", "policy_intents", "dynamic_tools", "agent_sessions",
    "approvals", "secrets",
]


class Constructor(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_the_sdks_signature_with_its_defaults(self) -> None:
        from octet_extension import Extension

        ext = Extension()
        self.assertIsNone(ext.api_version)  # decided by the manifest, else the host
        self.assertEqual((ext.max_concurrent_requests, ext.max_pending_requests), (8, 64))
        self.assertEqual((ext.shutdown_timeout, ext.cancellation_grace), (2.0, 0.25))
        self.assertIs(ext.log, ext.logger)
        self.assertEqual(Extension(max_concurrent_requests=None).max_concurrent_requests, 8)
        self.assertEqual(Extension(api_version="0.2").api_version, "0.2")
        # octet_guest 0.1's positional name is a deprecated alias
        # (test_deprecated.py); nothing else is positional.
        with self.assertRaises(TypeError):
            Extension("positional-name", "0.2")

    def test_invalid_values_raise_the_sdks_errors(self) -> None:
        from octet_extension import Extension

        for kwargs, text in [
            ({"max_concurrent_requests": 0}, "max_concurrent_requests must be greater than zero"),
            ({"max_concurrent_requests": True}, "max_concurrent_requests must be greater"),
            ({"max_pending_requests": 0}, "max_pending_requests must be greater than zero"),
            ({"shutdown_timeout": -1}, "shutdown timeouts cannot be negative"),
            ({"supported_features": ["telepathy"]}, "unknown supported_features: ['telepathy']"),
            ({"supported_features": [""]}, "supported_features must contain non-empty strings"),
        ]:
            with self.subTest(kwargs=kwargs), self.assertRaisesRegex(ValueError, re.escape(text)):
                Extension(**kwargs)

    def test_what_the_shim_does_fails_the_build_with_the_reason(self) -> None:
        from octet_extension import Extension, UnsupportedInComponent

        for kwargs, what in [
            ({"stdin": io.StringIO()}, "Extension(stdin=...)"),
            ({"stdout": io.StringIO()}, "Extension(stdout=...)"),
            ({"max_pending_requests": 1}, "Extension(max_pending_requests=...)"),
            ({"shutdown_timeout": 1.0}, "shutdown_timeout"),
            ({"cancellation_grace": 1.0}, "cancellation_grace"),
        ]:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(UnsupportedInComponent) as raised:
                    Extension(**kwargs)
                self.assertIn(what, str(raised.exception))
                self.assertIn("octet-wasm", str(raised.exception))
        # The process's own streams are what the shim stands for: accepted.
        Extension(stdin=sys.stdin, stdout=sys.stdout)
        ext = Extension()
        with self.assertRaises(UnsupportedInComponent):
            ext.request("anything/at_all")
        with self.assertRaises(UnsupportedInComponent):
            ext.run(stdin=io.StringIO())
        ext.run()  # the SDK's `ext.run()` at build time: returns at once


class Registration(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_decorators_check_like_the_sdk(self) -> None:
        from octet_extension import Extension

        ext = Extension()
        cases = [
            (lambda: ext.tool(name="", description="d"), ValueError, "tool name must be non-empty"),
            (lambda: ext.tool(name="t", description=" "), ValueError,
             "tool description must be non-empty"),
            (lambda: ext.command(name="c", description="d", usage=3), TypeError,
             "command usage must be a string or None"),
            (lambda: ext.on_lifecycle("turn/exploded"), ValueError,
             "unknown lifecycle event: turn/exploded"),
            (lambda: ext.on_lifecycle(3), TypeError, "lifecycle event must be a string"),
            (lambda: ext.status(""), ValueError, "UI surface name must be non-empty"),
        ]
        for make, kind, text in cases:
            with self.subTest(text=text), self.assertRaisesRegex(kind, text):
                make()
        ext.tool(name="t", description="d")(lambda args: "x")
        with self.assertRaisesRegex(ValueError, "duplicate tool: t"):
            ext.tool(name="t", description="d")(lambda args: "x")
        ext.on_lifecycle("turn_settled")(lambda event: None)
        with self.assertRaisesRegex(ValueError, "duplicate lifecycle handler: turn/settled"):
            ext.lifecycle("turn/settled")(lambda event: None)
        ext.on_shutdown(lambda params: None)
        with self.assertRaisesRegex(ValueError, "duplicate shutdown handler"):
            ext.on_shutdown(lambda params: None)
        ext.context(lambda params: None)
        with self.assertRaisesRegex(ValueError, "duplicate context handler"):
            ext.context()(lambda params: None)

    def test_api_0_1_refuses_what_only_0_2_carries(self) -> None:
        from octet_extension import Extension

        ext = Extension(api_version="0.1")
        with self.assertRaisesRegex(ValueError, "output_schema requires extension API 0.2"):
            ext.tool(name="s", description="d", output_schema={"type": "object"})
        with self.assertRaisesRegex(ValueError, "provider_retry requires extension API 0.2"):
            ext.hook("provider_retry")

    def test_describe_declares_what_the_sdk_would_negotiate(self) -> None:
        from octet_extension import Extension

        ext = Extension()
        ext.tool(name="b", description="B", parameters={"type": "object", "properties": {}})(
            lambda args: "b")
        ext.command(name="c", description="C", usage="/c")(lambda args: "c")
        ext.hook("before_prompt")(lambda payload: None)
        ext.status(lambda params: None)
        ext.renderer("b")(lambda params: None)
        ext.context(lambda params: None)
        description = serve().describe()
        self.assertEqual(description.tools[0].parameters, '{"type":"object","properties":{}}')
        self.assertEqual(description.commands, [wit.CommandDefinition("c", "C", "/c")])
        self.assertEqual((description.hooks, description.status_surfaces, description.renderers),
                         (["before_prompt"], ["status"], ["b"]))
        self.assertTrue(description.context)
        self.assertEqual(description.max_concurrency, 8)
        # Every feature the SDK supports and the shim implements, except
        # lifecycle_events without a lifecycle handler.
        self.assertEqual(description.features,
                         [f for f in SHIM_FEATURES if f != "lifecycle_events"])
        self.assertEqual(description.lifecycle, [])

        self.host = fresh()
        ext = Extension(max_concurrent_requests=3,
                        supported_features=("content_parts", "lifecycle_events",
                                            "delegation_telemetry_v1"))
        ext.on_lifecycle("tool/settled")(lambda event: None)
        ext.on_lifecycle("session_started")(lambda event: None)
        description = serve().describe()
        self.assertEqual(description.features, ["content_parts", "lifecycle_events"])
        self.assertEqual(description.lifecycle, [wit.LifecycleKind.SESSION_STARTED,
                                                 wit.LifecycleKind.TOOL_SETTLED])
        self.assertEqual(description.max_concurrency, 3)

        self.host = fresh()
        Extension(api_version="0.1", max_concurrent_requests=5)
        description = serve("0.1").describe()
        self.assertEqual((description.features, description.max_concurrency), ([], 1))


class Handshake(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_init_settles_what_the_sdk_reads_from_initialize(self) -> None:
        from octet_extension import Extension

        ext = Extension(max_concurrent_requests=3)
        seen = []
        ext.on_init(lambda: seen.append(ext.negotiated_concurrency))
        self.assertFalse(ext.initialized)
        serve(features=["request_cancellation", "content_parts", "artifacts"],
              tools=[], notifications=True)
        self.assertTrue(ext.initialized and ext.running)
        self.assertEqual(ext.api_version, "0.2")
        self.assertEqual(ext.negotiated_features,
                         frozenset({"request_cancellation", "content_parts", "artifacts"}))
        # min(host's 4, the extension's 3)
        self.assertEqual((ext.negotiated_concurrency, seen), (3, [3]))
        self.assertEqual((ext.workspace, ext.host), ("/w", {"model": "m"}))
        self.assertEqual(ext.initialization["contributes"], {"tools": [], "notifications": True})

    def test_a_pinned_version_refuses_another_host_version(self) -> None:
        from octet_extension import Extension

        Extension(api_version="0.2")
        with self.assertRaises(Err) as raised:
            serve("0.1")
        self.assertEqual(
            error_of(raised)[:2],
            (-32000, "unsupported API version: host requested '0.1', SDK implements '0.2'"),
        )

    def test_api_0_4_is_the_manifests_version_on_the_0_2_wire(self) -> None:
        # octet's hello-tools recipe (spec protocol-04.md 5.2), unchanged.
        from octet_extension import Extension
        from octet_guest import runtime

        runtime.configure(name="hello-tools", api_version="0.4",
                          manifest="/ext/extension.toml")
        try:
            ext = Extension(api_version="0.4", max_concurrent_requests=1)

            @ext.tool(name="hello", description="Return a local greeting")
            def hello(arguments):
                return "Hello from octet."

            description = serve("0.4").describe()
            self.assertEqual(description.tools[0].parameters, '{"type":"object"}')
            # Every supported feature; the shim keeps the offered ones.
            self.assertEqual(description.features,
                             [f for f in SHIM_FEATURES if f != "lifecycle_events"])
            self.assertEqual(description.max_concurrency, 1)
            guest = serve("0.4", features=["request_cancellation", "content_parts",
                                           "request_progress"], tools=["hello"])
            self.assertEqual(ext.api_version, "0.4")
            self.assertEqual(ext.negotiated_features, frozenset(
                {"request_cancellation", "content_parts", "request_progress"}))
            # min(host's 4, the recipe's 1)
            self.assertEqual(ext.negotiated_concurrency, 1)
            result = tool(guest, "hello")
            self.assertEqual((texts(result), result.is_error), (["Hello from octet."], False))
            # Pinned: a host asking for 0.2 is refused at init.
            with self.assertRaises(Err) as raised:
                serve("0.2")
            self.assertEqual(
                error_of(raised)[:2],
                (-32000, "unsupported API version: host requested '0.2', SDK implements '0.4'"),
            )
        finally:
            runtime.configure()

    def test_a_version_other_than_the_manifests_fails_the_build(self) -> None:
        from octet_extension import Extension
        from octet_guest import runtime

        runtime.configure(name="x", api_version="0.1", manifest="/ext/extension.toml")
        try:
            with self.assertRaisesRegex(ValueError, "differs from api_version '0.1' in "
                                                    "/ext/extension.toml"):
                Extension(api_version="0.2")
            self.assertEqual(Extension().api_version, "0.1")
        finally:
            runtime.configure()

    def test_an_unpinned_0_2_only_registration_fails_a_0_1_init(self) -> None:
        from octet_extension import Extension

        ext = Extension()
        ext.tool(name="s", description="d", output_schema={"type": "object"})(lambda a: "x")
        with self.assertRaises(Err) as raised:
            serve("0.1")
        self.assertIn("output_schema requires extension API 0.2", error_of(raised)[1])


class Shapes(unittest.TestCase):
    """What each kind of handler receives (the SDK's `_invoke`)."""

    def setUp(self) -> None:
        self.host = fresh()
        from octet_extension import Extension

        self.ext = Extension()
        self.seen = []

    def record(self, *values):
        self.seen.append(values)

    def test_tools_get_arguments_and_optionally_the_context(self) -> None:
        ext = self.ext
        ext.tool(name="one", description="d")(lambda args: self.record(args) or "1")
        ext.tool(name="two", description="d")(lambda args, ctx: self.record(args, ctx) or "2")
        ext.tool(name="none", description="d")(lambda: self.record() or "0")
        ext.tool(name="var", description="d")(lambda *values: self.record(*values) or "v")

        def keyword(args, *, flag=True):
            self.record(args, flag)
            return "k"

        ext.tool(name="keyword", description="d")(keyword)
        guest = serve()
        for name in ("one", "two", "none", "var", "keyword"):
            tool(guest, name, {"a": 1})
        owner = {"session_id": "s", "extension_instance_id": "i", "process_generation": 1}
        wire_context = {"workspace": "/w", "execution_scope": None, "resource_owner": owner,
                        "host": {"model": "m"}}
        self.assertEqual(self.seen, [
            ({"a": 1},), ({"a": 1}, wire_context), (), ({"a": 1}, wire_context),
            ({"a": 1}, True),
        ])
        self.assertEqual(self.seen[1][1].resource_owner.session_id, "s")
        # API 0.1 (no owner): the context has no resource_owner member.
        self.assertNotIn("resource_owner", guest.ext._invoke(
            lambda a, c: c, None, __import__("octet_guest").witvalues.call_context(
                context(owner=False))))

    def test_other_handlers_get_their_params_objects(self) -> None:
        ext = self.ext
        ext.command(name="c", description="d")(lambda arguments, ctx: self.record(arguments, ctx))
        ext.hook("before_prompt")(lambda payload, ctx: self.record(payload, ctx))
        ext.context(lambda params: self.record(params))
        ext.status("footer")(lambda params: self.record(params))
        ext.renderer("t")(lambda params, ctx: self.record(params, ctx))
        guest = serve()
        cx = context()
        guest.execute_command("c", ["x", "y"], cx)
        guest.run_hook("before_prompt", '{"prompt":"hi"}', cx)
        guest.collect_context("hi", cx)
        guest.collect_status("footer", cx)
        guest.render_tool(wit.RenderRequest("t", '{"a":1}', "out", True), cx)
        guest.render_tool(wit.RenderRequest("t", "{}", None, False), cx)
        ctx = self.seen[0][1]
        self.assertEqual(self.seen, [
            (["x", "y"], ctx),
            ({"prompt": "hi"}, ctx),
            ({"prompt": "hi", "context": ctx},),
            ({"surface": "footer", "context": ctx},),
            ({"name": "t", "arguments": {"a": 1}, "output": "out", "is_error": True,
              "context": ctx}, ctx),
            ({"name": "t", "arguments": {}, "is_error": False, "context": ctx}, ctx),
        ])

    def test_lifecycle_and_shutdown_handlers(self) -> None:
        ext = self.ext
        ext.on_lifecycle("turn/started")(lambda params: self.record(params))
        ext.on_shutdown(lambda params, ctx: self.record(params, ctx))
        guest = serve()
        guest.on_lifecycle(wit.LifecycleEvent(wit.LifecycleKind.TURN_STARTED, "s", None, "t",
                                              None, None, None, None, None))
        guest.on_lifecycle(wit.LifecycleEvent(wit.LifecycleKind.TURN_SETTLED, "s", None, "t",
                                              None, None, "completed", 5, None))
        guest.on_shutdown()
        self.assertEqual(self.seen, [({"session_id": "s", "turn_id": "t"},), ({}, {})])
        self.assertIn(("log", "warning", "ignored unknown notification",
                       {"method": "turn/settled"}), self.host.calls)


class Replies(unittest.TestCase):
    """What handlers' values and exceptions become."""

    def setUp(self) -> None:
        self.host = fresh()
        from octet_extension import Extension

        self.ext = Extension()

    def test_tool_exceptions_are_results_and_rpc_errors_are_replies(self) -> None:
        from octet_extension import CancelledError, RpcError

        ext = self.ext

        def fail(args):
            raise {"boom": RuntimeError("boom"), "rpc": RpcError(-32042, "no", {"k": 1}),
                   "cancel": CancelledError("mine")}[args["kind"]]

        ext.tool(name="fail", description="d")(fail)
        guest = serve()
        result = tool(guest, "fail", {"kind": "boom"})
        self.assertEqual((texts(result), result.is_error, result.metadata), (["boom"], True, "{}"))
        self.assertIn(("log", "error", "tool handler failed", {"tool": "fail", "error": "boom"}),
                      self.host.calls)
        with self.assertRaises(Err) as raised:
            tool(guest, "fail", {"kind": "rpc"})
        self.assertEqual(error_of(raised), (-32042, "no", {"k": 1}))
        with self.assertRaises(Err) as raised:
            tool(guest, "fail", {"kind": "cancel"})
        self.assertEqual(error_of(raised), (-32800, "request cancelled", {"reason": "mine"}))
        with self.assertRaises(Err) as raised:
            tool(guest, "missing")
        self.assertEqual(error_of(raised)[:2], (-32601, "unknown tool: missing"))

    def test_other_handlers_fail_with_internal_error_and_no_data(self) -> None:
        ext = self.ext
        ext.command(name="c", description="d")(lambda args: 1 / 0)
        ext.hook("before_prompt")(lambda payload: {}["missing"])
        ext.context(lambda params: None.attribute)
        guest = serve()
        for call, logged in [
            (lambda: guest.execute_command("c", [], context()), "command handler failed"),
            (lambda: guest.run_hook("before_prompt", "{}", context()), "hook handler failed"),
            (lambda: guest.collect_context(None, context()), "request handler failed"),
        ]:
            with self.subTest(logged=logged):
                with self.assertRaises(Err) as raised:
                    call()
                self.assertEqual(error_of(raised), (-32603, "internal error", None))
                self.assertTrue(any(c[0] == "log" and c[2] == logged for c in self.host.calls))
        with self.assertRaises(Err) as raised:
            guest.execute_command("nope", [], context())
        self.assertEqual(error_of(raised)[:2], (-32601, "unknown command: nope"))

    def test_results_and_conversions(self) -> None:
        ext = self.ext
        ext.command(name="c", description="d")(lambda args: {
            "text": 5, "notifications": [{"level": "info", "title": None, "message": "m"}],
            "context": [{"label": "l", "content": "c"}]})
        ext.command(name="none", description="d")(lambda args: None)
        ext.hook("before_tool_call")(lambda payload: {"disposition": {"action": "deny",
                                                                      "reason": "no"}})
        ext.hook("after_tool_call")(lambda payload: "continue")
        ext.status(lambda params: {"text": "t", "priority": 3})
        ext.status("footer")(lambda params: "a string")
        ext.renderer("t")(lambda params: params.get("output") or ["x"])
        ext.context(lambda params: {"label": "l", "content": "c"})
        guest = serve()
        cx = context()
        self.assertEqual(guest.execute_command("c", [], cx), wit.CommandResult(
            "5", [wit.Notification(wit.NotifyLevel.INFO, None, "m")],
            [wit.ContextItem("l", "c", wit.Placement.PROMPT_SUFFIX)]))
        self.assertEqual(guest.execute_command("none", [], cx), wit.CommandResult("", [], []))
        self.assertEqual(guest.run_hook("before_tool_call", "{}", cx).disposition,
                         wit.Disposition_Deny("no"))
        self.assertEqual(guest.run_hook("after_response", "{}", cx).disposition,
                         wit.Disposition_Continue())
        # The SDK's texts for values it refuses.
        for call, text in [
            (lambda: guest.run_hook("after_tool_call", "{}", cx),
             "hook handler must return an object"),
            (lambda: guest.collect_status("footer", cx),
             "status handler must return an object or null"),
            (lambda: guest.collect_context(None, cx), "context handler must return an array"),
        ]:
            with self.subTest(text=text), self.assertRaises(Err) as raised:
                call()
            self.assertEqual(error_of(raised)[:2], (-32603, text))
        # The SDK's default surface is "status", whatever was asked.
        self.assertEqual(guest.collect_status("status", cx),
                         wit.StatusItem("status", "t", None, 3))
        render = wit.RenderRequest("t", "{}", None, False)
        self.assertEqual(guest.render_tool(render, cx), [wit.Segment("['x']", None)])
        self.assertEqual(guest.render_tool(wit.RenderRequest("t", "{}", "o", False), cx),
                         [wit.Segment("o", None)])


class ToolResults(unittest.TestCase):
    """The SDK's normalization of tool results, both API versions."""

    def test_api_0_1(self) -> None:
        from octet_guest import results

        self.assertEqual(results.tool_v01("hi"),
                         {"content": "hi", "is_error": False, "metadata": {}})
        self.assertEqual(results.tool_v01(None)["content"], "")
        self.assertEqual(results.tool_v01(["a"])["content"], "['a']")
        self.assertEqual(results.tool_v01({"content": 5, "is_error": 1, "extra": 2}),
                         {"content": "5", "is_error": True, "metadata": {}})

    def test_api_0_2(self) -> None:
        from octet_extension import RpcError, image_content, text_content, tool_result
        from octet_guest import results

        def normalized(value, schema=False, artifacts=False):
            return results.tool_v02(value, output_schema=schema, artifacts=artifacts)

        self.assertEqual(normalized(5), {"content": [text_content(5)], "is_error": False,
                                         "metadata": {}})
        self.assertEqual(normalized(["a"])["content"], [text_content("['a']")])
        self.assertEqual(normalized({"content": "s", "metadata": None})["metadata"], None)
        self.assertEqual(normalized(tool_result(text_content("x"), structured_content={"n": 1}),
                                    schema=True)["structured_content"], {"n": 1})
        self.assertTrue(normalized(tool_result(text_content("x"), is_error=True),
                                   schema=True)["is_error"])
        media = tool_result(text_content("x"), image_content("a", "image/png", alt="alt"))
        self.assertEqual(normalized(media, artifacts=True)["content"][1]["alt"], "alt")
        for value, text, kwargs in [
            (None, "must not be empty", {}),
            ({"content": []}, "must not be empty", {}),
            ({"content": [text_content("x")] * 257}, "exceeds 256 parts", {}),
            ({"content": [image_content("a", "image/png")]}, "requires an explicit text part", {}),
            (media, "requires artifacts negotiation", {}),
            ({"content": [{"type": "text", "text": "x", "extra": 1}]},
             "unknown text content fields: ['extra']", {}),
            ({"content": [{"type": "video"}]}, "unknown tool content type: video", {}),
            ({"content": "x", "extra": 1}, "unknown API 0.2 tool result fields: ['extra']", {}),
            ({"content": "x", "structured_content": {}}, "requires a declared output_schema", {}),
            ({"content": "x"}, "tool declared output_schema but omitted structured_content",
             {"schema": True}),
            ({"content": "x", "is_error": "yes"}, "tool is_error must be a boolean", {}),
            ({"content": "x", "metadata": []}, "tool metadata must be an object or null", {}),
            ({"content": {}}, "API 0.2 tool content must be an array", {}),
        ]:
            with self.subTest(text=text), self.assertRaises(RpcError) as raised:
                normalized(value, **kwargs)
            self.assertEqual(raised.exception.code, -32603)
            self.assertIn(text, raised.exception.message)

    def test_helpers(self) -> None:
        from octet_extension import (
            audio_content,
            image_content,
            persistence_metadata,
            post_mutation_rescan,
            provider_retry_delay,
            text_content,
            tool_result,
        )

        self.assertEqual(tool_result(text_content("a"), text_content("b")), {
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "is_error": False, "metadata": {}})
        self.assertNotIn("structured_content", tool_result())
        self.assertEqual(tool_result(structured_content=None)["structured_content"], None)
        with self.assertRaises(TypeError):
            image_content("a", "image/png", "positional alt")
        self.assertEqual(audio_content("a", "audio/wav", transcript="t")["transcript"], "t")
        for call, text in [(lambda: image_content("", "image/png"), "artifact_id"),
                           (lambda: audio_content("a", "wav"), "mime_type"),
                           (lambda: post_mutation_rescan([]), "1 through 32"),
                           (lambda: provider_retry_delay(-1), "unsigned 64-bit"),
                           (lambda: persistence_metadata(object()), "JSON-serializable")]:
            with self.subTest(text=text), self.assertRaisesRegex(ValueError, text):
                call()
        self.assertEqual(persistence_metadata({"a": 1}, public=True),
                         {"public": True, "value": {"a": 1}})
        self.assertEqual(post_mutation_rescan(["r"]),
                         {"action": "request_rescan", "resource_ids": ["r"]})
        self.assertEqual(provider_retry_delay(5), {"delay": {"additional_delay_ms": 5}})

    def test_typed_hook_results(self) -> None:
        from octet_extension import RpcError, persistence_metadata
        from octet_guest import results

        self.assertEqual(
            results.hook("before_persistence", {"persistence_metadata": persistence_metadata(1)}),
            {"disposition": {"action": "continue"}, "context": [], "notifications": [],
             "persistence_metadata": {"public": False, "value": 1}})
        # Extras of other hooks are dropped, like the SDK drops them.
        self.assertNotIn("provider_retry",
                         results.hook("post_mutation", {"provider_retry": "retry"}))
        with self.assertRaisesRegex(RpcError, "invalid provider_retry advice"):
            results.hook("provider_retry", {"provider_retry": "later"})
        with self.assertRaisesRegex(RpcError, "invalid post_mutation rescan request"):
            results.hook("post_mutation", {"post_mutation": {"action": "request_rescan",
                                                             "resource_ids": []}})


class Frames(unittest.TestCase):
    def test_a_smaller_max_message_bytes_bounds_the_reply_like_the_sdk(self) -> None:
        fresh()
        from octet_extension import Extension

        ext = Extension(max_message_bytes=512)
        ext.tool(name="big", description="d")(lambda args: "x" * 600)
        ext.tool(name="small", description="d")(lambda args: "x")
        guest = serve()
        with self.assertRaises(Err) as raised:
            tool(guest, "big")
        self.assertEqual(error_of(raised)[:2], (-32603, "JSON-RPC message exceeds 512 bytes"))
        self.assertEqual(texts(tool(guest, "small")), ["x"])


class Logging(unittest.TestCase):
    def test_records_like_the_sdks_logger(self) -> None:
        host = fresh()
        from octet_extension import Extension, Logger

        stream = io.StringIO()
        Logger(stream).warning("diagnostic", request_id=4, odd=object)
        self.assertEqual(json.loads(stream.getvalue())["request_id"], 4)
        self.assertEqual(list(json.loads(stream.getvalue()))[:2], ["level", "message"])
        Logger(stream).debug("dropped")
        self.assertEqual(len(stream.getvalue().splitlines()), 1)
        with self.assertRaisesRegex(ValueError, "unknown log level: loud"):
            Logger(stream).log("loud", "x")
        ext = Extension()
        serve()
        ext.log.info("served", n=1)
        ext.log.debug("hidden")
        Logger(level="debug").debug("shown")
        self.assertEqual(host.named("log"), [("log", "info", "served", {"n": 1}),
                                             ("log", "debug", "shown", None)])


if __name__ == "__main__":
    unittest.main()
