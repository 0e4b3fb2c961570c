"""The process-based Python SDK's import name, so an app written for it
(``from octet_extension import Extension``) builds into a component
unchanged. Everything is :mod:`octet_guest`'s."""

from octet_guest import *  # noqa: F401,F403
from octet_guest import __all__  # noqa: F401
