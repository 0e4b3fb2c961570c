"""``octet_extension.api_v03``: not available in a component (importing it
fails the build with the reason)."""

from octet_guest.unavailable import MODULES

raise ImportError(
    f"octet_extension.api_v03 is not available in an octet-wasm component: {MODULES['api_v03']}",
    name="octet_extension.api_v03",
)
