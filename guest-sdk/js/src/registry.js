// The registry of what an extension offers: tools (initial and dynamic),
// commands, hooks, context, status surfaces, renderers, the menu, lifecycle
// observers, init and shutdown, concurrency and features; and the
// `describe` answer built from it.

import { guestExports } from "./dispatch.js";
import { lifecycleKind } from "./lifecycle.js";
import { hasPromptMetadata, PROMPT_METADATA_FEATURE } from "./prompt.js";
import { list, optionalString, toolDefinition } from "./values.js";

let current = null;

/** The extension whose `exports()` the component exports (one per component). */
export function currentExtension() {
  return current;
}

export function setCurrentExtension(ext) {
  current = ext;
}

function assertUnique(map, key, what) {
  if (map.has(key)) throw new Error(`octet-guest: ${what} \`${key}\` is registered twice`);
}

/**
 * The registry of what an extension offers. Register everything at module
 * top level, then `export const guest = ext.exports();`.
 */
export class Extension {
  /** `name` should equal the manifest's `name`. */
  constructor(name) {
    this.name = String(name);
    this.tools = new Map();
    this.dynamicTools = new Map();
    this.commands = new Map();
    this.hooks = new Map();
    this.contextHandler = null;
    this.statusHandlers = new Map();
    this.renderers = new Map();
    this.menuHandler = null;
    this.lifecycle = new Map();
    this.initHandler = null;
    this.shutdownHandler = null;
    this.features = [];
    this._maxConcurrency = 1;
  }

  /**
   * How many requests the extension may serve at once (default 1). Above 1
   * the shim runs tool calls on a pool of separate instances: in-memory
   * state is then per instance.
   */
  get maxConcurrency() {
    return this._maxConcurrency;
  }

  set maxConcurrency(n) {
    this._maxConcurrency = Math.max(1, Math.floor(Number(n) || 1));
  }

  /**
   * Registers a tool. `parameters` is the JSON schema (an object, or its
   * JSON text kept as written; default `{"type":"object"}`); `outputSchema`
   * is optional (API 0.2); `promptSnippet` (a string) and
   * `promptGuidelines` (at most 16 strings) are the tool's prompt metadata
   * (API 0.4; each at most 1,024 bytes, LF and TAB the only control
   * characters; out of bounds throws here). The handler gets `(args, ctx)`
   * and returns a string, a `ToolResult`, `toolResult(...)`, or throws.
   */
  tool(definition, handler) {
    assertUnique(this.tools, definition.name, "tool");
    assertUnique(this.dynamicTools, definition.name, "tool");
    this.tools.set(definition.name, { definition: toolDefinition(definition), handler });
    return this;
  }

  /**
   * Registers the handler of a tool that is not in the initial catalog: it
   * is offered once `toolsCatalog.registerDynamic([name])` adds it at run
   * time (API 0.2; declare `usesDynamicTools()`). Arguments and results are
   * handled as for `tool`.
   */
  dynamicTool(definition, handler) {
    assertUnique(this.tools, definition.name, "tool");
    assertUnique(this.dynamicTools, definition.name, "tool");
    this.dynamicTools.set(definition.name, { definition: toolDefinition(definition), handler });
    return this;
  }

  /** The handler for a tool call by name (initial or dynamic), or undefined. */
  toolHandler(name) {
    return (this.tools.get(name) ?? this.dynamicTools.get(name))?.handler;
  }

  /** Registers a slash command; the handler gets `(args: string[], ctx)`. */
  command({ name, description = "", usage = null }, handler) {
    assertUnique(this.commands, name, "command");
    this.commands.set(name, {
      definition: { name: String(name), description: String(description), usage: optionalString(usage) },
      handler,
    });
    return this;
  }

  /**
   * Handles a hook (`before_prompt`, ...); the handler gets `(payload, ctx)`
   * and returns nothing (continue), `hookResult({...})` or `deny(reason)`.
   */
  hook(name, handler) {
    assertUnique(this.hooks, name, "hook");
    this.hooks.set(String(name), handler);
    return this;
  }

  /**
   * Answers `context/collect`: the handler gets `(prompt | null, ctx)` and
   * returns an item `{label, content, placement}`, a list, or nothing.
   */
  context(handler) {
    if (this.contextHandler) throw new Error("octet-guest: the context handler is registered twice");
    this.contextHandler = handler;
    return this;
  }

  /**
   * Answers `status/collect` for `surface`: the handler gets
   * `(surface, ctx)` and returns `{text, styleRole, priority}`, a string, or
   * null to show nothing.
   */
  status(surface, handler) {
    assertUnique(this.statusHandlers, surface, "status surface");
    this.statusHandlers.set(String(surface), handler);
    return this;
  }

  /**
   * Renders calls of `tool`: the handler gets `({name, arguments, output,
   * isError}, ctx)` and returns a string, a segment `{text, styleRole}` or a
   * list of them.
   */
  renderer(tool, handler) {
    assertUnique(this.renderers, tool, "renderer");
    this.renderers.set(String(tool), handler);
    return this;
  }

  /** Answers `menu/collect` (API 0.2) with the menu as a JSON value. */
  menu(handler) {
    if (this.menuHandler) throw new Error("octet-guest: the menu handler is registered twice");
    this.menuHandler = handler;
    return this;
  }

  /**
   * Observes lifecycle events: `kinds` is one name or a list
   * (`"turn/started"`, ... or `LIFECYCLE_KINDS`). Adds the
   * `lifecycle_events` feature. Errors thrown are logged.
   */
  onLifecycle(kinds, handler) {
    for (const kind of list(kinds)) {
      const wit = lifecycleKind(kind);
      if (!this.lifecycle.has(wit)) this.lifecycle.set(wit, []);
      this.lifecycle.get(wit).push(handler);
    }
    return this;
  }

  /** Runs once per instance at init; throwing fails the instance's start. */
  onInit(handler) {
    this.initHandler = handler;
    return this;
  }

  /** Runs at graceful shutdown. */
  onShutdown(handler) {
    this.shutdownHandler = handler;
    return this;
  }

  /**
   * Declares optional API 0.2 features the extension uses. The shim
   * negotiates exactly the declared features (plus the two required ones it
   * always speaks) and refuses the services of the others.
   */
  usesFeature(...names) {
    for (const name of names) {
      if (!this.features.includes(name)) this.features.push(String(name));
    }
    return this;
  }

  /** Declares `request_progress`, needed by `progress`. */
  usesProgress() {
    return this.usesFeature("request_progress");
  }

  /** Declares `request_progress` and `progress_decoration`. */
  usesProgressDecoration() {
    return this.usesFeature("request_progress", "progress_decoration");
  }

  /** Declares `artifacts`, needed by `artifacts.publish` and image/audio parts. */
  usesArtifacts() {
    return this.usesFeature("artifacts");
  }

  /** Declares `dynamic_tools`, needed by `toolsCatalog`. */
  usesDynamicTools() {
    return this.usesFeature("dynamic_tools");
  }

  /** Declares `secrets`, needed by `secrets.get`. */
  usesSecrets() {
    return this.usesFeature("secrets");
  }

  /** Declares `policy_intents`, needed by `policy.evaluate`. */
  usesPolicy() {
    return this.usesFeature("policy_intents");
  }

  /** Declares `policy_intents` and `approvals` (approval tokens). */
  usesApprovals() {
    return this.usesFeature("policy_intents", "approvals");
  }

  /** Declares `agent_sessions`, needed by `agents`. */
  usesAgents() {
    return this.usesFeature("agent_sessions");
  }

  /** Declares `agent_sessions` and `agent_model_selection_v1`. */
  usesAgentModelSelection() {
    return this.usesFeature("agent_sessions", "agent_model_selection_v1");
  }

  /**
   * Declares `tool_composition_v1` (API 0.4), needed by the functions of
   * "octet-guest/composition".
   */
  usesComposition() {
    return this.usesFeature("tool_composition_v1");
  }

  /**
   * The object to export as the component's `guest` interface:
   * `export const guest = ext.exports();`. One extension per component.
   */
  exports() {
    setCurrentExtension(this);
    return guestExports(this);
  }

  /**
   * The `describe` answer: registrations in the order they were made.
   * `lifecycle_events` is added when a lifecycle handler exists, and
   * `tool_prompt_metadata_v1` when a tool (initial or dynamic) carries
   * prompt metadata, as the Rust SDK does.
   */
  describe() {
    const features = [...this.features];
    if (this.lifecycle.size > 0 && !features.includes("lifecycle_events")) {
      features.push("lifecycle_events");
    }
    const tools = [...this.tools.values(), ...this.dynamicTools.values()];
    if (tools.some((t) => hasPromptMetadata(t.definition)) && !features.includes(PROMPT_METADATA_FEATURE)) {
      features.push(PROMPT_METADATA_FEATURE);
    }
    return {
      name: this.name,
      tools: [...this.tools.values()].map((t) => t.definition),
      commands: [...this.commands.values()].map((c) => c.definition),
      hooks: [...this.hooks.keys()],
      context: this.contextHandler !== null,
      statusSurfaces: [...this.statusHandlers.keys()],
      renderers: [...this.renderers.keys()],
      menu: this.menuHandler !== null,
      lifecycle: [...this.lifecycle.keys()],
      maxConcurrency: this._maxConcurrency,
      features,
    };
  }
}
