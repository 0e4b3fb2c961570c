"""``octet_extension.event_bus``: not available in a component (importing it
fails the build with the reason)."""

from octet_guest.unavailable import MODULES

raise ImportError(
    f"octet_extension.event_bus is not available in an octet-wasm component: {MODULES['event_bus']}",
    name="octet_extension.event_bus",
)
