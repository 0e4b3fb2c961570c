// The JS SDK's service wrappers end to end: a test guest (not an example)
// that tests/e2e/sdk_services.rs runs through the real binary, with the C
// twin guest-sdk/c/tests/services.c answering every tool word for word the
// same. Built by `scripts/build-guests-js services` into
// target/components/js/services.wasm.
//
// Each tool calls one service with its arguments and answers JSON: the
// SDK's result with its camelCase keys written back as the protocol's
// snake_case, so a wrong or missing field shows in the transcript.

import {
  Cancelled,
  Extension,
  agents,
  cancellationReason,
  checkCancelled,
  confirm,
  contributeContext,
  contributeStatus,
  log,
  notifyTitled,
  policy,
  presentation,
  progress,
  progressDecoration,
  progressOutput,
  requestInput,
  secrets,
  sleep,
  toolsCatalog,
} from "../../index.js";

/** Keys whose values are the host's own JSON, kept as they are. */
const OPAQUE = new Set(["details", "previous_status", "persistence_error"]);

function snake(value) {
  if (Array.isArray(value)) return value.map(snake);
  if (value === null || typeof value !== "object") return value;
  const out = {};
  for (const [key, inner] of Object.entries(value)) {
    const name = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    out[name] = OPAQUE.has(name) ? inner : snake(inner);
  }
  return out;
}

const json = (value) => JSON.stringify(snake(value));

const ext = new Extension("sdk-services")
  .usesProgressDecoration()
  .usesSecrets()
  .usesApprovals()
  .usesDynamicTools()
  .usesAgentModelSelection();

const tool = (name, handler) => ext.tool({ name, description: `The ${name} service` }, handler);

tool("spawn", (args) => {
  const policy = {
    tools: args.tools.split(","),
    maxTurns: args.max_turns ?? null,
    timeoutMs: args.timeout_ms ?? null,
  };
  if (args.max_concurrent_children) policy.maxConcurrentChildren = args.max_concurrent_children;
  if (args.model) policy.model = { model: args.model };
  return json(
    agents.spawn({
      taskName: args.task_name,
      message: args.message,
      idempotencyKey: args.idempotency_key,
      profile: args.profile ?? null,
      policy,
    }),
  );
});
tool("send", (args) => json(agents.send(args.target, args.message)));
tool("follow_up", (args) => json(agents.followUp(args.target, args.message)));
tool("list", () => json(agents.list()));
tool("wait", (args) => json(agents.wait(args.timeout_ms ?? null)));
tool("interrupt", (args) => json(agents.interrupt(args.target)));
tool("models", (args) => json(agents.listModels(args.query ?? null, args.limit ?? null)));
tool("active", (args) => json({ active: agents.isActive({ state: args.state }) }));

// The value never leaves the guest: only its length does.
tool("secret", (args) => json({ bytes: secrets.get(args.name).length }));

tool("policy", (args) =>
  json(
    policy.evaluate(
      {
        kind: args.kind,
        operation: args.operation,
        target: args.target,
        dataClasses: args.data_classes.split(","),
        destructive: args.destructive ?? null,
      },
      args.token ?? null,
    ),
  ),
);

tool("ask", (args) => {
  const confirmed = confirm(args.prompt, { detail: args.detail, destructive: true, default: true });
  const input = requestInput(args.input_prompt, args.secret);
  return json({ confirmed, input });
});

tool("report", () => {
  progress("indexing");
  progress("indexing", { current: 3, total: 10, unit: "files" });
  progressOutput("stderr", "é\n");
  progressDecoration("Building", "step 1");
  notifyTitled("warning", "Disk", "almost full");
  contributeContext({ label: "branch", content: "main", placement: "system_prefix" });
  contributeStatus({ surface: "status", text: "indexed", styleRole: "extension.sdk.ok", priority: 3 });
  log("info", "reported", { n: 2 });
  return "reported";
});

tool("catalog", (args) => {
  const unregistered = toolsCatalog.unregister(args.names.split(","));
  return json({ unregistered, current: toolsCatalog.current() });
});

tool("present_for", (args, ctx) => {
  presentation.updateFor(ctx.resourceOwner, { revision: args.revision });
  return "presented";
});

tool("wait_for_cancel", () => {
  log("info", "waiting for the cancellation");
  for (let i = 0; i < 6000; i++) {
    if (sleep(10)) break;
  }
  const reason = cancellationReason();
  try {
    checkCancelled();
  } catch (error) {
    if (error instanceof Cancelled) log("info", `cancelled: ${reason}`);
    throw error;
  }
  return "never cancelled";
});

export const guest = ext.exports();
