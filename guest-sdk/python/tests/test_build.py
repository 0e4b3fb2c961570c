"""Native unit tests of what fails the build, and why: every public name of
the process-based SDK's package is importable or names its reason, and
``build.py`` refuses, before componentize-py runs, an app that does what
a sandboxed component cannot (``sandbox_check``), a reserved module name
and a manifest of another API version.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import harness  # noqa: F401 - the bindings and paths

# The public names of the process-based SDK's `octet_extension/__init__.py`.
SDK_NAMES = [
    "API_V02_FEATURES", "CacheWarmingAction", "CacheWarmingDecision",
    "CacheWarmingDecisionHandler", "CacheWarmingDecisionPayload", "CacheWarmingDecisionResult",
    "cache_warming_decision", "BusEnvelope", "BusError", "BusLimits", "BoundedQueue",
    "DEFAULT_LIMITS", "EventBusKernel", "FieldSpec", "HostEventBus", "TopicRegistry",
    "TopicSpec", "LIFECYCLE_METHODS", "MAX_INPUT_PROMPT_BYTES", "MAX_INPUT_VALUE_BYTES",
    "MAX_POST_MUTATION_RESOURCES", "MAX_PROGRESS_DECORATION_DETAIL_BYTES",
    "MAX_PROGRESS_DECORATION_LABEL_BYTES", "MAX_SECRET_VALUE_BYTES", "REQUEST_CANCELLED",
    "CancellationToken", "CancelledError", "DEFAULT_API_VERSION", "DEFAULT_MAX_MESSAGE_BYTES",
    "Extension", "JsonRpcTransport", "Logger", "ProtocolError", "RpcError", "audio_content",
    "current_cancellation", "current_request_id", "image_content", "persistence_metadata",
    "post_mutation_rescan", "provider_retry_delay", "text_content", "tool_result",
]
# The SDK's public Extension members.
EXTENSION_MEMBERS = [
    "initialized", "running", "initialization", "negotiated_features", "negotiated_concurrency",
    "tool_catalog_revision", "cancellation", "request_id", "host", "workspace", "tool",
    "command", "hook", "context", "status", "renderer", "tool_renderer", "on_lifecycle",
    "lifecycle", "on_shutdown", "notify", "send_notification", "publish_presentation",
    "presentation", "request", "register_tool", "register_tools", "unregister_tool",
    "unregister_tools", "confirm", "request_input", "progress", "report_progress",
    "progress_decoration", "publish_artifact", "evaluate_policy", "get_secret", "spawn_agent",
    "send_agent_message", "follow_up_agent", "list_agents", "wait_agents", "interrupt_agent",
    "run", "handle_message", "list_agent_models",
]
BUILD = Path(harness.SDK) / "build.py"


class PublicNames(unittest.TestCase):
    def test_every_name_is_there_or_names_its_reason(self) -> None:
        import octet_extension

        missing = []
        for name in SDK_NAMES:
            try:
                exec(f"from octet_extension import {name}", {})
            except ImportError as error:
                self.assertIn("is not available in an octet-wasm component", str(error), name)
                self.assertTrue("API 0.3" in str(error) or "API 0.4" in str(error)
                                or "protocol stream" in str(error), str(error))
                missing.append(name)
        self.assertEqual(sorted(missing), sorted([
            "BusEnvelope", "BusError", "BusLimits", "BoundedQueue", "DEFAULT_LIMITS",
            "EventBusKernel", "FieldSpec", "HostEventBus", "TopicRegistry", "TopicSpec",
            "JsonRpcTransport",
        ]))
        for name in set(SDK_NAMES) - set(missing):
            self.assertIn(name, octet_extension.__all__)
        with self.assertRaisesRegex(ImportError, "API 0.3"):
            exec("import octet_extension.event_bus", {})
        with self.assertRaises(AttributeError):
            octet_extension.not_a_name  # noqa: B018
        from octet_extension.extension import Extension
        from octet_extension.protocol import Logger, RpcError

        self.assertIs(Extension, octet_extension.Extension)
        self.assertTrue(Logger and RpcError)

    def test_every_extension_member(self) -> None:
        from octet_extension import Extension

        for member in EXTENSION_MEMBERS:
            self.assertTrue(hasattr(Extension, member), member)

    def test_constants_match_the_sdk(self) -> None:
        import octet_extension as sdk

        self.assertEqual((sdk.REQUEST_CANCELLED, sdk.DEFAULT_API_VERSION,
                          sdk.DEFAULT_MAX_MESSAGE_BYTES), (-32800, "0.1", 1024 * 1024))
        self.assertEqual((sdk.MAX_INPUT_PROMPT_BYTES, sdk.MAX_INPUT_VALUE_BYTES,
                          sdk.MAX_SECRET_VALUE_BYTES), (16384, 262144, 65536))
        self.assertEqual(sdk.LIFECYCLE_METHODS[3], "turn/settled")
        self.assertIn("delegation_telemetry_v1", sdk.API_V02_FEATURES)


def check(source: str) -> list:
    from octet_guest_build.sandbox_check import check as run

    with tempfile.TemporaryDirectory() as folder:
        app = Path(folder, "extension.py")
        app.write_text(textwrap.dedent(source))
        return [line.split(": ", 1)[1] for line in run(app)]


class SandboxCheck(unittest.TestCase):
    def test_processes_threads_and_the_transport_are_found(self) -> None:
        found = check("""\
            import subprocess
            import threading
            import os
            from concurrent.futures import ThreadPoolExecutor
            from octet_extension import Extension, HostEventBus
            import octet_extension

            ext = Extension()
            lock = threading.RLock()
            threading.Thread(target=print).start()
            os.system("ls")
            os.execv("/bin/ls", [])
            ThreadPoolExecutor(2)
            ext.request("anything")
            ext.publish_artifact(mime_type="image/png", path="x.png", size=1, sha256="0" * 64)
            octet_extension.JsonRpcTransport
        """)
        joined = "\n".join(found)
        for what in ["import subprocess", "from octet_extension import HostEventBus",
                     "threading.Thread()", "os.system()", "os.execv()",
                     "concurrent.futures.ThreadPoolExecutor()", "ext.request()",
                     "ext.publish_artifact(path=...)", "octet_extension.JsonRpcTransport"]:
            self.assertIn(f"{what} is not available in an octet-wasm component", joined, what)
        self.assertNotIn("RLock", joined)
        self.assertIn("WASI has no process API", joined)
        self.assertIn("API 0.3 (the event bus)", joined)
        self.assertEqual(len(found), 9, joined)

    def test_a_seed_app_is_clean(self) -> None:
        seed = Path(harness.SDK).parent.parent / "tests" / "guests" / "python-seed-lifecycle"
        from octet_guest_build.sandbox_check import check as run

        self.assertEqual(run(seed / "extension.py"), [])


class BuildRefusals(unittest.TestCase):
    def build(self, files: dict, *arguments: str) -> subprocess.CompletedProcess:
        folder = tempfile.mkdtemp()
        for name, text in files.items():
            Path(folder, name).write_text(textwrap.dedent(text))
        app = Path(folder, next(iter(files)))
        return subprocess.run([sys.executable, str(BUILD), str(app), "-o",
                               str(Path(folder, "out.wasm")), *arguments],
                              capture_output=True, text=True, timeout=60)

    def test_refusals_name_the_reason_and_build_nothing(self) -> None:
        cases = [
            ({"extension.py": "import subprocess\n"}, "import subprocess is not available"),
            ({"octet_guest.py": "x = 1\n"}, "may not be named 'octet_guest'"),
            ({"my-ext.py": "x = 1\n"}, "cannot be imported as a Python module"),
            ({"extension.py": "x = 1\n", "extension.toml": 'name = "x"\napi_version = "0.3"\n'},
             "octet-wasm runs API 0.1, 0.2 and 0.4 extensions"),
        ]
        for files, text in cases:
            with self.subTest(text=text):
                done = self.build(files)
                self.assertNotEqual(done.returncode, 0)
                self.assertIn(text, done.stderr)
                self.assertNotIn("componentize-py -d", done.stderr)

    def test_api_0_4_manifests_are_read(self) -> None:
        import octet_guest_build as build

        folder = tempfile.mkdtemp()
        manifest = Path(folder, "extension.toml")
        manifest.write_text('name = "hello-tools"\napi_version = "0.4"\n')
        self.assertEqual(build.manifest_facts(manifest),
                         {"name": "hello-tools", "api_version": "0.4"})


class ApiV04Names(unittest.TestCase):
    """octet-wasm speaks 0.4: what this SDK cannot back says what is missing,
    not that the shim lacks the version."""

    def test_each_missing_0_4_name_says_what_is_missing(self) -> None:
        for statement, text in [
            ("import octet_extension.diagnostics",
             "octet-wasm's Python SDK does not offer API 0.4's typed diagnostics"),
            ("import octet_extension.resources",
             "octet-wasm does not negotiate API 0.4's native resources (resource_refs_v1"),
        ]:
            with self.subTest(statement=statement):
                with self.assertRaises(ImportError) as raised:
                    exec(statement, {})
                self.assertIn(text, str(raised.exception))
                self.assertNotIn("does not speak", str(raised.exception))
        with self.assertRaisesRegex(ImportError, "API 0.3, which the shim does not speak"):
            exec("import octet_extension.api_v03", {})

    def test_a_0_2_0_build_refuses_what_it_cannot_carry(self) -> None:
        # These tests run on the octet:extension@0.2.0 bindings (a 0.1 or 0.2
        # manifest's build): the 0.4 additions fail the build, naming the fix.
        from harness import fresh

        fresh()
        from octet_extension import Extension, UnsupportedInComponent, composition

        ext = Extension()
        for register in [
            lambda: ext.tool(name="t", description="d", prompt_snippet="s"),
            lambda: ext.dynamic_tool(name="t", description="d", prompt_guidelines=["g"]),
            lambda: ext.hook("compaction_strategy"),
            lambda: ext.cache_warming_decision(lambda payload: None),
            lambda: ext.uses_composition(),
            lambda: composition.call("read"),
        ]:
            with self.assertRaises(UnsupportedInComponent) as raised:
                register()
            self.assertIn("built against octet:extension@0.2.0", str(raised.exception))
            self.assertIn('api_version = "0.4"', str(raised.exception))
        # An observation needs no 0.4 result.
        ext.hook("after_provider_response")(lambda payload: None)

    def test_cache_warming_is_the_sdks_module(self) -> None:
        # Backed now (the hook's registration and result are tested against
        # the 0.4.0 bindings in v04/): the module and its names import.
        import octet_extension
        from octet_extension.cache_warming import (
            CacheWarmingDecisionPayload,
            cache_warming_decision,
        )

        self.assertIs(cache_warming_decision, octet_extension.cache_warming_decision)
        self.assertEqual(cache_warming_decision("stop"), {"cache_warming_decision": "stop"})
        self.assertEqual(cache_warming_decision(None), {"cache_warming_decision": None})
        self.assertIn("decision", CacheWarmingDecisionPayload.__annotations__)


if __name__ == "__main__":
    unittest.main()
