"""Which ``octet:extension`` WIT the component was built against, and the
refusal for an API 0.4 addition it cannot carry.

``build.py`` builds an API 0.4 manifest's app against
``octet:extension@0.4.0`` (``wit/0.4.0``) and every other app against
0.2.0 (``wit/``), which has no field for tool prompt metadata, no 0.4 hook
results and no ``composition`` import. The SDK's code runs on either
binding, so the 0.4 additions check here, at build time where the app
registers them, and name the way out.
"""

from __future__ import annotations

from wit_world.imports import types as _types

#: Whether the bindings are ``octet:extension@0.4.0``'s (0.2.0 has no
#: ``header-edit``).
V0_4 = hasattr(_types, "HeaderEdit")


def require_0_4(what: str) -> None:
    """Fails the build when ``what`` needs the 0.4.0 WIT and the component
    is built against 0.2.0."""
    if V0_4:
        return
    from .unavailable import UnsupportedInComponent

    raise UnsupportedInComponent(
        f"{what} is not available in this component: it is built against "
        "octet:extension@0.2.0, which cannot carry API 0.4's additions; set "
        "api_version = \"0.4\" in the manifest beside the app (build.py then "
        "builds against wit/0.4.0) or pass --wit <checkout>/wit/0.4.0"
    )
