import assert from "node:assert/strict";
import { test } from "node:test";
import {
  Cancelled,
  Failed,
  InvalidParams,
  RpcError,
  ToolResult,
  audioContent,
  deny,
  hookResult,
  imageContent,
  isCancelledError,
  textContent,
  toolResult,
} from "../index.js";
import { fromWitError, toWitError } from "../src/errors.js";
import { intoCommandResult, intoHookResult, intoToolResult } from "../src/results.js";

test("ToolResult builds like the Rust SDK's", () => {
  const result = ToolResult.text("Chart of 3 values.")
    .withImage("artifact_1", "image/png", "bar chart")
    .withAudio("artifact_2", "audio/wav")
    .structured({ z: 1, a: 2 })
    .metadata({ cache: "miss" });
  assert.deepEqual(intoToolResult(result), {
    content: [
      { tag: "text", val: "Chart of 3 values." },
      { tag: "image", val: { artifactId: "artifact_1", mimeType: "image/png", alt: "bar chart" } },
      { tag: "audio", val: { artifactId: "artifact_2", mimeType: "audio/wav", transcript: null } },
    ],
    structuredContent: '{"z":1,"a":2}',
    isError: false,
    metadata: '{"cache":"miss"}',
  });
  assert.equal(intoToolResult(ToolResult.error("no")).isError, true);
});

test("the short forms: strings, toolResult and {content}", () => {
  assert.deepEqual(intoToolResult("hi").content, [textContent("hi")]);
  assert.deepEqual(intoToolResult(undefined).content, [textContent("")]);
  assert.deepEqual(intoToolResult(42).content, [textContent("42")]);
  const short = intoToolResult(toolResult(["a", imageContent("id", "image/png")], { structuredContent: { n: 1 } }));
  assert.deepEqual(short.content, [textContent("a"), imageContent("id", "image/png", null)]);
  assert.equal(short.structuredContent, '{"n":1}');
  const object = intoToolResult({ content: [{ type: "text", text: "x" }, { type: "audio", artifact_id: "a", mime_type: "audio/wav" }], isError: true });
  assert.deepEqual(object.content, [textContent("x"), audioContent("a", "audio/wav")]);
  assert.equal(object.isError, true);
  assert.throws(() => toolResult([{ bogus: 1 }]), /not a content part/);
});

test("hook results: continue by default, deny, typed extras", () => {
  assert.deepEqual(intoHookResult(undefined), {
    disposition: { tag: "continue" },
    context: [],
    notifications: [],
    providerRetry: null,
    persistenceMetadata: null,
    postMutation: null,
    cacheWarming: null,
    compactionFrames: [],
    providerPayload: null,
    providerHeaders: [],
  });
  assert.deepEqual(intoHookResult(deny("no")).disposition, { tag: "deny", val: "no" });
  const full = intoHookResult(
    hookResult({
      context: { label: "l", content: "c", placement: "system_suffix" },
      notifications: ["note"],
      providerRetry: { delay: 250 },
      persistenceMetadata: { value: { k: 1 }, public: true },
      postMutation: ["r1"],
    }),
  );
  assert.deepEqual(full.context, [{ label: "l", content: "c", placement: "system-suffix" }]);
  assert.deepEqual(full.notifications, [{ level: "info", title: null, message: "note" }]);
  assert.deepEqual(full.providerRetry, { tag: "delay", val: 250 });
  assert.deepEqual(full.persistenceMetadata, { value: '{"k":1}', public: true });
  assert.deepEqual(full.postMutation, { tag: "request-rescan", val: ["r1"] });
  assert.deepEqual(intoHookResult({ postMutation: [], providerRetry: "stop" }).postMutation, { tag: "no-rescan" });
  assert.throws(() => hookResult({ providerRetry: "later" }), /providerRetry/);
});

test("command results from strings, nothing, or objects", () => {
  assert.deepEqual(intoCommandResult("ok"), { text: "ok", notifications: [], context: [] });
  assert.deepEqual(intoCommandResult(null), { text: "", notifications: [], context: [] });
  assert.deepEqual(intoCommandResult({ text: "t", notifications: { level: "success", message: "m" } }).notifications, [
    { level: "success", title: null, message: "m" },
  ]);
});

test("errors map to the WIT variants and back", () => {
  assert.deepEqual(toWitError(new InvalidParams("bad")), { tag: "invalid-params", val: "bad" });
  assert.deepEqual(toWitError(new Cancelled()), { tag: "cancelled" });
  assert.deepEqual(toWitError(new Failed("boom")), { tag: "failed", val: "boom" });
  assert.deepEqual(toWitError(new TypeError("oops")), { tag: "failed", val: "oops" });
  assert.deepEqual(toWitError("plain"), { tag: "failed", val: "plain" });
  assert.deepEqual(toWitError(new RpcError(-32001, "busy", { retry: true })), {
    tag: "rpc",
    val: { code: -32001, message: "busy", data: '{"retry":true}' },
  });
  const back = fromWitError({ tag: "rpc", val: { code: -32004, message: "secret is unavailable", data: '{"n":1}' } });
  assert.ok(back instanceof RpcError);
  assert.equal(back.code, -32004);
  assert.deepEqual(back.data, { n: 1 });
  assert.ok(isCancelledError(fromWitError({ tag: "cancelled" })));
  assert.ok(!isCancelledError(new Failed("x")));
  assert.equal(fromWitError({ tag: "rpc", val: { code: 1, message: "m", data: "not json" } }).data, "not json");
});
