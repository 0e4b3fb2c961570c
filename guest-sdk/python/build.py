#!/usr/bin/env python3
"""Builds an octet_guest app module into a WebAssembly component.

    .venv/bin/python guest-sdk/python/build.py hello.py -o hello.wasm

Run it with the Python of the environment holding componentize-py (its
``site-packages`` is bundled into the component too, so packages installed
there are importable by the app). The step it runs, printed first, is::

    componentize-py -d <wit> -w extension componentize \\
        -p <entry> -p <app dir> -p <sdk> octet_guest_main -o <out>

where ``octet_guest_main`` (generated in a temporary directory) imports the
app, which registers its extension, and then the SDK's ``Guest`` export class.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SDK_DIR = Path(__file__).resolve().parent
SDK_SRC = SDK_DIR / "src"
# The WIT package of a checkout: guest-sdk/python/../../wit.
DEFAULT_WIT = SDK_DIR.parent.parent / "wit"
ENTRY_MODULE = "octet_guest_main"
RESERVED = {ENTRY_MODULE, "wit_world", "octet_guest", "octet_extension", "extension"}


def componentize_py() -> str:
    """componentize-py from this interpreter's environment, else from PATH."""
    beside = Path(sys.executable).parent / "componentize-py"
    if beside.is_file():
        return str(beside)
    found = shutil.which("componentize-py")
    if found:
        return found
    sys.exit("build.py: componentize-py not found: pip install componentize-py==0.25.1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("app", type=Path, help="the app module (a .py file or a package folder)")
    parser.add_argument("-o", "--output", type=Path, help="the component (default: <app>.wasm)")
    parser.add_argument("--wit", type=Path, default=Path(os.environ.get("OCTET_WIT", DEFAULT_WIT)),
                        help="the octet:extension WIT folder (default: the checkout's wit/)")
    parser.add_argument("-p", "--python-path", type=Path, action="append", default=[],
                        help="another folder of modules to bundle (repeatable)")
    options = parser.parse_args()

    app = options.app.resolve()
    module = app.stem if app.suffix == ".py" else app.name
    if not app.exists():
        sys.exit(f"build.py: {app} does not exist")
    if module in RESERVED:
        sys.exit(f"build.py: rename the app module: {module!r} is used by the build")
    if not (options.wit / "world.wit").is_file():
        sys.exit(f"build.py: no WIT package in {options.wit} (use --wit)")
    output = (options.output or app.with_name(f"{module}.wasm")).resolve()
    output.parent.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="octet-guest-") as entry:
        Path(entry, f"{ENTRY_MODULE}.py").write_text(
            f"import {module}  # noqa: F401  (registers the extension)\n"
            "from octet_guest.component import Guest  # noqa: F401\n"
        )
        partial = output.with_name(output.name + ".tmp")
        command = [componentize_py(), "-d", str(options.wit), "-w", "extension", "componentize",
                   "-p", entry, "-p", str(app.parent), "-p", str(SDK_SRC)]
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


if __name__ == "__main__":
    sys.exit(main())
