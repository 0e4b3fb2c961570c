"""API 0.4 tool prompt metadata on the 0.4.0 bindings: registration, the
host's bounds as the author's exceptions, the feature it declares, and the
definitions ``describe`` and ``tools/register`` carry."""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import fresh, serve, wit  # noqa: E402


class PromptMetadata(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()

    def test_the_bindings_are_0_4_0s(self) -> None:
        from octet_guest import wit_version

        self.assertTrue(wit_version.V0_4)

    def test_metadata_reaches_the_definition_and_declares_the_feature(self) -> None:
        from octet_extension import Extension
        from octet_guest.component import Guest

        ext = Extension(api_version="0.4")
        ext.tool(name="grep", description="Search", prompt_snippet="grep: search by regex",
                 prompt_guidelines=("Prefer grep over reading files", "Columns:\tname\nvalue"),
                 )(lambda args: "")
        ext.tool(name="plain", description="Plain")(lambda args: "")
        description = Guest().describe()
        grep, plain = description.tools
        self.assertEqual(grep, wit.ToolDefinition(
            "grep", "Search", '{"type":"object"}', None, "grep: search by regex",
            ["Prefer grep over reading files", "Columns:\tname\nvalue"]))
        self.assertEqual((plain.prompt_snippet, plain.prompt_guidelines), (None, []))
        self.assertEqual(description.features.count("tool_prompt_metadata_v1"), 1)

    def test_no_metadata_declares_nothing_new(self) -> None:
        from octet_extension import Extension
        from octet_guest.component import Guest

        ext = Extension(api_version="0.4")
        ext.tool(name="plain", description="Plain", prompt_guidelines=[])(lambda args: "")
        features = Guest().describe().features
        self.assertNotIn("tool_prompt_metadata_v1", features)
        self.assertNotIn("tool_composition_v1", features)

    def test_bounds_are_octets_with_the_shims_sentences(self) -> None:
        from octet_extension import Extension

        ext = Extension(api_version="0.4")
        at_limit = "é" * 512
        ext.tool(name="ok", description="d", prompt_snippet=at_limit,
                 prompt_guidelines=["g"] * 16)(lambda args: "")
        for kwargs, error, text in [
            ({"prompt_snippet": at_limit + "x"}, ValueError,
             "tool t: prompt_snippet has 1025 bytes; the limit is 1024"),
            ({"prompt_guidelines": ["g"] * 17}, ValueError,
             "tool t has 17 prompt guidelines; the limit is 16"),
            ({"prompt_guidelines": ["ok", "a\rb"]}, ValueError,
             "tool t: prompt guideline 2 contains the control character U+000D "
             "(only LF and TAB are allowed)"),
            ({"prompt_snippet": "next\x85line"}, ValueError, "U+0085"),
            ({"prompt_snippet": "nul\x00"}, ValueError, "U+0000"),
            ({"prompt_snippet": 7}, TypeError, "prompt_snippet must be a string"),
            ({"prompt_guidelines": "one string"}, TypeError, "a sequence of strings"),
            ({"prompt_guidelines": [b"bytes"]}, TypeError, "prompt guideline 1 must be"),
        ]:
            with self.subTest(kwargs=kwargs), self.assertRaises(error) as raised:
                ext.tool(name="t", description="d", **kwargs)
            self.assertIn(text, str(raised.exception))
        self.assertNotIn("t", ext._tools)

    def test_older_versions_refuse_metadata(self) -> None:
        from octet_extension import Extension

        for api in ("0.1", "0.2"):
            with self.subTest(api=api), \
                    self.assertRaisesRegex(ValueError, "requires extension API 0.4"):
                Extension(api_version=api).tool(name="t", description="d", prompt_snippet="s")

    def test_dynamic_tools_keep_their_metadata(self) -> None:
        from octet_extension import Extension

        ext = Extension(api_version="0.4")
        ext.tool(name="adder", description="d")(lambda args: "")

        @ext.dynamic_tool(name="late", description="Late", prompt_snippet="late: arrives later")
        def late(args):
            return "late"

        guest = serve("0.4", ("request_cancellation", "content_parts", "dynamic_tools",
                              "tool_prompt_metadata_v1"))
        self.assertIn("tool_prompt_metadata_v1", guest.describe().features)
        ext.register_tools([{"name": "late"}])
        ext.register_tool(name="other", description="Other", handler=lambda a: "",
                          prompt_guidelines=["Only on Tuesdays"])
        (_, first), (_, second) = self.host.named("register")
        self.assertEqual((first[0].name, first[0].prompt_snippet), ("late", "late: arrives later"))
        self.assertEqual(second[0].prompt_guidelines, ["Only on Tuesdays"])
        with self.assertRaisesRegex(ValueError, "17 prompt guidelines"):
            ext.register_tool(name="x", description="d", handler=lambda a: "",
                              prompt_guidelines=["g"] * 17)
        self.assertEqual(len(self.host.named("register")), 2)

    def test_supported_features_may_name_the_0_4_ones(self) -> None:
        from octet_extension import API_V04_FEATURES, Extension
        from octet_guest.component import Guest

        Extension(api_version="0.4",
                  supported_features=("request_cancellation", "content_parts") + API_V04_FEATURES)
        self.assertEqual(Guest().describe().features,
                         ["request_cancellation", "content_parts", *API_V04_FEATURES])
        with self.assertRaisesRegex(ValueError, "unknown supported_features"):
            Extension(supported_features=("remote_ui",))


if __name__ == "__main__":
    unittest.main()
