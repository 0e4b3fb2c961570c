"""The API 0.4 hooks on the 0.4.0 bindings: octet's typed cache-warming
decorator and helper, compaction frames, the provider payload and headers,
each result's bounds (-32603 naming the bound from a handler's value, a
``ValueError`` from the helpers), and the registration rules."""

from __future__ import annotations

import base64
import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import Err, context, error_of, fresh, serve, wit  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(16))
PAYLOAD = {
    "decision": {"phase": "idle", "warm_cost_microdollars": 100, "miss_cost_microdollars": 1000,
                 "continuation_probability": 0.15, "expected_savings_microdollars": 50,
                 "economics_available": True, "action": "warm"},
    "model": "cache-model",
}


def returning(value):
    """A one-argument handler answering ``value`` (a default argument would
    receive the context: handlers get as many arguments as they take)."""
    return lambda payload: value


def run(guest, hook: str, payload=None) -> wit.HookResult:
    return guest.run_hook(hook, json.dumps({} if payload is None else payload), context())


class CacheWarming(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_typed_decorator_round_trips_every_action(self) -> None:
        from octet_extension import Extension

        ext = Extension(api_version="0.4")
        actions = iter(["warm", "stop", None])
        seen = []

        @ext.cache_warming_decision
        def advise(payload, cx):
            seen.append((payload, cx["workspace"]))
            return next(actions)

        guest = serve("0.4")
        results = [run(guest, "cache_warming_decision", PAYLOAD) for _ in range(3)]
        self.assertEqual([r.cache_warming for r in results],
                         [wit.CacheWarmingAction.WARM, wit.CacheWarmingAction.STOP, None])
        self.assertEqual(results[0].disposition, wit.Disposition_Continue())
        self.assertEqual(seen, [(PAYLOAD, "/w")] * 3)

    def test_generic_hook_with_the_helper_and_no_opinion(self) -> None:
        from octet_extension import Extension, cache_warming_decision

        ext = Extension(api_version="0.4")
        answers = iter([cache_warming_decision("stop"), {}, None,
                        {"cache_warming_decision": None}])
        ext.hook("cache_warming_decision")(lambda payload: next(answers))
        guest = serve("0.4")
        self.assertEqual([run(guest, "cache_warming_decision").cache_warming for _ in range(4)],
                         [wit.CacheWarmingAction.STOP, None, None, None])

    def test_invalid_actions_fail_closed(self) -> None:
        from octet_extension import Extension, cache_warming_decision

        ext = Extension(api_version="0.4")
        bad = iter(["retry", True, 1, ["warm"], {"action": "warm"}])
        ext.hook("cache_warming_decision")(
            lambda payload: {"cache_warming_decision": next(bad)})
        guest = serve("0.4")
        for action in ["retry", True, 1, ["warm"], {"action": "warm"}]:
            with self.subTest(action=action):
                with self.assertRaises(ValueError):
                    cache_warming_decision(action)
                with self.assertRaises(Err) as raised:
                    run(guest, "cache_warming_decision")
                self.assertEqual(error_of(raised)[:2],
                                 (-32603, "invalid cache_warming_decision action"))

    def test_older_versions_and_duplicates_are_refused(self) -> None:
        from octet_extension import Extension

        for api in ("0.1", "0.2"):
            ext = Extension(api_version=api)
            with self.subTest(api=api), \
                    self.assertRaisesRegex(ValueError, "requires extension API 0.4"):
                ext.hook("cache_warming_decision")
            with self.subTest(api=api), self.assertRaises(ValueError):
                ext.cache_warming_decision(lambda payload: None)
        ext = Extension(api_version="0.4")
        ext.cache_warming_decision(lambda payload: None)
        with self.assertRaisesRegex(ValueError, "duplicate hook"):
            ext.hook("cache_warming_decision")(lambda payload: None)


class Compaction(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_frames_as_bytes_or_the_helpers_base64(self) -> None:
        from octet_extension import Extension, compaction_frames

        helper = compaction_frames(PNG, PNG + b"x")
        self.assertEqual(helper["compaction_frames"][0], base64.b64encode(PNG).decode())
        ext = Extension(api_version="0.4")
        answers = iter([helper, {"compaction_frames": [PNG]}, None])
        seen = []

        @ext.hook("compaction_strategy")
        def strategy(payload):
            seen.append(payload)
            return next(answers)

        guest = serve("0.4")
        self.assertEqual(run(guest, "compaction_strategy", {"model_id": "m", "text": "t"})
                         .compaction_frames, [PNG, PNG + b"x"])
        self.assertEqual(run(guest, "compaction_strategy").compaction_frames, [PNG])
        self.assertEqual(run(guest, "compaction_strategy").compaction_frames, [])
        self.assertEqual(seen[0], {"model_id": "m", "text": "t"})

    def test_bounds(self) -> None:
        from octet_extension import Extension, compaction_frames

        big = PNG + bytes(512 * 1024 - len(PNG) + 1)
        for frames, text in [
            ([b"GIF89a"], "compaction frame 1 is not a PNG image"),
            ([PNG] * 33, "compaction_strategy returned 33 frames; 1 to 32 are allowed"),
            ([], "returned 0 frames"),
            ([PNG, big], f"compaction frame 2 has {len(big)} bytes; the limit is 512 KiB"),
            ([big[:-1], big[:-1]], "more than fit in one 1 MiB protocol frame"),
            (["not base64!"], "compaction frame 1 is not base64"),
            ([7], "compaction frame 1 must be PNG bytes or base64 text"),
        ]:
            fresh()
            ext = Extension(api_version="0.4")
            ext.hook("compaction_strategy")(returning({"compaction_frames": frames}))
            guest = serve("0.4")
            with self.subTest(text=text):
                with self.assertRaises(Err) as raised:
                    run(guest, "compaction_strategy")
                code, message, _ = error_of(raised)
                self.assertEqual(code, -32603)
                self.assertIn(text, message)
                with self.assertRaisesRegex(ValueError, "compaction"):
                    compaction_frames(*frames)


class ProviderPipeline(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_payload_headers_and_observation(self) -> None:
        from octet_extension import Extension, provider_headers, provider_payload

        ext = Extension(api_version="0.4")
        ext.hook("before_provider_request")(
            lambda p: provider_payload({**p["payload"], "temperature": 0}))
        ext.hook("before_provider_headers")(
            lambda p: provider_headers({"x-one": "1", "x-two": ["a", "b"], "x-gone": None}))
        observed = []
        ext.hook("after_provider_response")(lambda p: observed.append(p["status"]))
        guest = serve("0.4")
        request = run(guest, "before_provider_request",
                      {"operation_id": "op", "model": {"id": "m"}, "payload": {"messages": []}})
        self.assertEqual(json.loads(request.provider_payload), {"messages": [], "temperature": 0})
        self.assertEqual(request.provider_headers, [])
        headers = run(guest, "before_provider_headers", {"headers": {}})
        self.assertEqual(headers.provider_headers, [
            wit.HeaderEdit("x-one", ["1"]), wit.HeaderEdit("x-two", ["a", "b"]),
            wit.HeaderEdit("x-gone", None)])
        self.assertIsNone(headers.provider_payload)
        response = run(guest, "after_provider_response", {"status": 200, "headers": {}})
        self.assertEqual(observed, [200])
        self.assertEqual((response.provider_payload, response.provider_headers,
                          response.cache_warming, response.compaction_frames),
                         (None, [], None, []))

    def test_a_member_is_sent_only_for_its_own_hook(self) -> None:
        from octet_extension import Extension

        ext = Extension(api_version="0.4")
        everything = {"cache_warming_decision": "stop", "provider_payload": {"a": 1},
                      "provider_headers": {"x": "1"}, "compaction_frames": [PNG]}
        for hook in ("before_prompt", "after_provider_response", "before_provider_headers"):
            ext.hook(hook)(lambda payload: everything)
        guest = serve("0.4")
        plain = run(guest, "before_prompt")
        self.assertEqual((plain.cache_warming, plain.provider_payload, plain.provider_headers,
                          plain.compaction_frames), (None, None, [], []))
        self.assertEqual(run(guest, "before_provider_headers").provider_payload, None)

    def test_payload_bounds(self) -> None:
        from octet_extension import Extension, provider_payload

        deep: object = 0
        for _ in range(33):
            deep = [deep]
        for value, text in [
            ("text", "provider_payload must be a JSON object or array"),
            (["x" * (768 * 1024)], "provider_payload has 786436 bytes; the limit is 768 KiB"),
            (deep, "provider_payload is nested deeper than 32 levels"),
            (list(range(65_536)), "provider_payload has more than 65536 JSON values"),
            ({"f": float("nan")}, "provider_payload is not JSON"),
        ]:
            fresh()
            ext = Extension(api_version="0.4")
            ext.hook("before_provider_request")(returning({"provider_payload": value}))
            guest = serve("0.4")
            with self.subTest(text=text):
                with self.assertRaises(Err) as raised:
                    run(guest, "before_provider_request")
                code, message, _ = error_of(raised)
                self.assertEqual(code, -32603)
                self.assertTrue(message.startswith(text), message)
                with self.assertRaises(ValueError):
                    provider_payload(value)

    def test_header_bounds(self) -> None:
        from octet_extension import Extension, provider_headers

        for headers, text in [
            ({"bad name": "1"}, "provider header name 'bad name' is not an HTTP token"),
            ({"": "1"}, "is not an HTTP token of 1 to 256 bytes"),
            ({"x": "a\r\nInjected: 1"}, "a value of provider header x contains CR, LF or NUL"),
            ({"x": []}, "provider header x has an empty list of values (None deletes it)"),
            ({"X-A": None, "x-a": "1"}, "provider header x-a is changed twice"),
            ({f"h{i}": None for i in range(257)},
             "provider_headers changes 257 headers; the limit is 256"),
            ({"x": "v" * (64 * 1024)}, "provider_headers take 65537 bytes; the limit is 64 KiB"),
            ({"x": 1}, "provider header x must be a string, a list of strings or None"),
            (["x"], "provider_headers must map header names"),
        ]:
            fresh()
            ext = Extension(api_version="0.4")
            ext.hook("before_provider_headers")(returning({"provider_headers": headers}))
            guest = serve("0.4")
            with self.subTest(text=text):
                with self.assertRaises(Err) as raised:
                    run(guest, "before_provider_headers")
                code, message, _ = error_of(raised)
                self.assertEqual(code, -32603)
                self.assertIn(text, message)
                with self.assertRaises(ValueError):
                    provider_headers(headers)


class Registration(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_hooks_octet_wasm_cannot_serve_fail_the_build(self) -> None:
        from octet_extension import Extension, UnsupportedInComponent

        ext = Extension(api_version="0.4")
        for hook, feature in [("resources_discover", "resource_paths_v1"),
                              ("model_turn_start", "session_entries")]:
            with self.subTest(hook=hook), self.assertRaises(UnsupportedInComponent) as raised:
                ext.hook(hook)
            self.assertIn(f"it needs protocol feature {feature}", str(raised.exception))

    def test_pipeline_hooks_need_0_4(self) -> None:
        from octet_extension import Extension

        for hook in ("compaction_strategy", "before_provider_request", "before_provider_headers",
                     "after_provider_response"):
            with self.subTest(hook=hook), self.assertRaisesRegex(ValueError, "API 0.4"):
                Extension(api_version="0.2").hook(hook)


if __name__ == "__main__":
    unittest.main()
