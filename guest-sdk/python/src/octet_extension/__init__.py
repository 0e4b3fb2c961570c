"""octet's process-based SDK's import name: an app written for it
(``from octet_extension import Extension``) builds into a component
unchanged. Everything is :mod:`octet_guest`'s."""

from octet_guest import *  # noqa: F401,F403
from octet_guest import __all__  # noqa: F401
from octet_guest.unavailable import MODULES, missing_name


def __getattr__(name: str):
    if name in MODULES:
        raise ImportError(
            f"{__name__}.{name} is not available in an octet-wasm component: {MODULES[name]}",
            name=f"{__name__}.{name}",
        )
    raise missing_name(__name__, name)
