// Child agent sessions (API 0.2, feature `agent_sessions`; model selection
// and `listModels` also need `agent_model_selection_v1`; declare
// `usesAgents()` / `usesAgentModelSelection()`).
//
//   const child = agents.spawn({
//     taskName: "audit-deps", message: "List outdated dependencies.",
//     idempotencyKey: `audit-deps:${ctx.requestId}`,
//     policy: { tools: ["read", "search"], maxTurns: 12 },
//   });
//   const done = agents.wait(20000);
//
// Only while serving a tool call or a command: the host derives the owner
// from that request. The shim checks every bound (names, fingerprint,
// message ≤ 128 KiB, idempotency key, policy ceilings, wait 1..=60,000 ms,
// model query and limit) before anything reaches the host; the host's
// refusals arrive as `RpcError`s with its code: -32002 (not bound, limits,
// idempotency conflicts, unknown targets), -32000 (its 8 worker slots are
// busy), -32800 (the parent settled).

import { hostCall } from "./errors.js";
import { optionalNumber, optionalString, parseOrNull } from "./values.js";
import { agents } from "./wit.js";

/** The tools a child may be granted. */
export const AGENT_TOOLS = Object.freeze(["read", "search", "edit", "write", "bash"]);

function agentTool(name) {
  const tool = String(name);
  if (!AGENT_TOOLS.includes(tool)) {
    throw new TypeError(`unknown agent tool ${JSON.stringify(name)} (known: ${AGENT_TOOLS.join(", ")})`);
  }
  return tool;
}

/**
 * A child's ceilings, as the Rust SDK's `Policy`: `tools` (non-empty, no
 * duplicates); `maxConcurrentChildren` (1..=8, default 1) and
 * `maxOutputBytes` (512..=16384, default 4096); absent ceilings inherit the
 * parent's: `maxTurns` (1..=256), `maxTokens` (1000..=64000),
 * `maxCostMicrodollars` (1..=50,000,000), `timeoutMs` (5000..=86,400,000);
 * `model` `{provider, model, reasoning}` needs `agent_model_selection_v1`.
 */
function spawnPolicy({
  tools,
  maxConcurrentChildren = 1,
  maxTurns = null,
  maxTokens = null,
  maxCostMicrodollars = null,
  maxOutputBytes = 4096,
  timeoutMs = null,
  model = null,
}) {
  return {
    tools: [...tools].map(agentTool),
    maxConcurrentChildren: optionalNumber(maxConcurrentChildren ?? 1, "maxConcurrentChildren"),
    maxTurns: optionalNumber(maxTurns, "maxTurns"),
    maxTokens: optionalNumber(maxTokens, "maxTokens"),
    maxCostMicrodollars: optionalNumber(maxCostMicrodollars, "maxCostMicrodollars"),
    maxOutputBytes: optionalNumber(maxOutputBytes ?? 4096, "maxOutputBytes"),
    timeoutMs: optionalNumber(timeoutMs, "timeoutMs"),
    modelSelection:
      model === null || model === undefined
        ? null
        : {
            provider: optionalString(model.provider),
            model: optionalString(model.model),
            reasoning: optionalString(model.reasoning),
          },
  };
}

function status(value) {
  return { state: value.state, output: value.output ?? null, error: value.error ?? null };
}

function snapshot(value) {
  return {
    principal: value.principal,
    resourceOwner: value.resourceOwner,
    persistenceError: parseOrNull(value.persistenceError),
    agents: value.agents.map((record) => ({
      agentId: record.agentId,
      agentPath: record.agentPath ?? null,
      status: status(record.status),
      details: parseOrNull(record.details),
    })),
  };
}

/** Whether `status` is `pending` or `running` (unknown states count as settled). */
export function isActive(value) {
  return value.state === "pending" || value.state === "running";
}

/**
 * Starts a child session: `taskName` (1..=48 of `[a-z0-9_-]`), `message`
 * (≤ 128 KiB), `idempotencyKey` (1..=256 bytes: the same key with identical
 * input returns the original child, so derive it from what makes the task
 * unique), `policy` (see above), optional `profile` and `fingerprint` (64
 * lowercase hex). Returns `{agentId, agentPath, status: {state, output,
 * error}, details}`.
 */
export function spawn({ taskName, message, idempotencyKey, policy, profile = null, fingerprint = null }) {
  const spawned = hostCall(agents.spawn, {
    taskName: String(taskName),
    profile: optionalString(profile),
    fingerprint: optionalString(fingerprint),
    message: String(message),
    idempotencyKey: String(idempotencyKey),
    policy: spawnPolicy(policy ?? { tools: [] }),
  });
  return {
    agentId: spawned.agentId,
    agentPath: spawned.agentPath,
    status: status(spawned.status),
    details: parseOrNull(spawned.details),
  };
}

/**
 * Steers the running child `target` (an agent id or path) with `message`;
 * returns `{deliveredTo, delivery}` (`steering` or `queued`).
 */
export function send(target, message) {
  const steered = hostCall(agents.send, String(target), String(message));
  return { deliveredTo: steered.deliveredTo, delivery: steered.delivery };
}

/**
 * Queues a follow-up for `target`, or resumes it as a new run when it had
 * settled; returns `{agentId, agentPath, delivery}` (`follow_up` or
 * `new_run`).
 */
export function followUp(target, message) {
  const done = hostCall(agents.followUp, String(target), String(message));
  return { agentId: done.agentId, agentPath: done.agentPath, delivery: done.delivery.replace("-", "_") };
}

/**
 * The children of this extension and owner: `{principal, resourceOwner,
 * persistenceError, agents: [{agentId, agentPath, status, details}]}`.
 */
export function list() {
  return snapshot(hostCall(agents.listAgents));
}

/**
 * Waits until no child is pending or running, or `timeoutMs` (1..=60,000;
 * null: the host's 30,000) passed; returns `{timedOut, snapshot}`.
 */
export function wait(timeoutMs = null) {
  const waited = hostCall(agents.wait, optionalNumber(timeoutMs, "timeoutMs"));
  return { timedOut: waited.timedOut, snapshot: snapshot(waited.snapshot) };
}

/**
 * Interrupts `target` and its descendants; returns `{agentId, agentPath,
 * previousStatus, interruptRequested}`.
 */
export function interrupt(target) {
  const done = hostCall(agents.interrupt, String(target));
  return {
    agentId: done.agentId,
    agentPath: done.agentPath,
    previousStatus: parseOrNull(done.previousStatus),
    interruptRequested: done.interruptRequested,
  };
}

/**
 * The models a child may select (needs `agent_model_selection_v1`): `query`
 * is a case-insensitive substring (≤ 128 bytes), `limit` 1..=100 (null: 50).
 * Returns `{models: [{model, provider, displayName, reasoning,
 * contextWindow, maxOutputTokens}], truncated}`.
 */
export function listModels(query = null, limit = null) {
  const listed = hostCall(agents.listModels, optionalString(query), optionalNumber(limit, "limit"));
  return {
    models: listed.models.map((info) => ({
      model: info.model,
      provider: info.provider,
      displayName: info.displayName ?? null,
      reasoning: [...info.reasoning],
      contextWindow: info.contextWindow,
      maxOutputTokens: info.maxOutputTokens,
    })),
    truncated: listed.truncated,
  };
}
