"""``octet_extension.protocol``: the SDK's error type, logger and constants."""

from octet_guest.protocol import *  # noqa: F401,F403
from octet_guest.protocol import __all__  # noqa: F401
from octet_guest.unavailable import missing_name


def __getattr__(name: str):
    raise missing_name(__name__, name)
