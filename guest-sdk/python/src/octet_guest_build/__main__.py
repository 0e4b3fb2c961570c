"""``python -m octet_guest_build``: the build tool (see the package)."""

import sys

from . import main

sys.exit(main())
