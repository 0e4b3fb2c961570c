"""Native unit tests of the API 0.2 service wrappers (artifacts, the dynamic
tool catalog, secrets, policy, presentation) with the WIT imports replaced by
recorders, like test_sdk.py.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import unittest

from test_sdk import Recorder, context, setUpModule, tearDownModule  # noqa: F401


class Services(Recorder):
    """The host imports plus the service imports; `fail` makes the named
    service raise that WIT error instead of answering."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = {}
        self.revision = 0
        self.catalog = ["base"]

    def install(self) -> None:
        super().install()
        from componentize_py_types import Err
        from wit_world.imports import artifacts, policy, presentation, secrets, tools_catalog

        def answer(service, value):
            def run(*args):
                self.calls.append((service, *args))
                if service in self.fail:
                    raise Err(self.fail[service])
                return value(*args) if callable(value) else value

            return run

        def register(definitions):
            self.revision += 1
            self.catalog += [d.name for d in definitions if d.name not in self.catalog]
            return tools_catalog.CatalogUpdate(self.revision, list(self.catalog))

        def unregister(names):
            self.revision += 1
            self.catalog = [n for n in self.catalog if n not in names]
            return tools_catalog.CatalogUpdate(self.revision, list(self.catalog))

        artifacts.publish = answer("publish", lambda mime, data: f"artifact_{len(data)}")
        tools_catalog.register = answer("register", register)
        tools_catalog.unregister = answer("unregister", unregister)
        tools_catalog.current = lambda: tools_catalog.CatalogUpdate(
            self.revision, list(self.catalog)
        )
        secrets.get = answer("secret", lambda name: "s3cret")
        policy.evaluate = answer(
            "evaluate", lambda intent, token: policy.Verdict(policy.Decision.ASK, "ab" * 32)
        )
        presentation.update = answer("present", None)


class ServicesTest(unittest.TestCase):
    def setUp(self) -> None:
        from octet_guest import extension

        extension._EXTENSIONS.clear()
        self.host = Services()
        self.host.install()

    def guest(self):
        from octet_guest.component import Guest

        return Guest()

    def call(self, guest, name, arguments="{}"):
        from wit_world.imports import types as wit

        return guest.call_tool(wit.ToolCall(name, arguments, None), context())

    def test_feature_declarations(self) -> None:
        from octet_guest import Extension

        ext = Extension("demo", features=["request_progress"])
        ext.uses_artifacts().uses_dynamic_tools().uses_secrets().uses_approvals()
        ext.uses_policy().uses_feature("artifacts")
        self.assertEqual(
            self.guest().describe().features,
            [
                "request_progress",
                "artifacts",
                "dynamic_tools",
                "secrets",
                "policy_intents",
                "approvals",
            ],
        )

    def test_publish_artifact_and_reference_it(self) -> None:
        from octet_guest import Extension, image_content, publish_artifact
        from wit_world.imports import types as wit

        ext = Extension("demo").uses_artifacts()

        @ext.tool("chart")
        def chart(args):
            artifact_id = ext.publish_artifact("image/png", bytearray(b"\x89PNG\r\n\x1a\n"))
            return ["chart", image_content(artifact_id, "image/png", alt="c")]

        result = self.call(self.guest(), "chart")
        self.assertEqual(self.host.calls[-1], ("publish", "image/png", b"\x89PNG\r\n\x1a\n"))
        self.assertEqual(
            result.content,
            [
                wit.ContentPart_Text("chart"),
                wit.ContentPart_Image(wit.ImagePart("artifact_8", "image/png", "c")),
            ],
        )
        self.assertEqual(publish_artifact("audio/wav", memoryview(b"RIFF")), "artifact_4")
        self.assertIsInstance(self.host.calls[-1][2], bytes)

    def test_dynamic_tools_are_not_described_but_dispatched(self) -> None:
        from octet_guest import Extension, current_tools, register_tools

        ext = Extension("demo").uses_dynamic_tools()
        ext.tool("base")(lambda args: "base")

        @ext.dynamic_tool("lint", description="Lint", output_schema={"type": "object"})
        def lint(args, ctx):
            return f"lint {args['path']} for {ctx.request_id}"

        with self.assertRaisesRegex(ValueError, "registered twice"):
            ext.tool("lint")(lambda args: "again")
        with self.assertRaisesRegex(ValueError, "registered twice"):
            ext.dynamic_tool("base")(lambda args: "again")

        guest = self.guest()
        self.assertEqual([t.name for t in guest.describe().tools], ["base"])
        # Served by name whatever the catalog: the shim pins the revision.
        result = self.call(guest, "lint", '{"path":"src"}')
        self.assertEqual(result.content[0].value, "lint src for 7")

        update = ext.register_tools(["lint", {"name": "later", "parameters": {"type": "object"}}])
        self.assertEqual(update, {"revision": 1, "tools": ["base", "lint", "later"]})
        self.assertEqual(update.revision, 1)
        sent = self.host.calls[-1][1]
        self.assertEqual(
            [(d.name, d.description, d.parameters, d.output_schema) for d in sent],
            [
                ("lint", "Lint", '{"type":"object"}', '{"type":"object"}'),
                ("later", "later", '{"type":"object"}', None),
            ],
        )
        # One name, a module-level call (the served extension's registry).
        self.assertEqual(register_tools("lint").revision, 2)
        with self.assertRaisesRegex(ValueError, "no tool named 'ghost'"):
            ext.register_tools(["ghost"])
        self.assertEqual(ext.unregister_tools("later").tools, ["base", "lint"])
        self.assertEqual(self.host.calls[-1], ("unregister", ["later"]))
        self.assertEqual(current_tools(), {"revision": 3, "tools": ["base", "lint"]})
        self.assertEqual(ext.current_tools().tools, ["base", "lint"])
        with self.assertRaises(Exception):
            self.call(guest, "ghost")

    def test_secret_policy_and_presentation(self) -> None:
        from octet_guest import Extension, intent
        from wit_world.imports import policy, types as wit

        ext = Extension("demo").uses_secrets().uses_approvals()
        self.assertEqual(ext.get_secret("tracker.api_key"), "s3cret")
        self.assertEqual(self.host.calls[-1], ("secret", "tracker.api_key"))

        wanted = intent(
            "external_side_effect",
            "issues.create",
            {"label": "Open"},
            data_classes=["user_text"],
            destructive=True,
        )
        verdict = ext.evaluate_policy(wanted, token="cd" * 32)
        self.assertEqual(verdict, {"decision": "ask", "approval_token": "ab" * 32})
        self.assertFalse(verdict.allowed)
        self.assertEqual(
            self.host.calls[-1],
            (
                "evaluate",
                policy.Intent(
                    "external_side_effect",
                    "issues.create",
                    '{"label":"Open"}',
                    ["user_text"],
                    None,
                    True,
                ),
                "cd" * 32,
            ),
        )
        with self.assertRaisesRegex(ValueError, "unknown keys token"):
            ext.evaluate_policy({"kind": "k", "operation": "o", "token": "x"})

        ext.update_presentation({"revision": 1, "status": {"state": "idle", "label": "Idle"}})
        self.assertEqual(
            self.host.calls[-1],
            ("present", '{"revision":1,"status":{"state":"idle","label":"Idle"}}', None),
        )
        cx = wit.CallContext(
            9, "/w", None, wit.ResourceOwner("s", "i", 3), "{}"
        )
        from octet_guest.values import from_call_context

        ctx = from_call_context(cx)
        owner = wit.ResourceOwner("s", "i", 3)
        for given in (ctx, ctx.resource_owner, owner):
            ext.update_presentation({"revision": 2}, owner=given)
            self.assertEqual(self.host.calls[-1], ("present", '{"revision":2}', owner))
        with self.assertRaisesRegex(ValueError, "no resource owner"):
            ext.update_presentation({"revision": 3}, owner=from_call_context(context()))
        with self.assertRaisesRegex(TypeError, "snapshot is not JSON"):
            ext.update_presentation({"revision": object()})

    def test_host_errors_reach_the_handler_as_sdk_errors(self) -> None:
        from componentize_py_types import Err
        from octet_guest import Extension, HostError, InvalidParams, RpcError
        from wit_world.imports import types as wit

        ext = Extension("demo")
        self.host.fail = {
            "secret": wit.Error_Rpc(wit.RpcError(-32004, "secret is unavailable", None)),
            "publish": wit.Error_InvalidParams("artifact exceeds 20 MiB"),
            "register": wit.Error_Rpc(
                wit.RpcError(-32601, "the `dynamic_tools` feature was not negotiated", None)
            ),
            "present": wit.Error_Failed("presentation update failed"),
        }
        with self.assertRaises(RpcError) as unavailable:
            ext.get_secret("x")
        self.assertEqual((unavailable.exception.code, unavailable.exception.message),
                         (-32004, "secret is unavailable"))
        with self.assertRaisesRegex(InvalidParams, "20 MiB"):
            ext.publish_artifact("image/png", b"")
        with self.assertRaises(RpcError) as missing:
            ext.register_tools([{"name": "x"}])
        self.assertEqual(missing.exception.code, -32601)
        with self.assertRaisesRegex(HostError, "presentation update failed"):
            ext.update_presentation({"revision": 1})

        # Uncaught in a tool, each is answered as the host's error.
        ext.tool("secret")(lambda args: ext.get_secret("x"))
        ext.tool("big")(lambda args: ext.publish_artifact("image/png", b""))
        guest = self.guest()
        with self.assertRaises(Err) as answered:
            self.call(guest, "secret")
        self.assertEqual(
            answered.exception.value,
            wit.Error_Rpc(wit.RpcError(-32004, "secret is unavailable", None)),
        )
        with self.assertRaises(Err) as answered:
            self.call(guest, "big")
        self.assertEqual(
            answered.exception.value, wit.Error_InvalidParams("artifact exceeds 20 MiB")
        )

    def test_agents(self) -> None:
        from octet_guest import agents as sdk_agents

        if sdk_agents.wit_agents is None:
            self.skipTest("the WIT package has no agents interface")
        from componentize_py_types import Err
        from octet_guest import Extension, RpcError
        from wit_world.imports import agents
        from wit_world.imports import types as wit

        calls = self.host.calls
        status = agents.AgentStatus("running", None, None)
        record = agents.AgentRecord("a1", "/root/a1", status, '{"task_name":"scan"}')
        snapshot = agents.Snapshot("ext:demo", "owner", None, [record])

        def spawn(request):
            calls.append(("spawn", request))
            return agents.Spawned("a1", "/root/a1", status, '{"policy":{}}')

        agents.spawn = spawn
        agents.send = lambda target, message: agents.Steered(
            target, agents.SteeringDelivery.QUEUED
        )
        agents.follow_up = lambda target, message: agents.FollowedUp(
            "a1", "/root/a1", agents.FollowUpDelivery.NEW_RUN
        )
        agents.list_agents = lambda: snapshot
        agents.wait = lambda ms: calls.append(("wait", ms)) or agents.Waited(True, snapshot)

        def interrupt(target):
            raise Err(wit.Error_Rpc(wit.RpcError(-32002, "unknown agent", None)))

        agents.interrupt = interrupt
        agents.list_models = lambda query, limit: agents.ModelList(
            [agents.ModelInfo("m", "p", None, ["low"], 1000, 100)], False
        )

        ext = Extension("demo").uses_agents(model_selection=True)
        self.assertEqual(
            self.guest().describe().features, ["agent_sessions", "agent_model_selection_v1"]
        )
        spawned = ext.spawn_agent(
            "scan", "Scan the docs", idempotency_key="k1", tools=["read", "bash"],
            max_turns=4, model="m",
        )
        self.assertEqual(
            spawned,
            {"agent_id": "a1", "agent_path": "/root/a1", "status": {"state": "running"},
             "details": {"policy": {}}},
        )
        request = calls[-1][1]
        self.assertEqual((request.task_name, request.message, request.idempotency_key),
                         ("scan", "Scan the docs", "k1"))
        self.assertEqual(
            request.policy,
            agents.SpawnPolicy(
                [agents.AgentTool.READ, agents.AgentTool.BASH], 1, 4, None, None, 4096, None,
                agents.ModelSelection(None, "m", None),
            ),
        )
        with self.assertRaisesRegex(ValueError, "unknown agent tool 'net'"):
            ext.spawn_agent("scan", "x", idempotency_key="k", tools=["net"])
        self.assertEqual(ext.message_agent("a1", "faster"),
                         {"delivered_to": "a1", "delivery": "queued"})
        self.assertEqual(ext.follow_up_agent("a1", "again").delivery, "new_run")
        listed = ext.list_agents()
        self.assertEqual(listed.agents[0].details, {"task_name": "scan"})
        self.assertEqual(listed.agents[0].status.state, "running")
        waited = ext.wait_agents(500)
        self.assertEqual((waited.timed_out, calls[-1]), (True, ("wait", 500)))
        with self.assertRaises(RpcError) as unknown:
            ext.interrupt_agent("ghost")
        self.assertEqual(unknown.exception.code, -32002)
        self.assertEqual(ext.list_models("m", 5).models[0].reasoning, ["low"])


if __name__ == "__main__":
    unittest.main()
