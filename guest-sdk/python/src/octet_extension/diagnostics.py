"""``octet_extension.diagnostics``: not available in a component (importing it
fails the build with the reason)."""

from octet_guest.unavailable import MODULES

raise ImportError(
    f"octet_extension.diagnostics is not available in an octet-wasm component: {MODULES['diagnostics']}",
    name="octet_extension.diagnostics",
)
