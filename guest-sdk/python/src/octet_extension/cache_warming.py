"""``octet_extension.cache_warming``: API 0.4's typed cache-warming advice,
under the SDK's module name (everything is :mod:`octet_guest.hooks_v04`'s)."""

from octet_guest.hooks_v04 import (  # noqa: F401
    CacheWarmingAction,
    CacheWarmingDecision,
    CacheWarmingDecisionHandler,
    CacheWarmingDecisionPayload,
    CacheWarmingDecisionResult,
    cache_warming_decision,
)

__all__ = [
    "CacheWarmingAction",
    "CacheWarmingDecision",
    "CacheWarmingDecisionHandler",
    "CacheWarmingDecisionPayload",
    "CacheWarmingDecisionResult",
    "cache_warming_decision",
]
