import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { Extension, InvalidParams, apiVersion, features, guestWorkspace, hasFeature, initializeParams } from "../index.js";
import { callsOf, reset } from "./fakes/recorder.mjs";

beforeEach(reset);

const cx = {
  requestId: 7,
  workspace: "/ws",
  executionScope: null,
  resourceOwner: { sessionId: "s", extensionInstanceId: "i", processGeneration: 1 },
  host: '{"model":{"id":"m"},"active_skills":[]}',
};

function thrown(body) {
  try {
    body();
  } catch (error) {
    return error;
  }
  assert.fail("nothing was thrown");
}

test("describe lists registrations in order, with lifecycle_events added", () => {
  const ext = new Extension("demo").usesArtifacts().usesDynamicTools().usesAgentModelSelection();
  ext.tool({ name: "a", description: "A", parameters: '{"type":"object","properties":{}}' }, () => "a");
  ext.dynamicTool({ name: "later", description: "L", outputSchema: { type: "object" } }, () => "later");
  ext.command({ name: "c", description: "C", usage: "/c" }, () => "c");
  ext.hook("before_prompt", () => undefined);
  ext.status("status", () => null);
  ext.onLifecycle(["turn/started", "turn_settled"], () => undefined);
  ext.maxConcurrency = 3;
  const guest = ext.exports();
  const description = guest.describe();
  assert.deepEqual(description.tools, [
    {
      name: "a",
      description: "A",
      parameters: '{"type":"object","properties":{}}',
      outputSchema: null,
      promptSnippet: null,
      promptGuidelines: [],
    },
  ]);
  assert.deepEqual(description.commands, [{ name: "c", description: "C", usage: "/c" }]);
  assert.deepEqual(description.lifecycle, ["turn-started", "turn-settled"]);
  assert.deepEqual(description.features, [
    "artifacts",
    "dynamic_tools",
    "agent_sessions",
    "agent_model_selection_v1",
    "lifecycle_events",
  ]);
  assert.equal(description.maxConcurrency, 3);
  assert.throws(() => ext.tool({ name: "later" }, () => ""), /registered twice/);
  assert.throws(() => ext.onLifecycle("turn/exploded", () => ""), /unknown lifecycle kind/);
});

test("tool calls reach initial and dynamic tools with the call context", () => {
  const ext = new Extension("demo");
  let seen = null;
  ext.tool({ name: "echo", description: "E" }, (args, ctx) => {
    seen = ctx;
    return `echo ${args.x}`;
  });
  ext.dynamicTool({ name: "later", description: "L" }, () => "dynamic");
  const guest = ext.exports();
  assert.deepEqual(guest.callTool({ name: "echo", arguments: '{"x":1}' }, cx).content, [{ tag: "text", val: "echo 1" }]);
  assert.deepEqual(seen, {
    requestId: 7,
    workspace: "/ws",
    executionScope: null,
    resourceOwner: cx.resourceOwner,
    host: { model: { id: "m" }, active_skills: [] },
  });
  assert.deepEqual(guest.callTool({ name: "later", arguments: "{}" }, cx).content, [{ tag: "text", val: "dynamic" }]);
  assert.deepEqual(thrown(() => guest.callTool({ name: "nope", arguments: "{}" }, cx)), {
    tag: "rpc",
    val: { code: -32601, message: "unknown tool: nope", data: null },
  });
  assert.equal(thrown(() => guest.callTool({ name: "echo", arguments: "{" }, cx)).tag, "invalid-params");
});

test("handler failures become WIT errors; promises are refused", () => {
  const ext = new Extension("demo");
  ext.tool({ name: "bad", description: "B" }, () => {
    throw new InvalidParams("x must be a number");
  });
  ext.tool({ name: "async", description: "A" }, async () => "late");
  ext.command({ name: "boom", description: "B" }, () => {
    throw new Error("kaput");
  });
  const guest = ext.exports();
  assert.deepEqual(thrown(() => guest.callTool({ name: "bad", arguments: "{}" }, cx)), {
    tag: "invalid-params",
    val: "x must be a number",
  });
  assert.match(thrown(() => guest.callTool({ name: "async", arguments: "{}" }, cx)).val, /must be synchronous/);
  assert.deepEqual(thrown(() => guest.executeCommand("boom", [], cx)), { tag: "failed", val: "kaput" });
});

test("hooks, context, status, renderers and menus answer their defaults", () => {
  const ext = new Extension("demo");
  ext.hook("before_prompt", (payload) => (payload.prompt === "stop" ? { deny: "stopped" } : undefined));
  ext.renderer("t", (request) => [`${request.name}:${request.arguments.n}`, { text: "!", styleRole: "r" }]);
  ext.menu(() => ({ items: [] }));
  ext.context((prompt) => ({ label: "p", content: String(prompt) }));
  const guest = ext.exports();
  assert.deepEqual(guest.runHook("before_prompt", '{"prompt":"stop"}', cx).disposition, { tag: "deny", val: "stopped" });
  assert.deepEqual(guest.runHook("before_prompt", '{"prompt":"go"}', cx).disposition, { tag: "continue" });
  assert.deepEqual(guest.runHook("after_response", "{}", cx).disposition, { tag: "continue" });
  assert.equal(guest.collectStatus("status", cx), null);
  assert.deepEqual(guest.renderTool({ name: "t", arguments: '{"n":2}', output: null, isError: false }, cx), [
    { text: "t:2", styleRole: null },
    { text: "!", styleRole: "r" },
  ]);
  assert.equal(guest.collectMenu(cx), '{"items":[]}');
  assert.deepEqual(guest.collectContext(null, cx), [{ label: "p", content: "null", placement: "prompt-suffix" }]);
});

test("init stores what the host negotiated; lifecycle failures are logged", () => {
  const ext = new Extension("demo");
  let inits = 0;
  ext.onInit(() => inits++);
  ext.onLifecycle("turn/started", () => {
    throw new Error("no state");
  });
  const guest = ext.exports();
  assert.equal(apiVersion(), "");
  guest.init({ apiVersion: "0.2", features: ["artifacts"], workspace: "/ws", initialize: '{"a":1}' });
  assert.equal(inits, 1);
  assert.equal(apiVersion(), "0.2");
  assert.deepEqual(features(), ["artifacts"]);
  assert.ok(hasFeature("artifacts") && !hasFeature("secrets"));
  assert.equal(guestWorkspace(), "/ws");
  assert.deepEqual(initializeParams(), { a: 1 });
  guest.onLifecycle({ kind: "turn-started", sessionId: "s" });
  assert.deepEqual(callsOf("host.log"), [["warning", "turn/started handler failed: no state", null]]);
});
