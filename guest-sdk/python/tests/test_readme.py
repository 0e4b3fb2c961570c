"""The API reference in README.md against the package: every call and
class it documents exists, and the behaviour it states for the error
classes and for ``CancellationToken.wait`` holds.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import builtins
import re
import unittest
from pathlib import Path

import harness  # noqa: F401 - puts the bindings and the SDK on sys.path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
REFERENCE = README.split("## API reference", 1)[1].split("\n## ", 1)[0]


def table(heading: str) -> list:
    """The first cells of the table after the paragraph starting ``heading``."""
    rest = REFERENCE.split(heading, 1)[1]
    rows = []
    for line in rest.splitlines():
        if line.startswith("|"):
            rows.append(line.split("|")[1])
        elif rows:
            break
    return rows[2:]  # after the header and its rule


class Reference(unittest.TestCase):
    def test_every_documented_host_call_is_a_method(self) -> None:
        from octet_guest import Extension

        calls, properties = set(), set()
        for cell in table("**Host calls**"):
            calls.update(re.findall(r"`([a-z_]+)\(", cell))
            calls.update(re.findall(r"`([a-z_]+)`(?! \(a property\))", cell))
            properties.update(re.findall(r"`([a-z_]+)` \(a property\)", cell))
        self.assertGreater(len(calls), 20, calls)
        for name in sorted(calls):
            self.assertTrue(callable(getattr(Extension, name, None)), name)
        for name in sorted(properties):
            self.assertIsInstance(getattr(Extension, name, None), property, name)

    def test_every_documented_error_class_is_exported(self) -> None:
        import octet_extension
        import octet_guest

        for cell in table("**Errors.**"):
            match = re.match(r" `([A-Z][A-Za-z]+)", cell)
            if match and not hasattr(builtins, match[1]):
                for package in (octet_guest, octet_extension):
                    self.assertTrue(issubclass(getattr(package, match[1]), Exception), match[1])

    def test_cancelled_error_has_the_documented_members(self) -> None:
        from octet_guest import REQUEST_CANCELLED, CancelledError, RpcError

        error = CancelledError("user")
        self.assertIsInstance(error, RpcError)
        self.assertEqual((error.code, error.message, error.data),
                         (REQUEST_CANCELLED, "request cancelled", {"reason": "user"}))
        self.assertEqual(REQUEST_CANCELLED, -32800)
        self.assertIn('`.message == "request cancelled"`', REFERENCE)

    def test_wait_returns_whether_cancellation_was_observed(self) -> None:
        from octet_guest.cancellation import CancellationToken
        from wit_world.imports import cancellation

        token = CancellationToken(7)
        slept = []
        original = cancellation.sleep
        try:
            cancellation.sleep = lambda ms: slept.append(ms) or False
            self.assertIs(token.wait(0.25), False)
            cancellation.sleep = lambda ms: slept.append(ms) or True
            self.assertIs(token.wait(), True)
        finally:
            cancellation.sleep = original
        self.assertEqual(slept[0], 250)
        self.assertIn("`.wait(timeout=None)` | `True` once cancelled", REFERENCE)


if __name__ == "__main__":
    unittest.main()
