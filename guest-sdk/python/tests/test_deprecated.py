"""octet_guest 0.1's names and call forms still work in 0.2, each warning
once (on stderr, which is the build's output) with its replacement.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import contextlib
import io
import tempfile
import textwrap
import unittest
from pathlib import Path

from harness import SDK, Err, error_of, fresh, serve, texts, tool


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


def scanned(source: str) -> list:
    """What build.py's source scan warns about an app of ``source``."""
    from octet_guest_build.sandbox_check import deprecations

    with tempfile.TemporaryDirectory() as work:
        app = Path(work, "app.py")
        app.write_text(textwrap.dedent(source), encoding="utf-8")
        return [line.split(": warning: ", 1)[1] for line in deprecations(app)]


class BuildScan(unittest.TestCase):
    """componentize-py hides what the app prints while it runs at build
    time, so build.py prints the aliases' warnings from a scan of the
    source: the same lines, once each."""

    def test_every_alias_has_its_replacement_in_one_table(self) -> None:
        from octet_guest import deprecated, renamed

        self.assertEqual(set(deprecated.VALUES), set(renamed.NAMES))

    def test_the_scan_warns_once_per_name_as_the_alias_does(self) -> None:
        from octet_guest import deprecated, renamed

        for name in renamed.NAMES:
            with self.subTest(name=name):
                found = scanned(f"""
                    from octet_guest import {name}
                    import octet_guest as og
                    og.{name}
                    {name}
                """)
                deprecated._WARNED.clear()
                _, err = captured(lambda: deprecated.lookup(name))
                self.assertEqual(found, [err.strip().removeprefix("octet_guest: warning: ")])
        self.assertEqual(len(scanned("import octet_extension\noctet_extension.log('info', 'x')\n")),
                         1)

    def test_the_scan_finds_the_0_1_call_forms_and_nothing_current(self) -> None:
        old = scanned("""
            from octet_guest import Extension, InvalidParams
            ext = Extension("greeter")

            @ext.tool("hello", description="Greet")
            def hello(args):
                raise InvalidParams("no")

            @ext.command("again")
            def again(args):
                return ""
        """)
        self.assertEqual([line.split(" is deprecated")[0] for line in old],
                         ["octet_guest.InvalidParams", "Extension(name)", '@ext.tool("name", ...)',
                          '@ext.command("name", ...)'])
        current = scanned("""
            from octet_guest import Extension, RpcError
            ext = Extension()

            @ext.tool(name="hello", description="Greet")
            def hello(args):
                ext.log.info("hi")
                ext.notify("done")
                raise RpcError(-32602, "no")
        """)
        self.assertEqual(current, [])

    def test_the_0_1_scaffold_warns_in_build_output_before_componentize_py(self) -> None:
        fixture = SDK.parent.parent / "tests/fixtures/scaffolds/v1/python/greeter.py"
        found = scanned(fixture.read_text(encoding="utf-8"))
        self.assertEqual(len(found), 3, found)


class CurrentNames(unittest.TestCase):
    def test_a_name_no_component_can_have_still_names_its_reason(self) -> None:
        with self.assertRaises(ImportError) as raised:
            exec("from octet_guest import BusEnvelope", {})
        self.assertIn("is not available in an octet-wasm component", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
