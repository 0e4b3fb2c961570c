"""cache-warming (API 0.4): octet's cache-warming example in Python, as a
sandboxed component (the Rust port is examples/cache-warming/rust). No
tools; one `cache_warming_decision` hook that says `stop` when keeping the
provider's prompt cache warm would cost more than 5,000 microdollars, and
gives no opinion otherwise (octet then keeps its own decision). It needs no
optional feature but the hook's own, which the shim selects for the
manifest's hook.
"""

from octet_extension import Extension

MAX_WARM_COST = 5_000

ext = Extension(api_version="0.4", supported_features=("request_cancellation", "content_parts"))


@ext.cache_warming_decision
def decide(payload):
    if payload["decision"]["warm_cost_microdollars"] > MAX_WARM_COST:
        return "stop"
    return None


if __name__ == "__main__":
    ext.run()
