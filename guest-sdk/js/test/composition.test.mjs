// "octet-guest/composition": each function reaches its WIT import with the
// arguments as JSON text, answers come back parsed, the host's refusals
// arrive as SDK errors, and a streaming call yields its updates, then its
// value, and is dropped.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import * as composition from "../composition.js";
import { Extension, InvalidParams, RpcError } from "../index.js";
import { FakePendingCall } from "./fakes/composition.mjs";
import { answers, callsOf, reset, witFailure } from "./fakes/recorder.mjs";

beforeEach(reset);

test("context, call and store go to octet as JSON and come back parsed", () => {
  assert.deepEqual(composition.context(), {
    tools: [{ name: "read" }],
    store: { seen: 1 },
    timeoutMs: 30000,
    maxCalls: 256,
  });
  assert.deepEqual(composition.call("read", { path: "a" }), { name: "read", args: { path: "a" }, full: false });
  assert.equal(composition.callOutcome("read").full, true);
  assert.deepEqual(callsOf("composition.call")[1], ["read", "{}", true]);
  composition.store({ seen: 2, list: [1] }, ["old"]);
  assert.deepEqual(callsOf("composition.store"), [[[["seen", "2"], ["list", "[1]"]], ["old"]]]);
  assert.throws(() => composition.call("read", [1]), InvalidParams);
  assert.deepEqual(new Extension("c").usesComposition().describe().features, ["tool_composition_v1"]);
});

test("octet's refusal and a bad answer become SDK errors", () => {
  answers["composition.call"] = () => {
    throw witFailure({ tag: "rpc", val: { code: -32602, message: "composition only from a tool call", data: null } });
  };
  assert.throws(() => composition.call("read", {}), (e) => e instanceof RpcError && e.code === -32602);
  answers["composition.context"] = { tools: "{}", store: "{}", limits: { timeoutMs: 1, maxCalls: 1 } };
  assert.throws(() => composition.context(), /tool list is not an array/);
});

test("a streaming call yields its updates, then its value, and is dropped", () => {
  const pending = new FakePendingCall(
    [
      { sequence: 1, result: '{"n":1}' },
      { sequence: 3, result: '{"n":3}' },
    ],
    '{"total":2}',
  );
  answers["composition.startCall"] = () => pending;
  const call = composition.callStreaming("grep", { pattern: "x" });
  assert.deepEqual(callsOf("composition.startCall"), [["grep", '{"pattern":"x"}', false]]);
  assert.deepEqual([...call], [
    { sequence: 1, result: { n: 1 } },
    { sequence: 3, result: { n: 3 } },
  ]);
  assert.deepEqual(call.finish(), { total: 2 });
  assert.ok(pending.disposed);
  const other = composition.callOutcomeStreaming("grep", {});
  assert.equal(callsOf("composition.startCall")[1][2], true);
  other.abandon();
});
