"""``octet_extension.resources``: not available in a component (importing it
fails the build with the reason)."""

from octet_guest.unavailable import MODULES

raise ImportError(
    f"octet_extension.resources is not available in an octet-wasm component: {MODULES['resources']}",
    name="octet_extension.resources",
)
