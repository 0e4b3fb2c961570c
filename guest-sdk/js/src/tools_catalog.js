// The dynamic tool catalog (API 0.2, feature `dynamic_tools`; declare
// `usesDynamicTools()`).
//
// Tools registered with `ext.tool` are the catalog at revision 0. Tools
// registered with `ext.dynamicTool` have a handler in every instance but are
// not offered until `registerDynamic` adds them; calls then reach their
// handler by name. Each accepted change makes a new revision, and the shim
// dispatches every call against the revision the model saw.

import { hostCall, InvalidParams } from "./errors.js";
import { currentExtension } from "./registry.js";
import { toolDefinition } from "./values.js";
import { toolsCatalog } from "./wit.js";

/** `{revision, tools}`: the revision and every active tool name, sorted. */
function catalogUpdate(update) {
  return { revision: update.revision, tools: [...update.tools] };
}

/**
 * Adds or replaces 1..=256 tools, each `{name, description, parameters,
 * outputSchema}`. Each needs a handler in this guest (`ext.dynamicTool` or
 * `ext.tool`), or its calls are answered `unknown tool`.
 */
export function register(tools) {
  return catalogUpdate(hostCall(toolsCatalog.register, tools.map(toolDefinition)));
}

/**
 * Registers the dynamic tools named `names` with the definitions given to
 * `ext.dynamicTool`. A name with no such registration throws, and nothing
 * is sent.
 */
export function registerDynamic(names) {
  const ext = currentExtension();
  if (!ext) throw new Error("the extension is not set up yet");
  const definitions = names.map((name) => {
    const tool = ext.dynamicTools.get(name);
    if (!tool) throw new InvalidParams(`no dynamic tool named ${name} is registered`);
    return tool.definition;
  });
  return catalogUpdate(hostCall(toolsCatalog.register, definitions));
}

/** Removes 1..=256 tools by name (names not in the catalog are ignored). */
export function unregister(names) {
  return catalogUpdate(hostCall(toolsCatalog.unregister, names.map(String)));
}

/** The committed catalog: `{revision, tools}`. */
export function current() {
  return catalogUpdate(toolsCatalog.current());
}
