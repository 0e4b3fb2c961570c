"""``octet_extension.extension``: the SDK's module path for its public API."""

from octet_guest import *  # noqa: F401,F403
from octet_guest import __all__  # noqa: F401
