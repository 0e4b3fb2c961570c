// The JavaScript SDK's composition test guest (tests/e2e/sdk_api_04.rs): a
// tool that reads the composition context, calls `read` through octet and
// commits the store, and a command that tries to compose (refused: only a
// model tool call may); and a tool that reads a streaming call's partial
// results, then its value.

import * as composition from "../../../composition.js";
import { Extension } from "../../../index.js";

const ext = new Extension("compose").usesComposition();

ext.tool({ name: "compose", description: "Compose with read" }, (args) => {
  const context = composition.context();
  const value = composition.call("read", { path: args.path });
  composition.store({ last: args.path, count: context.maxCalls }, ["stale"]);
  return JSON.stringify({ tools: context.tools.map((t) => t.name), maxCalls: context.maxCalls, value });
});

ext.tool({ name: "stream", description: "Grep through octet, reading its partial results" }, () => {
  const call = composition.callStreaming("grep", { pattern: "TODO" });
  const updates = [...call].map((update) => [update.sequence, update.result]);
  return JSON.stringify({ updates, value: call.finish() });
});

ext.command({ name: "compose", description: "Compose from a command" }, () => {
  composition.call("read", { path: "x" });
  return "composed";
});

export const guest = ext.exports();
