#!/usr/bin/env python3
"""The Python SDK's build tool run from a checkout or an SDK copy, without
installing the package: ``octet-wasm build`` and the scaffolds of earlier
``octet-wasm new`` run this file. The tool itself is the package
``octet_guest_build`` (``src/octet_guest_build``), which ``pip install``
also installs as the ``octet-guest-build`` command.

    .venv/bin/python guest-sdk/python/build.py extension.py -o my-ext.wasm
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

from octet_guest_build import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
