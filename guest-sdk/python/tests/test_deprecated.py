"""octet_guest 0.1's names and call forms still work in 0.2, each warning
once (on stderr, which is the build's output) with its replacement.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import contextlib
import io
import unittest

from harness import Err, error_of, fresh, serve, texts, tool


def captured(action):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        value = action()
    return value, err.getvalue()


class Deprecated(unittest.TestCase):
    def setUp(self) -> None:
        self.host = fresh()
        import octet_guest.deprecated as deprecated

        deprecated._WARNED.clear()

    def test_every_removed_name_resolves_and_warns_once_naming_its_replacement(self) -> None:
        import octet_guest
        from octet_guest import deprecated

        for name, (_, replacement) in deprecated.NAMES.items():
            with self.subTest(name=name):
                value, err = captured(lambda: getattr(octet_guest, name))
                self.assertIsNotNone(value)
                self.assertEqual(err.count("\n"), 1, err)
                self.assertIn(f"octet_guest.{name} is deprecated", err)
                self.assertIn(replacement, err)
                _, again = captured(lambda: getattr(octet_guest, name))
                self.assertEqual(again, "")
        with self.assertRaises(AttributeError):
            octet_guest.NoSuchName  # noqa: B018

    def test_the_0_1_scaffold_builds_and_answers_as_it_did(self) -> None:
        """The hello app `octet-wasm new` wrote in 0.1 (tests/fixtures)."""

        def app():
            from octet_guest import Extension, InvalidParams

            ext = Extension("greeter")

            @ext.tool("hello", description="Greet someone by name",
                      parameters={"type": "object", "properties": {"name": {"type": "string"}},
                                  "required": ["name"]})
            def hello(args):
                name = args.get("name")
                if not isinstance(name, str):
                    raise InvalidParams("name must be a string")
                return f"Hello, {name}!"

            return ext

        _, err = captured(app)
        for line in ("octet_guest.InvalidParams is deprecated", "Extension(name) is deprecated",
                     '@ext.tool("name", ...) is deprecated'):
            self.assertIn(line, err)
        self.assertEqual(len(err.strip().splitlines()), 3, err)
        guest = serve()
        self.assertEqual(texts(tool(guest, "hello", {"name": "Ada"})), ["Hello, Ada!"])
        with self.assertRaises(Err) as raised:
            tool(guest, "hello", {"name": 7})
        self.assertEqual(error_of(raised)[:2], (-32602, "name must be a string"))

    def test_host_call_aliases_reach_the_served_extension(self) -> None:
        def app():
            from octet_guest import Extension, notify

            ext = Extension()

            @ext.tool(name="ping", description="notifies")
            def ping(args):
                notify("success", "done")
                return "ok"

        captured(app)
        guest = serve(notifications=True)
        self.assertEqual(texts(tool(guest, "ping")), ["ok"])
        self.assertEqual(len(self.host.named("notify")), 1)


if __name__ == "__main__":
    unittest.main()
