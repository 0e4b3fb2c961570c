// The typed results of the API 0.4 hooks: each reaches its WIT member, the
// defaults give no opinion, wrong shapes throw, and a 0.2.0 build refuses
// them with the fix.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { hookResult } from "../index.js";
import { intoHookResult } from "../src/results.js";

const VERSION = Symbol.for("octet-guest.wit-version");
afterEach(() => {
  delete globalThis[VERSION];
});

test("each 0.4 hook result reaches its WIT member", () => {
  const png = Uint8Array.of(0x89, 0x50, 0x4e, 0x47);
  const wit = intoHookResult(
    hookResult({
      cacheWarming: "stop",
      compactionFrames: [png, [1, 2]],
      providerPayload: { messages: [] },
      providerHeaders: { "x-trace": "abc", accept: ["a", "b"], "x-old": null },
    }),
  );
  assert.equal(wit.cacheWarming, "stop");
  assert.deepEqual(wit.compactionFrames, [png, Uint8Array.of(1, 2)]);
  assert.equal(wit.providerPayload, '{"messages":[]}');
  assert.deepEqual(wit.providerHeaders, [
    { name: "x-trace", values: ["abc"] },
    { name: "accept", values: ["a", "b"] },
    { name: "x-old", values: null },
  ]);
  // A plain object returned from a hook works the same way.
  assert.equal(intoHookResult({ cacheWarming: "warm" }).cacheWarming, "warm");
});

test("wrong shapes throw, naming the member", () => {
  assert.throws(() => hookResult({ cacheWarming: "maybe" }), /cacheWarming must be "warm" or "stop"/);
  assert.throws(() => hookResult({ compactionFrames: ["x"] }), /compaction frame 1 must be PNG bytes/);
  assert.throws(() => hookResult({ providerPayload: "text" }), /providerPayload must be a JSON object or array/);
  assert.throws(() => hookResult({ providerHeaders: [["a", "b"]] }), /providerHeaders must be an object/);
  assert.throws(() => hookResult({ providerHeaders: { a: 1 } }), /header a: values must be strings/);
});

test("a 0.2.0 build refuses the 0.4 results but keeps the rest", () => {
  globalThis[VERSION] = "0.2.0";
  assert.throws(() => hookResult({ cacheWarming: "stop" }), /cacheWarming is an API 0\.4 hook result: set api_version = "0\.4"/);
  assert.throws(() => hookResult({ providerHeaders: { a: "b" } }), /providerHeaders is an API 0\.4 hook result/);
  assert.equal(hookResult({ deny: "no" }).disposition.tag, "deny");
});
