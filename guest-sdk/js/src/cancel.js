// Cooperative cancellation of the request being served. A handler that
// never looks is still stopped: after a short grace the shim interrupts it
// and replaces the instance, losing its memory.

import { Cancelled } from "./errors.js";
import { cancellation } from "./wit.js";

/** Whether the current request has been cancelled. */
export function isCancelled() {
  return cancellation.isCancelled();
}

/** Why the request was cancelled (`user`, `timeout`, `shutdown`...), or null. */
export function cancellationReason() {
  return cancellation.reason() ?? null;
}

/** Throws `Cancelled` once the current request is cancelled. */
export function checkCancelled() {
  if (cancellation.isCancelled()) throw new Cancelled();
}

/**
 * Waits up to `ms` milliseconds (fractions rounded up, as the Rust SDK
 * rounds a Duration); `true` as soon as the request is cancelled, `false`
 * when the time ran out.
 */
export function sleep(ms) {
  const n = Number(ms);
  if (Number.isNaN(n) || n < 0) throw new TypeError(`sleep takes milliseconds >= 0, not ${JSON.stringify(ms)}`);
  return cancellation.sleep(Math.min(Math.ceil(n), Number.MAX_SAFE_INTEGER));
}
