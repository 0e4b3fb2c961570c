"""Runs the API 0.4 tests (``v04/``) against the ``octet:extension@0.4.0``
bindings, in a process of their own: the bindings are one module per
process, and the tests beside this file use 0.2.0's.

    target/python-venv/bin/python -m unittest discover -s guest-sdk/python/tests
"""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


class ApiV04(unittest.TestCase):
    def test_the_0_4_suite_passes_on_the_0_4_0_bindings(self) -> None:
        env = dict(os.environ, OCTET_GUEST_TEST_WIT="wit/0.4.0")
        run = subprocess.run(
            [sys.executable, "-m", "unittest", "discover", "-s", str(HERE / "v04"),
             "-t", str(HERE / "v04")],
            env=env, capture_output=True, text=True, timeout=600,
        )
        self.assertEqual(run.returncode, 0, run.stderr[-20000:])
        self.assertRegex(run.stderr, r"Ran [1-9]\d* tests")


if __name__ == "__main__":
    unittest.main()
