// The JavaScript SDK's composition test guest (tests/e2e/sdk_api_04.rs): a
// tool that reads the composition context, calls `read` through octet and
// commits the store, and a command that tries to compose (refused: only a
// model tool call may).

import * as composition from "../../../composition.js";
import { Extension } from "../../../index.js";

const ext = new Extension("compose").usesComposition();

ext.tool({ name: "compose", description: "Compose with read" }, (args) => {
  const context = composition.context();
  const value = composition.call("read", { path: args.path });
  composition.store({ last: args.path, count: Object.keys(context.store).length }, ["stale"]);
  return JSON.stringify({ tools: context.tools.map((t) => t.name), maxCalls: context.maxCalls, value });
});

ext.command({ name: "compose", description: "Compose from a command" }, () => {
  composition.call("read", { path: "x" });
  return "composed";
});

export const guest = ext.exports();
