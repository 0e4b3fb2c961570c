// cache-warming (API 0.4): octet's cache-warming example in JavaScript. No
// tools; one `cache_warming_decision` hook that says `stop` when keeping the
// provider's prompt cache warm would cost more than 5,000 microdollars, and
// gives no opinion otherwise (the host then keeps its own decision).

import { Extension, hookResult } from "../../../guest-sdk/js/index.js";

/** Above this warming cost, in microdollars, warming is not worth it. */
const MAX_WARM_COST = 5000;

const ext = new Extension("cache-warming");

ext.hook("cache_warming_decision", (payload) => {
  if (payload.decision.warm_cost_microdollars > MAX_WARM_COST) {
    return hookResult({ cacheWarming: "stop" });
  }
  return undefined;
});

export const guest = ext.exports();
