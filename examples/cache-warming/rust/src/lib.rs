//! cache-warming (API 0.4): octet's cache-warming example as a component.
//! No tools; one `cache_warming_decision` hook that says `stop` when keeping
//! the provider's prompt cache warm would cost more than 5,000
//! microdollars, and gives no opinion otherwise (the host then keeps its
//! own decision).

use octet_guest::CacheWarmingAction;
use octet_guest::hooks::CacheWarmingRequest;
use octet_guest::prelude::*;

/// Above this warming cost, in microdollars, warming is not worth it.
const MAX_WARM_COST: u64 = 5_000;

fn decide(request: CacheWarmingRequest) -> HookResult {
    if request.decision.warm_cost_microdollars > MAX_WARM_COST {
        HookResult::proceed().cache_warming(CacheWarmingAction::Stop)
    } else {
        HookResult::proceed()
    }
}

fn setup(ext: &mut Extension) {
    ext.hook("cache_warming_decision", decide);
}

octet_guest::extension!(setup);
