"""Builds an extension written for octet's Python SDK into a WebAssembly
component.

    octet-guest-build extension.py -o my-ext.wasm
    .venv/bin/python guest-sdk/python/build.py extension.py -o my-ext.wasm

(the first from the package ``pip install guest-sdk/python`` installs, the
second from a checkout or an SDK copy; ``octet-wasm build`` runs the second).

Run it with the Python of the environment holding componentize-py (its
``site-packages`` is bundled into the component too, so packages installed
there are importable by the app). The app keeps its name (``extension.py``
is the usual one) and is not edited.

First the app's source is checked for what a sandboxed component cannot do
(processes, threads, the SDK's stdio transport; see ``sandbox_check.py``),
and a warning is printed for each deprecated 0.1 name it uses.
Then the step it runs, printed first, is::

    componentize-py -d <wit> -w extension componentize \\
        -p <entry> -p <app dir> -p <sdk> _octet_guest_entry -o <out>

where ``<wit>`` is the package's ``wit/0.4.0`` (``octet:extension@0.4.0``:
tool prompt metadata, the 0.4 hook results, tool composition) when the
manifest says ``api_version = "0.4"``, and ``wit/`` (0.2.0) otherwise, so
0.1 and 0.2 extensions build as they always did (``--wit`` chooses);
``<app dir>`` is a copy of the app's folder without its hidden entries
(``.venv``, ``.octet-sdk``...), byte-code caches and components;
``<sdk>`` a copy of the SDK's packages (componentize-py writes byte code
beside what it imports; the SDK is never written to); and
``_octet_guest_entry`` (generated in a temporary directory) records
the manifest's ``name`` and ``api_version`` (from ``extension.toml`` beside
the app, or ``--manifest``), imports the app, which registers its
extension, and then the SDK's ``Guest`` export class. A process-based
extension learns its API version from octet's environment at start; a
component's is the manifest's, read here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

# The folder holding octet_guest: guest-sdk/python/src in a checkout,
# site-packages once installed.
SDK_SRC = Path(__file__).resolve().parent.parent
# The WIT packages: octet:extension@0.2.0, and in its 0.4.0/ folder
# octet:extension@0.4.0. In a checkout wit/ here links to the root's wit/;
# the installed package carries the files.
DEFAULT_WIT = Path(__file__).resolve().parent / "wit"
WIT_BY_API = {"0.4": DEFAULT_WIT / "0.4.0"}
ENTRY_MODULE = "_octet_guest_entry"
# What the component bundles of the SDK.
SDK_PACKAGES = ("octet_guest", "octet_extension")
# Modules of the component itself; an app module of the same name would
# shadow them.
RESERVED = {
    ENTRY_MODULE,
    "wit_world",
    "octet_guest",
    "octet_extension",
    "componentize_py_types",
    "componentize_py_async_support",
}
# A 0.4 manifest's component is an octet:extension@0.4.0 one, the others'
# 0.2.0; the shim serves either under 0.1, 0.2 and 0.4 manifests alike
# (docs/api-0.4.md, "WIT versions"). API 0.3's canonical wire is not spoken.
API_VERSIONS = ("0.1", "0.2", "0.4")


def componentize_py() -> str:
    """componentize-py from this interpreter's environment, else from PATH."""
    beside = Path(sys.executable).parent / "componentize-py"
    if beside.is_file():
        return str(beside)
    found = shutil.which("componentize-py")
    if found:
        return found
    sys.exit("build.py: componentize-py not found: pip install componentize-py==0.25.1")


def _not_bundled(directory: str, names: list) -> list:
    """What of the app's folder stays out of the component: hidden entries
    (``.venv``, ``.git``, and ``.octet-sdk``, the link to the SDK root that
    ``octet-wasm new`` projects carry, which componentize-py would otherwise
    walk into and through any checkout around it), byte-code caches and
    built components."""
    return [name for name in names
            if name.startswith(".") or name == "__pycache__" or name.endswith((".wasm", ".tmp"))]


def manifest_facts(path: Path) -> dict:
    """``name`` and ``api_version`` of the manifest at ``path``."""
    try:
        manifest = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        sys.exit(f"build.py: cannot read the manifest {path}: {error}")
    api = manifest.get("api_version")
    if api is not None and api not in API_VERSIONS:
        sys.exit(
            f"build.py: {path} selects api_version {api!r}; octet-wasm runs API 0.1, 0.2 "
            "and 0.4 extensions (set api_version = \"0.1\", \"0.2\" or \"0.4\")"
        )
    name = manifest.get("name")
    return {"name": name if isinstance(name, str) else None, "api_version": api}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("app", type=Path, help="the app module (a .py file or a package folder)")
    parser.add_argument("-o", "--output", type=Path, help="the component (default: <app>.wasm)")
    parser.add_argument("--manifest", type=Path,
                        help="the extension's manifest (default: extension.toml beside the app)")
    parser.add_argument("--wit", type=Path, default=None,
                        help="the octet:extension WIT folder (default: the package's "
                             "wit/0.4.0 for an API 0.4 manifest, else wit/)")
    parser.add_argument("-p", "--python-path", type=Path, action="append", default=[],
                        help="another folder of modules to bundle (repeatable)")
    options = parser.parse_args()

    app = options.app.resolve()
    module = app.stem if app.suffix == ".py" else app.name
    if not app.exists():
        sys.exit(f"build.py: {app} does not exist")
    if module in RESERVED:
        sys.exit(f"build.py: the app module may not be named {module!r}: the component's own "
                 "module of that name would be shadowed (rename the app)")
    if not module.isidentifier():
        sys.exit(f"build.py: {app.name} cannot be imported as a Python module (rename it)")
    manifest = options.manifest or app.parent / "extension.toml"
    if options.manifest is not None and not manifest.is_file():
        sys.exit(f"build.py: {manifest} does not exist")
    facts = manifest_facts(manifest) if manifest.is_file() else {"name": None, "api_version": None}
    facts["name"] = facts["name"] or module
    wit = options.wit
    if wit is None:
        chosen = os.environ.get("OCTET_WIT")
        wit = Path(chosen) if chosen else WIT_BY_API.get(facts["api_version"], DEFAULT_WIT)
    if not (wit / "world.wit").is_file():
        sys.exit(f"build.py: no WIT package in {wit} (use --wit)")

    from .sandbox_check import check, deprecations

    problems = check(app)
    if problems:
        print("\n".join(f"build.py: {problem}" for problem in problems), file=sys.stderr)
        return 1
    # Here, not from the aliases: componentize-py keeps what the app
    # prints while it runs to itself.
    for warning in deprecations(app):
        print(f"build.py: {warning}", file=sys.stderr)

    output = (options.output or app.with_name(f"{module}.wasm")).resolve()
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="octet-guest-") as work:
        entry = str(Path(work, "entry"))
        Path(entry).mkdir()
        # The app's folder, as componentize-py bundles it (see _not_bundled).
        app_dir = Path(work, "app")
        shutil.copytree(app.parent, app_dir, ignore=_not_bundled, symlinks=True)
        Path(entry, f"{ENTRY_MODULE}.py").write_text(
            "import importlib\n"
            "from octet_guest import runtime\n"
            f"runtime.configure(name={facts['name']!r}, api_version={facts['api_version']!r}, "
            f"manifest={str(manifest) if manifest.is_file() else None!r})\n"
            f"importlib.import_module({module!r})  # registers the extension\n"
            "from octet_guest.component import Guest  # noqa: E402,F401\n"
        )
        # The SDK's packages too: componentize-py's interpreter writes byte
        # code beside what it imports, and the SDK (a checkout, a shared
        # copy, site-packages) is never written to.
        sdk = Path(work, "sdk")
        for package in SDK_PACKAGES:
            shutil.copytree(SDK_SRC / package, sdk / package, ignore=_not_bundled)
        partial = output.with_name(output.name + ".tmp")
        command = [componentize_py(), "-d", str(wit), "-w", "extension", "componentize",
                   "-p", entry, "-p", str(app_dir), "-p", str(sdk)]
        for path in options.python_path:
            command += ["-p", str(path.resolve())]
        command += [ENTRY_MODULE, "-o", str(partial)]
        print("build.py:", " ".join(command), file=sys.stderr)
        status = subprocess.run(command).returncode
        if status != 0:
            partial.unlink(missing_ok=True)
            return status
        # Renamed into place so a reader never sees half a component.
        partial.replace(output)
    print(f"build.py: {output} ({output.stat().st_size} bytes)", file=sys.stderr)
    return 0
