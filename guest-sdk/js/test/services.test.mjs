import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import { Extension, InvalidParams, RpcError, agents, artifacts, policy, presentation, secrets, toolsCatalog } from "../index.js";
import { answers, callsOf, reset, witFailure } from "./fakes/recorder.mjs";

beforeEach(reset);

test("artifacts.publish sends bytes and returns the id", () => {
  assert.equal(artifacts.publish("image/png", [0x89, 0x50]), "artifact-1");
  assert.deepEqual(callsOf("artifacts.publish"), [["image/png", Uint8Array.of(0x89, 0x50)]]);
  assert.throws(() => artifacts.publish("image/png", "text"), /takes bytes/);
  assert.ok(artifacts.MIME_TYPES.includes("audio/wav"));
});

test("the tool catalog registers dynamic tools by name with their definitions", () => {
  const ext = new Extension("demo");
  ext.dynamicTool({ name: "stats", description: "S", outputSchema: { type: "object" } }, () => "");
  ext.exports();
  assert.deepEqual(toolsCatalog.registerDynamic(["stats"]), { revision: 1, tools: ["stats"] });
  assert.deepEqual(callsOf("toolsCatalog.register"), [
    [
      [
        {
          name: "stats",
          description: "S",
          parameters: '{"type":"object"}',
          outputSchema: '{"type":"object"}',
          promptSnippet: null,
          promptGuidelines: [],
        },
      ],
    ],
  ]);
  assert.throws(() => toolsCatalog.registerDynamic(["nope"]), InvalidParams);
  assert.equal(callsOf("toolsCatalog.register").length, 1, "nothing is sent for an unknown name");
  assert.deepEqual(toolsCatalog.register([{ name: "x", description: "X" }]), { revision: 1, tools: ["x"] });
  assert.deepEqual(toolsCatalog.unregister(["x"]), { revision: 2, tools: [] });
  assert.deepEqual(callsOf("toolsCatalog.unregister"), [[["x"]]]);
  assert.deepEqual(toolsCatalog.current(), { revision: 0, tools: [] });
});

test("secrets.get returns the value or throws the host's error", () => {
  assert.equal(secrets.get("tracker.api_key"), "s3cret");
  answers["secrets.get"] = () => {
    throw witFailure({ tag: "rpc", val: { code: -32004, message: "secret is unavailable", data: null } });
  };
  assert.throws(() => secrets.get("other"), (e) => e instanceof RpcError && e.code === -32004);
});

test("policy.evaluate sends the intent as WIT and returns the verdict", () => {
  answers["policy.evaluate"] = { decision: "ask", approvalToken: "a".repeat(64) };
  const verdict = policy.evaluate(
    { kind: "external_side_effect", operation: "issues.create", target: { label: "Open" }, dataClasses: ["user_text"], destructive: true },
    null,
  );
  assert.deepEqual(verdict, { decision: "ask", approvalToken: "a".repeat(64) });
  assert.deepEqual(callsOf("policy.evaluate"), [
    [
      {
        kind: "external_side_effect",
        operation: "issues.create",
        target: '{"label":"Open"}',
        dataClasses: ["user_text"],
        readOnly: null,
        destructive: true,
      },
      null,
    ],
  ]);
  assert.throws(() => policy.evaluate({ kind: "k", operation: "o", target: [] }), /JSON object/);
});

test("presentation.update and updateFor (owner first, as in Rust)", () => {
  presentation.update({ revision: 1 });
  presentation.updateFor({ sessionId: "s", extensionInstanceId: "i", processGeneration: 2 }, { revision: 2 });
  assert.deepEqual(callsOf("presentation.update"), [
    ['{"revision":1}', null],
    ['{"revision":2}', { sessionId: "s", extensionInstanceId: "i", processGeneration: 2 }],
  ]);
});

test("agents: spawn fills the Rust SDK's policy defaults and parses details", () => {
  answers["agents.spawn"] = {
    agentId: "a1",
    agentPath: "/root/a1",
    status: { state: "running", output: null, error: null },
    details: '{"principal":"p"}',
  };
  const child = agents.spawn({
    taskName: "audit",
    message: "List outdated dependencies.",
    idempotencyKey: "audit:1",
    policy: { tools: ["read", "search"], maxTurns: 12, model: { model: "small" } },
  });
  assert.deepEqual(child, {
    agentId: "a1",
    agentPath: "/root/a1",
    status: { state: "running", output: null, error: null },
    details: { principal: "p" },
  });
  assert.ok(agents.isActive(child.status));
  assert.deepEqual(callsOf("agents.spawn")[0][0], {
    taskName: "audit",
    profile: null,
    fingerprint: null,
    message: "List outdated dependencies.",
    idempotencyKey: "audit:1",
    policy: {
      tools: ["read", "search"],
      maxConcurrentChildren: 1,
      maxTurns: 12,
      maxTokens: null,
      maxCostMicrodollars: null,
      maxOutputBytes: 4096,
      timeoutMs: null,
      modelSelection: { provider: null, model: "small", reasoning: null },
    },
  });
  assert.throws(() => agents.spawn({ taskName: "t", message: "m", idempotencyKey: "k", policy: { tools: ["fly"] } }), /unknown agent tool/);
});

test("agents: send, followUp, list, wait, interrupt and listModels", () => {
  answers["agents.send"] = { deliveredTo: "a1", delivery: "steering" };
  answers["agents.followUp"] = { agentId: "a1", agentPath: "/a1", delivery: "new-run" };
  const snapshot = {
    principal: "p",
    resourceOwner: "s",
    persistenceError: null,
    agents: [{ agentId: "a1", agentPath: null, status: { state: "completed", output: "done", error: null }, details: "{}" }],
  };
  answers["agents.listAgents"] = snapshot;
  answers["agents.wait"] = { timedOut: false, snapshot };
  answers["agents.interrupt"] = { agentId: "a1", agentPath: "/a1", previousStatus: '{"state":"running"}', interruptRequested: true };
  answers["agents.listModels"] = {
    models: [{ model: "m", provider: "p", displayName: null, reasoning: ["low"], contextWindow: 1000, maxOutputTokens: 100 }],
    truncated: false,
  };
  assert.deepEqual(agents.send("a1", "focus"), { deliveredTo: "a1", delivery: "steering" });
  assert.deepEqual(agents.followUp("a1", "more"), { agentId: "a1", agentPath: "/a1", delivery: "new_run" });
  const listed = agents.list();
  assert.deepEqual(listed.agents[0], { agentId: "a1", agentPath: null, status: { state: "completed", output: "done", error: null }, details: {} });
  assert.ok(!agents.isActive(listed.agents[0].status));
  assert.equal(agents.wait(20000).timedOut, false);
  assert.deepEqual(callsOf("agents.wait"), [[20000]]);
  assert.equal(agents.wait().snapshot.principal, "p");
  assert.deepEqual(callsOf("agents.wait")[1], [null]);
  assert.deepEqual(agents.interrupt("a1").previousStatus, { state: "running" });
  assert.equal(agents.listModels("m", 5).models[0].contextWindow, 1000);
  assert.deepEqual(callsOf("agents.listModels"), [["m", 5]]);
});
