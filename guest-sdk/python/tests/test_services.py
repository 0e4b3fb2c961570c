"""Native unit tests of the SDK's host calls and API 0.2 services (the WIT
imports replaced by a recorder): the SDK's checks and texts, what reaches
the imports, the catalog bookkeeping and the agents' results.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import hashlib
import json
import re
import unittest

from harness import Err, error_of, fresh, serve, texts, tool, wit
from wit_world.imports import agents, policy, tools_catalog

ALL = ["request_cancellation", "content_parts", "request_progress", "progress_decoration",
       "artifacts", "policy_intents", "approvals", "secrets", "dynamic_tools", "agent_sessions",
       "agent_model_selection_v1"]


def run_in_tool(body, *, api="0.2", features=ALL, **contributes):
    """Runs ``body(ext)`` as a tool handler; returns its value or the
    exception it raised."""
    from octet_extension import Extension

    ext = Extension(supported_features=None)
    outcome = {}

    def handler(args):
        try:
            outcome["value"] = body(ext)
        except Exception as error:  # noqa: BLE001 - reported to the test
            outcome["error"] = error
        return "done"

    ext.tool(name="t", description="d")(handler)
    guest = serve(api, features=features, **contributes)
    tool(guest, "t", request_id=42)
    return outcome.get("error", outcome.get("value")), ext


class HostCalls(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_notify_checks_level_and_declaration(self) -> None:
        value, _ = run_in_tool(lambda ext: ext.notify("ready", level="success", title="T"),
                               notifications=True)
        self.assertIsNone(value)
        self.assertEqual(self.host.named("notify"),
                         [("notify", wit.Notification(wit.NotifyLevel.SUCCESS, "T", "ready"))])
        error, _ = run_in_tool(lambda ext: ext.notify("x", level="loud"))
        self.assertEqual(str(error), "unknown notification level: loud")
        error, _ = run_in_tool(lambda ext: ext.send_notification("x"))
        self.assertEqual((error.code, error.message), (-32601, "notifications are not declared"))

    def test_confirm_and_input(self) -> None:
        value, _ = run_in_tool(lambda ext: ext.confirm("Go?", detail="d", destructive=True),
                               confirmations=True)
        self.assertIs(value, True)
        self.assertEqual(self.host.named("confirm"),
                         [("confirm", wit.Confirmation("Go?", "d", True, False))])
        error, _ = run_in_tool(lambda ext: ext.confirm("Go?"))
        self.assertEqual(error.message, "confirmations are not declared")
        error, _ = run_in_tool(lambda ext: ext.confirm("Go?", parent_request_id=9),
                               confirmations=True)
        self.assertEqual(error.code, -32602)
        self.assertIn("not the request this handler serves (42)", error.message)
        value, _ = run_in_tool(lambda ext: ext.request_input("Password:", secret=True))
        self.assertEqual((value, self.host.named("request_input")),
                         ("typed", [("request_input", "Password:", True)]))
        for prompt, kind, text in [(3, TypeError, "input prompt must be a string"),
                                   ("  ", ValueError, "input prompt must be non-empty"),
                                   ("x" * (16 * 1024 + 1), ValueError, "16 KiB bound")]:
            error, _ = run_in_tool(lambda ext, prompt=prompt: ext.request_input(prompt))
            self.assertIsInstance(error, kind)
            self.assertIn(text, str(error))
        self.host.answers["request_input"] = "v" * (256 * 1024 + 1)
        error, _ = run_in_tool(lambda ext: ext.request_input("Value:"))
        self.assertEqual(error.message, "input response exceeds the 256 KiB bound")
        error, _ = run_in_tool(lambda ext: ext.request_input("Value:"), api="0.1")
        self.assertEqual((error.code, error.message),
                         (-32601, "input/request requires extension API 0.2"))

    def test_a_refusal_or_cancellation_from_the_shim_is_the_sdks_exception(self) -> None:
        from octet_extension import CancelledError

        self.host.fail["confirm"] = wit.Error_Failed("invalid confirmation response")
        error, _ = run_in_tool(lambda ext: ext.confirm("Go?"), confirmations=True)
        self.assertEqual((error.code, error.message), (-32603, "invalid confirmation response"))
        self.host.fail["confirm"] = wit.Error_Cancelled()
        self.host.cancelled = True
        error, _ = run_in_tool(lambda ext: ext.confirm("Go?"), confirmations=True)
        self.assertIsInstance(error, CancelledError)
        self.assertEqual(error.data, {"reason": "user"})

    def test_progress_numbers_validates_and_is_request_scoped(self) -> None:
        def report(ext):
            return [
                ext.progress(message="m", current=1, total=2, unit="files"),
                ext.report_progress({"type": "output", "stream": "stderr", "encoding": "base64",
                                     "data": "AAE="}),
                ext.progress_decoration("Scanning", "src/"),
            ]

        value, _ = run_in_tool(report)
        self.assertEqual(value, [1, 2, 3])
        events = [call[1] for call in self.host.named("progress")]
        self.assertEqual(events[0], wit.ProgressEvent_Status(
            wit.ProgressStatus("m", 1, 2, "files")))
        self.assertEqual(events[1], wit.ProgressEvent_Output(
            wit.ProgressOutput(wit.OutputStream.STDERR, b"\x00\x01")))
        self.assertEqual(events[2], wit.ProgressEvent_Decoration(
            wit.ProgressDecoration("Scanning", "src/")))
        for event, text in [
            ({"type": "status"}, "status progress requires a string message"),
            ({"type": "status", "message": "m", "current": -1}, "non-negative integer"),
            ({"type": "output", "stream": "tty", "encoding": "utf8", "data": ""}, "stdout or stderr"),
            ({"type": "output", "stream": "stdout", "encoding": "base64", "data": "!"},
             "not valid base64"),
            ({"type": "decoration", "label": "a\x07"}, "decoration progress label is invalid"),
            ({"type": "status", "message": "m", "extra": 1}, "unknown progress event fields"),
            ({"type": "sparkle"}, "status, output, or decoration"),
        ]:
            error, _ = run_in_tool(lambda ext, event=event: ext.progress(event))
            self.assertIsInstance(error, ValueError, event)
            self.assertIn(text, str(error))
        error, _ = run_in_tool(lambda ext: ext.progress(message="m", request_id=3))
        self.assertEqual(error.code, -32602)
        self.assertIn("unknown progress request_id", error.message)
        error, _ = run_in_tool(lambda ext: ext.progress(message="m"),
                               features=["request_cancellation"])
        self.assertEqual(error.code, -32601)
        # octet's own SDK's text, unchanged (same frames for seed apps).
        self.assertEqual(error.message,
                         "API 0.2 feature is not negotiated: request_progress")
        error, _ = run_in_tool(lambda ext: ext.progress_decoration("x"),
                               features=["request_progress"])
        self.assertEqual(error.message,
                         "API 0.2 feature is not negotiated: progress_decoration")

    def test_cancellation_token(self) -> None:
        from octet_extension import CancelledError, current_cancellation, current_request_id

        def look(ext):
            token = current_cancellation()
            before = (token.cancelled, token.reason, token.wait(0.25), current_request_id())
            self.host.cancelled = True
            after = (token.cancelled, token.reason, token.wait(None))
            try:
                token.raise_if_cancelled()
            except CancelledError as error:
                after += (error.code, error.data)
            return before, after, token

        (before, after, token), ext = run_in_tool(look)
        self.assertEqual(before, (False, None, False, 42))
        self.assertEqual(after, (True, "user", True, -32800, {"reason": "user"}))
        self.assertEqual(self.host.named("sleep"), [("sleep", 250), ("sleep", 60000)])
        # After its request the token keeps its last state.
        self.host.cancelled = False
        self.assertEqual((token.cancelled, token.reason), (True, "user"))
        self.assertIsNone(current_cancellation())
        self.assertIsNone(ext.cancellation)
        self.assertIsNone(ext.request_id)

    def test_presentation(self) -> None:
        def present(ext):
            ext.publish_presentation({"revision": 1})
            ext.presentation({"revision": 2}, resource_owner={
                "session_id": "s", "extension_instance_id": "i", "process_generation": 2})
            for snapshot, kwargs in [({"revision": 2}, {}), ({"revision": 2**53}, {}),
                                     ({"revision": 3, "extra": 1}, {}),
                                     ({"revision": 3}, {"resource_owner": {"session_id": "s"}})]:
                try:
                    ext.publish_presentation(snapshot, **kwargs)
                except ValueError as error:
                    yield str(error)

        value, _ = run_in_tool(lambda ext: list(present(ext)), presentation=True)
        self.assertEqual(value, [
            "presentation revision must increase monotonically",
            "presentation revision must be a portable non-negative integer",
            "unknown presentation snapshot fields: ['extra']",
            "presentation resource_owner must contain the exact owner triple",
        ])
        calls = self.host.named("present")
        self.assertEqual(calls[0], ("present", '{"revision":1}', None))
        self.assertEqual(calls[1][2], wit.ResourceOwner("s", "i", 2))
        error, _ = run_in_tool(lambda ext: ext.publish_presentation({"revision": 0}))
        self.assertEqual(error.message, "presentation are not declared")
        error, _ = run_in_tool(lambda ext: ext.publish_presentation({"revision": 0}), api="0.1")
        self.assertEqual(error.message, "semantic presentation requires extension API 0.2")


class Services(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_artifacts(self) -> None:
        from octet_extension import UnsupportedInComponent

        digest = hashlib.sha256(b"png").hexdigest()
        value, _ = run_in_tool(lambda ext: ext.publish_artifact(
            mime_type="image/png", data=b"png", size=3, sha256=digest.upper()))
        self.assertEqual((value, self.host.named("publish")),
                         ("artifact_3", [("publish", "image/png", b"png")]))
        for kwargs, kind, text in [
            ({"mime_type": "png", "data": b""}, ValueError, "mime_type must be a media type"),
            ({"mime_type": "image/png"}, ValueError, "provide exactly one of data or path"),
            ({"mime_type": "image/png", "data": 3}, TypeError, "artifact data must be bytes"),
            ({"mime_type": "image/png", "data": b"x", "size": 2}, ValueError, "size does not"),
            ({"mime_type": "image/png", "path": "../x"}, ValueError, "cannot traverse parents"),
            ({"mime_type": "image/png", "path": "shot.png"}, UnsupportedInComponent,
             "cannot see the host's scratch directory"),
        ]:
            error, _ = run_in_tool(lambda ext, kwargs=kwargs: ext.publish_artifact(**kwargs))
            self.assertIsInstance(error, kind, kwargs)
            self.assertIn(text, str(error))
        error, _ = run_in_tool(lambda ext: ext.publish_artifact(mime_type="image/png", data=b"x"),
                               features=[])
        self.assertEqual(error.message, "API 0.2 feature is not negotiated: artifacts")

    def test_policy_and_secrets(self) -> None:
        intent = {"kind": "external_side_effect", "operation": "issues.create",
                  "target": {"repo": "r"}, "data_classes": ["user_text"],
                  "adapter_hints": {"destructive": True}}
        value, _ = run_in_tool(lambda ext: ext.evaluate_policy(intent))
        self.assertEqual(value, {"decision": "ask", "approval_token": "ab" * 32})
        sent = self.host.named("evaluate")[0]
        self.assertEqual(sent[1], policy.Intent("external_side_effect", "issues.create",
                                                '{"repo":"r"}', ["user_text"], None, True))
        self.host.answers["evaluate"] = lambda i, t: policy.Verdict(policy.Decision.ALLOW, None)
        value, _ = run_in_tool(lambda ext: ext.evaluate_policy(intent, approval_token="ab" * 32))
        self.assertEqual(value, {"decision": "allow"})
        for bad, text in [({**intent, "kind": " "}, "kind must be non-empty"),
                          ({**intent, "target": []}, "target must be an object"),
                          ({**intent, "extra": 1}, "unknown policy intent fields"),
                          ({**intent, "adapter_hints": {"x": 1}}, "unknown adapter_hints")]:
            error, _ = run_in_tool(lambda ext, bad=bad: ext.evaluate_policy(bad))
            self.assertIn(text, str(error))
        error, _ = run_in_tool(lambda ext: ext.evaluate_policy(intent, approval_token="x"))
        self.assertIn("64 lowercase hexadecimal", str(error))
        error, _ = run_in_tool(lambda ext: ext.evaluate_policy(intent, approval_token="ab" * 32),
                               features=["policy_intents"])
        self.assertEqual(error.message, "API 0.2 feature is not negotiated: approvals")
        value, _ = run_in_tool(lambda ext: ext.get_secret("tracker.api_key"))
        self.assertEqual((value, self.host.named("secret")),
                         ("s3cret", [("secret", "tracker.api_key")]))
        error, _ = run_in_tool(lambda ext: ext.get_secret("9bad"))
        self.assertEqual(str(error), "secret name must be a valid extension identifier")
        self.host.answers["secret"] = "s" * (64 * 1024 + 1)
        error, _ = run_in_tool(lambda ext: ext.get_secret("big"))
        self.assertEqual(error.message, "invalid secret lookup response")
        self.host.fail["secret"] = wit.Error_Rpc(wit.RpcError(-32004, "secret is unavailable",
                                                              None))
        error, _ = run_in_tool(lambda ext: ext.get_secret("missing"))
        self.assertEqual((error.code, error.message), (-32004, "secret is unavailable"))

    def test_dynamic_tools_keep_the_sdks_revisions(self) -> None:
        from octet_extension import Extension, RpcError

        self.host.catalog = ["base"]
        ext = Extension()
        ext.tool(name="base", description="Base")(lambda args: "old")
        ext.dynamic_tool(name="lint", description="Lint")(lambda args: "lint")
        guest = serve(features=ALL)
        update = ext.register_tool(name="base", description="New", handler=lambda a: "new",
                                   parameters={"type": "object", "properties": {}})
        self.assertEqual((update, ext.tool_catalog_revision),
                         ({"revision": 1, "tools": ["base"]}, 1))
        definition = self.host.named("register")[0][1][0]
        self.assertEqual((definition.description, definition.parameters),
                         ("New", '{"type":"object","properties":{}}'))
        self.assertEqual(texts(tool(guest, "base", revision=0)), ["old"])
        self.assertEqual(texts(tool(guest, "base", revision=1)), ["new"])
        self.assertEqual(texts(tool(guest, "base")), ["new"])
        ext.register_tools([{"name": "lint"}])  # the module-level handler
        self.assertEqual(texts(tool(guest, "lint", revision=2)), ["lint"])
        ext.unregister_tools("lint")
        with self.assertRaises(Err) as raised:
            tool(guest, "lint", revision=3)
        self.assertEqual(error_of(raised)[:2], (-32601, "unknown tool: lint"))
        # The host refuses: the local catalog is unchanged.
        self.host.fail["register"] = wit.Error_Rpc(wit.RpcError(-32602, "catalog rejected", None))
        with self.assertRaises(RpcError) as refused:
            ext.register_tool(name="base", description="Newer", handler=lambda a: "newer")
        self.assertEqual(refused.exception.code, -32602)
        self.assertEqual((ext.tool_catalog_revision, texts(tool(guest, "base"))), (3, ["new"]))
        del self.host.fail["register"]
        # A revision this instance never committed (another made it): an
        # older revision's handler never answers for it.
        with self.assertRaises(Err) as raised:
            tool(guest, "base", revision=9)
        self.assertEqual(error_of(raised)[:2],
                         (-32602, "unknown or retired tool catalog revision: 9"))
        # Eight committed revisions are kept.
        for n in range(8):
            ext.register_tool(name="base", description=f"v{n}", handler=lambda a, *, n=n: f"v{n}")
        with self.assertRaises(Err) as raised:
            tool(guest, "base", revision=1)
        self.assertEqual(error_of(raised)[:2],
                         (-32602, "unknown or retired tool catalog revision: 1"))
        self.assertEqual(texts(tool(guest, "base", revision=4)), ["v0"])

    def test_dynamic_tool_checks(self) -> None:
        from octet_extension import Extension

        ext = Extension()
        serve(features=ALL)
        for call, kind, text in [
            (lambda: ext.register_tools("x"), TypeError, "sequence of tool definitions"),
            (lambda: ext.register_tools([]), ValueError, "requires at least one tool"),
            (lambda: ext.register_tools([{"name": "a", "bogus": 1}]), ValueError,
             "unknown dynamic tool fields: ['bogus']"),
            (lambda: ext.register_tools([{"name": "a", "description": "d"}]), TypeError,
             "require a callable handler"),
            (lambda: ext.register_tool(name="a", handler=print), ValueError,
             "require name and description"),
            (lambda: ext.unregister_tools(), ValueError, "requires at least one tool name"),
            (lambda: ext.unregister_tools("a", "a"), ValueError, "contains duplicate names"),
        ]:
            with self.subTest(text=text), self.assertRaisesRegex(kind, re.escape(text)):
                call()
        self.host.revision = 5  # the host moved on without this instance
        self.host.answers["register"] = lambda d: tools_catalog.CatalogUpdate(6, ["a"])
        self.assertEqual(ext.register_tool(name="a", description="d", handler=print),
                         {"revision": 6, "tools": ["a"]})
        self.host.answers["register"] = lambda d: tools_catalog.CatalogUpdate(9, ["a"])
        with self.assertRaisesRegex(Exception, "expected 7, got 9"):
            ext.register_tool(name="a", description="d", handler=print)
        fresh()
        ext = Extension()
        serve(features=["request_cancellation"])
        with self.assertRaisesRegex(Exception, "not negotiated: dynamic_tools"):
            ext.register_tool(name="a", description="d", handler=print)


class Agents(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def spawn(self, ext, **overrides):
        arguments = dict(task_name="research", message="Find it", idempotency_key="k",
                         tools=["read", "search"], max_depth=1, max_concurrent_children=2,
                         max_output_bytes=8192, max_turns=8, timeout_ms=300_000,
                         profile="review", fingerprint="f" * 64)
        arguments.update(overrides)
        return ext.spawn_agent(**arguments)

    def test_spawn_returns_the_hosts_result(self) -> None:
        status = agents.AgentStatus("pending", None, None)
        details = {"agent_id": "a1", "agent_path": "/root/research", "status": {"state": "pending"},
                   "policy": {"max_depth": 1}}
        self.host.answers["spawn"] = agents.Spawned("a1", "/root/research", status,
                                                    json.dumps(details))
        value, _ = run_in_tool(self.spawn)
        self.assertEqual(value, details)
        request = self.host.named("spawn")[0][1]
        self.assertEqual((request.task_name, request.profile, request.idempotency_key),
                         ("research", "review", "k"))
        self.assertEqual(request.policy.tools, [agents.AgentTool.READ, agents.AgentTool.SEARCH])
        self.assertEqual((request.policy.max_turns, request.policy.model_selection), (8, None))

    def test_the_sdks_bounds(self) -> None:
        for overrides, text in [
            ({"task_name": " "}, "agent task_name must be non-empty"),
            ({"profile": "Bad Profile"}, "bounded lowercase stable identifier"),
            ({"fingerprint": "x"}, "lowercase SHA-256 digest"),
            ({"tools": "read"}, "duplicate-free subset"),
            ({"tools": ["read", "read"]}, "duplicate-free subset"),
            ({"max_depth": 2}, "agent max_depth must be an integer between 1 and 1"),
            ({"max_output_bytes": 100}, "between 512 and 16384"),
            ({"max_tokens": 10}, "between 1000 and 64000"),
            ({"timeout_ms": 1}, "null or an integer between 5000"),
        ]:
            error, _ = run_in_tool(lambda ext, o=overrides: self.spawn(ext, **o))
            self.assertIsInstance(error, ValueError, overrides)
            self.assertIn(text, str(error))
        self.assertEqual(self.host.named("spawn"), [])
        error, _ = run_in_tool(lambda ext: ext.wait_agents(timeout_ms=0))
        self.assertEqual(str(error), "agent timeout_ms must be between 1 and 60000")
        error, _ = run_in_tool(lambda ext: ext.list_agents(), features=["request_cancellation"])
        self.assertEqual(error.message, "API 0.2 feature is not negotiated: agent_sessions")
        error, _ = run_in_tool(lambda ext: self.spawn(ext, model_selection={"model": "m"}),
                               features=["agent_sessions"])
        self.assertEqual(error.message,
                         "API 0.2 feature is not negotiated: agent_model_selection_v1")

    def test_the_other_results(self) -> None:
        record = agents.AgentRecord("a1", "/root/r", agents.AgentStatus("running", None, None),
                                    '{"agent_id":"a1","task_name":"r"}')
        snapshot = agents.Snapshot("p", "o", None, [record])
        self.host.answers.update(
            send=agents.Steered("a1", agents.SteeringDelivery.QUEUED),
            follow_up=agents.FollowedUp("a1", "/root/r", agents.FollowUpDelivery.NEW_RUN),
            list_agents=snapshot,
            wait=agents.Waited(True, snapshot),
            interrupt=agents.Interrupted("a1", "/root/r", '{"state":"running"}', True),
            list_models=agents.ModelList([agents.ModelInfo("m", "p", None, ["low"], 8, 4)], False),
        )
        value, _ = run_in_tool(lambda ext: [
            ext.send_agent_message("a1", "more"), ext.follow_up_agent("a1", "again"),
            ext.list_agents(), ext.wait_agents(timeout_ms=250), ext.interrupt_agent("a1"),
            ext.list_agent_models(query="m", limit=5)])
        listed = {"agents": [{"agent_id": "a1", "task_name": "r"}], "principal": "p",
                  "resource_owner": "o"}
        self.assertEqual(value, [
            {"delivered_to": "a1", "delivery": "queued"},
            {"agent_id": "a1", "agent_path": "/root/r", "delivery": "new_run"},
            listed,
            {"timed_out": True, "snapshot": listed},
            {"agent_id": "a1", "agent_path": "/root/r", "previous_status": {"state": "running"},
             "interrupt_requested": True},
            {"models": [{"model": "m", "provider": "p", "reasoning": ["low"],
                         "context_window": 8, "max_output_tokens": 4}], "truncated": False},
        ])
        self.assertEqual(self.host.named("wait"), [("wait", 250)])


if __name__ == "__main__":
    unittest.main()
