// Tool composition (API 0.4, feature `tool_composition_v1`): from inside a
// tool handler, call the session's other tools through octet, and read or
// commit the session's composition store.
//
//   import * as composition from "octet-guest/composition";
//   ext.usesComposition();
//   ext.tool({ name: "summary", ... }, () => {
//     const { tools } = composition.context();
//     const value = composition.call("read", { path: "README.md" });
//     ...
//   });
//
// A module of its own, not re-exported by "octet-guest": it imports the WIT
// interface `composition`, which only octet:extension@0.4.0 has (an API 0.4
// manifest), so a build for 0.1 or 0.2 that imports it fails naming it.
// Only a model tool call may compose: from any other handler every
// function here throws the shim's refusal. The shim enforces octet's bounds
// (256 calls per tool call, arguments of 128 KiB, one store commit, at most
// 4 calls in flight) and reads the sidecar files octet uses for large
// values, so results always arrive as JSON.

import composition from "octet:extension/composition";
import { Failed, hostCall, InvalidParams } from "./src/errors.js";

function parse(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Failed(`the ${what} is not JSON: ${error.message}`);
  }
}

function argumentsJson(args) {
  if (args === undefined) return "{}";
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new InvalidParams(`composition arguments must be a JSON object, not ${JSON.stringify(args)}`);
  }
  return JSON.stringify(args);
}

/**
 * `composition/context`: `{tools, store, timeoutMs, maxCalls}`: the
 * definitions of the tools this call may use, the store's entries, and
 * octet's budget for this tool call.
 */
export function context() {
  const answer = hostCall(composition.context);
  const tools = parse(answer.tools, "composition tool list");
  const store = parse(answer.store, "composition store");
  if (!Array.isArray(tools)) throw new Failed("the composition tool list is not an array");
  if (typeof store !== "object" || store === null || Array.isArray(store)) {
    throw new Failed("the composition store is not an object");
  }
  return { tools, store, timeoutMs: answer.limits.timeoutMs, maxCalls: answer.limits.maxCalls };
}

/** `composition/call`: runs tool `name` with `args` (an object) and returns its value. */
export function call(name, args) {
  return parse(hostCall(composition.call, String(name), argumentsJson(args), false), "composition value");
}

/** Like `call`, but returns the tool's whole outcome (content parts, error flag, value). */
export function callOutcome(name, args) {
  return parse(hostCall(composition.call, String(name), argumentsJson(args), true), "composition outcome");
}

/**
 * `composition/store`: sets the keys of `set` (an object of JSON values)
 * and deletes the keys in `remove`, as the one commit this tool call may
 * make.
 */
export function store(set = {}, remove = []) {
  const entries = Object.entries(set).map(([key, value]) => [key, JSON.stringify(value ?? null)]);
  hostCall(composition.store, entries, [...remove].map(String));
}

/**
 * A composition call in flight whose partial results arrive as they come:
 * iterate it (or call `nextUpdate()`) for `{sequence, result}` updates
 * until none are left, then `finish()` for the final value. `abandon()`
 * gives up the call (octet is told).
 */
class StreamingCall {
  constructor(pending, outcome) {
    this.pending = pending;
    this.outcome = outcome;
  }

  /** The next partial result, waiting for it; null once no more will come. */
  nextUpdate() {
    const update = this.pending.nextUpdate();
    if (update === null || update === undefined) return null;
    return { sequence: update.sequence, result: parse(update.result, "composition update") };
  }

  *[Symbol.iterator]() {
    for (let update = this.nextUpdate(); update !== null; update = this.nextUpdate()) yield update;
  }

  /** The final reply: the value (or the outcome); unread updates are discarded. */
  finish() {
    let text;
    try {
      text = hostCall(() => this.pending.finish());
    } finally {
      this.abandon();
    }
    return parse(text, this.outcome ? "composition outcome" : "composition value");
  }

  /** Drops the call; a call not finished yet is abandoned. */
  abandon() {
    if (this.pending && typeof this.pending[Symbol.dispose] === "function") this.pending[Symbol.dispose]();
    this.pending = null;
  }
}

function start(name, args, outcome) {
  const pending = hostCall(composition.startCall, String(name), argumentsJson(args), outcome);
  return new StreamingCall(pending, outcome);
}

/** Like `call`, asking octet for the tool's partial results as it runs (`updates: true`). */
export function callStreaming(name, args) {
  return start(name, args, false);
}

/** Like `callStreaming`, finishing with the tool's whole outcome. */
export function callOutcomeStreaming(name, args) {
  return start(name, args, true);
}
