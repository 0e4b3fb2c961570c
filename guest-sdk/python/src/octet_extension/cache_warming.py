"""``octet_extension.cache_warming``: not available in a component (importing it
fails the build with the reason)."""

from octet_guest.unavailable import MODULES

raise ImportError(
    f"octet_extension.cache_warming is not available in an octet-wasm component: {MODULES['cache_warming']}",
    name="octet_extension.cache_warming",
)
