// octet-guest for JavaScript: octet extensions as WebAssembly components run
// sandboxed by octet-wasm. Built with componentize-qjs (QuickJS), which maps
// the WIT package `octet:extension@0.2.0` like this:
//   records → objects with camelCase keys, enums → strings ("success"),
//   variants → {tag, val}, option<T> → value or null, u64 → number,
//   result<T, E> → return T / throw E (an export), or returns T / throws an
//   Error whose `payload` is E (an import).
// Handlers are synchronous: host services (sleep, confirm, ...) block.

import host from "octet:extension/host@0.2.0";
import cancellation from "octet:extension/cancellation@0.2.0";

// ---------------------------------------------------------------- errors

/**
 * A failure with a chosen protocol meaning. Throw one of the subclasses from
 * a handler; any other exception is `failed` with its message.
 */
export class ExtensionError extends Error {
  constructor(variant, message) {
    super(message);
    this.name = "ExtensionError";
    /** The WIT `error` value: `{tag, val}`. */
    this.variant = variant;
  }
}

/** The arguments or parameters were not acceptable: answered -32602. */
export class InvalidParams extends ExtensionError {
  constructor(message) {
    super({ tag: "invalid-params", val: String(message) }, `invalid params: ${message}`);
    this.name = "InvalidParams";
  }
}

/** The handler stopped because its request was cancelled: answered -32800. */
export class Cancelled extends ExtensionError {
  constructor() {
    super({ tag: "cancelled" }, "request cancelled");
    this.name = "Cancelled";
  }
}

/**
 * The handler failed: a tool call answers an `is_error` result carrying the
 * message (what the model reads); any other request is answered -32603.
 * Throwing any other exception has the same effect.
 */
export class Failed extends ExtensionError {
  constructor(message) {
    super({ tag: "failed", val: String(message) }, String(message));
    this.name = "Failed";
  }
}

/**
 * An explicit JSON-RPC error. The shim lets through -32602, -32601, -32603,
 * -32800 and -32099..=-32000; any other code becomes -32603.
 */
export class RpcError extends ExtensionError {
  constructor(code, message, data = undefined) {
    super(
      {
        tag: "rpc",
        val: {
          code: code | 0,
          message: String(message),
          data: data === undefined ? null : JSON.stringify(data),
        },
      },
      `JSON-RPC error ${code}: ${message}`,
    );
    this.name = "RpcError";
  }
}

/** The WIT error for anything a handler threw. */
function toWitError(error) {
  if (error instanceof ExtensionError) return error.variant;
  if (isWitError(error)) return error;
  const message =
    error instanceof Error ? error.message || String(error) : String(error);
  return { tag: "failed", val: message };
}

const ERROR_TAGS = new Set(["invalid-params", "cancelled", "failed", "rpc"]);

function isWitError(value) {
  return value !== null && typeof value === "object" && ERROR_TAGS.has(value.tag);
}

/** An error a host import returned, as the SDK's class for it. */
function fromWitError(error) {
  if (!isWitError(error)) {
    return error instanceof Error ? error : new Failed(String(error));
  }
  switch (error.tag) {
    case "invalid-params":
      return new InvalidParams(error.val);
    case "cancelled":
      return new Cancelled();
    case "failed":
      return new Failed(error.val);
    default: {
      const { code, message, data } = error.val;
      return new RpcError(code, message, data == null ? undefined : JSON.parse(data));
    }
  }
}

/** Calls a host import, rethrowing its WIT error as an SDK error. */
function hostCall(fn, ...args) {
  try {
    return fn(...args);
  } catch (error) {
    // componentize-qjs throws an Error whose `payload` is the WIT error.
    const witError =
      error !== null && typeof error === "object" && "payload" in error ? error.payload : error;
    throw fromWitError(witError);
  }
}

// ------------------------------------------------------------ conversions

/** WIT enum case names use `-`; the protocol's names use `_`. */
function witName(value) {
  return String(value).replaceAll("_", "-");
}

function optionalString(value) {
  return value === undefined || value === null ? null : String(value);
}

function jsonText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidParams(`${what} is not valid JSON: ${error.message}`);
  }
}

function notification(value) {
  if (typeof value === "string") return { level: "info", title: null, message: value };
  return {
    level: witName(value.level ?? "info"),
    title: optionalString(value.title),
    message: String(value.message ?? ""),
  };
}

function contextItem(value) {
  return {
    label: String(value.label),
    content: String(value.content),
    placement: witName(value.placement ?? "prompt-suffix"),
  };
}

function statusItem(value, surface) {
  if (typeof value === "string") {
    return { surface, text: value, styleRole: null, priority: 0 };
  }
  return {
    surface: String(value.surface ?? surface),
    text: String(value.text),
    styleRole: optionalString(value.styleRole ?? value.style_role),
    priority: (value.priority ?? 0) | 0,
  };
}

function segment(value) {
  if (typeof value === "string") return { text: value, styleRole: null };
  return {
    text: String(value.text),
    styleRole: optionalString(value.styleRole ?? value.style_role),
  };
}

function list(value) {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function contentPart(value) {
  if (typeof value === "string") return { tag: "text", val: value };
  if (value && typeof value.tag === "string") return value;
  if (value && value.type === "text") return { tag: "text", val: String(value.text) };
  throw new Failed(`not a content part: ${JSON.stringify(value)}`);
}

// ------------------------------------------------------------ results

/** A text content part. */
export function textContent(text) {
  return { tag: "text", val: String(text) };
}

/** An image published as an artifact (API 0.2 with `artifacts`). */
export function imageContent(artifactId, mimeType, alt = null) {
  return { tag: "image", val: { artifactId, mimeType, alt: optionalString(alt) } };
}

/** Audio published as an artifact (API 0.2 with `artifacts`). */
export function audioContent(artifactId, mimeType, transcript = null) {
  return {
    tag: "audio",
    val: { artifactId, mimeType, transcript: optionalString(transcript) },
  };
}

const TOOL_RESULT = Symbol("octet.toolResult");

/**
 * What a tool returns when a plain string is not enough. `content` is a
 * string, a content part or a list of them (at least one text part).
 * `structuredContent` and `metadata` are any JSON-serialisable values.
 */
export function toolResult(content, { structuredContent, isError = false, metadata } = {}) {
  return {
    [TOOL_RESULT]: true,
    content: list(content).map(contentPart),
    structuredContent:
      structuredContent === undefined || structuredContent === null
        ? null
        : JSON.stringify(structuredContent),
    isError: Boolean(isError),
    metadata: metadata === undefined || metadata === null ? null : JSON.stringify(metadata),
  };
}

function intoToolResult(value) {
  if (value && value[TOOL_RESULT]) {
    const { content, structuredContent, isError, metadata } = value;
    return { content, structuredContent, isError, metadata };
  }
  if (value === undefined || value === null) return intoToolResult(toolResult(""));
  if (typeof value === "object" && "content" in value) {
    return intoToolResult(toolResult(value.content, value));
  }
  return intoToolResult(toolResult(String(value)));
}

const HOOK_RESULT = Symbol("octet.hookResult");

/**
 * A hook's verdict: `deny` (a reason; honoured for `before_prompt` and
 * `before_tool_call`), context items and notifications to add, and the typed
 * extras of particular hooks: `providerRetry` (`"retry"`, `"stop"` or
 * `{delay: ms}`), `persistenceMetadata` (`{value, public}`) and
 * `postMutation` (a list of affected resource ids to rescan, or `[]`).
 * Returning nothing from a hook continues.
 */
export function hookResult({
  deny = null,
  context = [],
  notifications = [],
  providerRetry = null,
  persistenceMetadata = null,
  postMutation = null,
} = {}) {
  let retry = null;
  if (providerRetry === "retry" || providerRetry === "stop") retry = { tag: providerRetry };
  else if (providerRetry && typeof providerRetry.tag === "string") retry = providerRetry;
  else if (providerRetry && providerRetry.delay !== undefined) {
    retry = { tag: "delay", val: Number(providerRetry.delay) };
  }
  let rescan = null;
  if (Array.isArray(postMutation)) {
    rescan =
      postMutation.length === 0
        ? { tag: "no-rescan" }
        : { tag: "request-rescan", val: postMutation.map(String) };
  } else if (postMutation && typeof postMutation.tag === "string") rescan = postMutation;
  return {
    [HOOK_RESULT]: true,
    disposition:
      deny === null || deny === undefined ? { tag: "continue" } : { tag: "deny", val: String(deny) },
    context: list(context).map(contextItem),
    notifications: list(notifications).map(notification),
    providerRetry: retry,
    persistenceMetadata: persistenceMetadata
      ? {
          value: JSON.stringify(persistenceMetadata.value ?? null),
          public: Boolean(persistenceMetadata.public),
        }
      : null,
    postMutation: rescan,
  };
}

/** A hook result that denies with `reason`. */
export function deny(reason) {
  return hookResult({ deny: reason });
}

function intoHookResult(value) {
  if (value === undefined || value === null) value = hookResult();
  else if (!value[HOOK_RESULT]) value = hookResult(value);
  const { [HOOK_RESULT]: _, ...wit } = value;
  return wit;
}

function intoCommandResult(value) {
  if (value === undefined || value === null) {
    return { text: "", notifications: [], context: [] };
  }
  if (typeof value === "object") {
    return {
      text: String(value.text ?? ""),
      notifications: list(value.notifications).map(notification),
      context: list(value.context).map(contextItem),
    };
  }
  return { text: String(value), notifications: [], context: [] };
}

// ------------------------------------------------------------- the call

/** Where a host request comes from. */
function callContext(cx) {
  let hostState = null;
  try {
    hostState = JSON.parse(cx.host);
  } catch {
    hostState = null;
  }
  return {
    requestId: cx.requestId,
    workspace: cx.workspace,
    executionScope: cx.executionScope ?? null,
    resourceOwner: cx.resourceOwner ?? null,
    /** The host's ExtensionHostState (session, model, skills), parsed. */
    host: hostState,
  };
}

let initState = null;

/** `0.1` or `0.2` after init; `""` before. */
export function apiVersion() {
  return initState ? initState.apiVersion : "";
}

/** The negotiated protocol features. */
export function features() {
  return initState ? [...initState.features] : [];
}

export function hasFeature(name) {
  return initState ? initState.features.includes(name) : false;
}

/** The workspace as the guest sees it (`/workspace` when granted). */
export function guestWorkspace() {
  return initState ? initState.workspace : "";
}

/** The host's whole `initialize` params, parsed. */
export function initializeParams() {
  return initState ? initState.initialize : null;
}

// --------------------------------------------------------- host services

/**
 * Shows a notification (manifest `contributes.notifications`).
 * `notify("done")`, `notify("done", {level: "success", title})`.
 */
export function notify(message, { level = "info", title = null } = {}) {
  hostCall(host.notify, notification({ level, title, message }));
}

/**
 * Asks the user a yes/no question and waits (manifest
 * `contributes.confirmations`). `false` when the frontend cannot ask; throws
 * `Cancelled` when the request is cancelled while waiting.
 */
export function confirm(prompt, { detail = null, destructive = false, default: byDefault = false } = {}) {
  return hostCall(host.confirm, {
    prompt: String(prompt),
    detail: optionalString(detail),
    destructive: Boolean(destructive),
    default: Boolean(byDefault),
  });
}

/** Asks the user for text (API 0.2); `null` when unavailable or cancelled. */
export function requestInput(prompt, { secret = false } = {}) {
  return hostCall(host.requestInput, String(prompt), Boolean(secret)) ?? null;
}

/**
 * Reports progress for the current request (needs `usesProgress()`):
 * `progress("indexing", {current: 3, total: 10, unit: "files"})`.
 */
export function progress(message, { current = null, total = null, unit = null } = {}) {
  hostCall(host.progress, {
    tag: "status",
    val: { message: String(message), current, total, unit: optionalString(unit) },
  });
}

/** Streams output for the current request: a string or bytes. */
export function progressOutput(data, stream = "stdout") {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  hostCall(host.progress, { tag: "output", val: { stream, data: bytes } });
}

/** Replaces the request's decoration (needs `usesProgressDecoration()`). */
export function progressDecoration(label, detail = null) {
  hostCall(host.progress, {
    tag: "decoration",
    val: { label: String(label), detail: optionalString(detail) },
  });
}

/**
 * Writes a structured log record to the shim's stderr: level `debug`,
 * `info`, `warning` or `error`; `fields` an optional object.
 */
export function log(level, message, fields = null) {
  host.log(
    level === "warn" ? "warning" : level,
    String(message),
    fields === null || fields === undefined ? null : JSON.stringify(fields),
  );
}

/** Sends unsolicited prompt context (manifest `contributes.context`). */
export function contributeContext(item) {
  hostCall(host.contributeContext, contextItem(item));
}

/** Sends a status line for a declared surface (manifest `contributes.ui`). */
export function contributeStatus(item) {
  hostCall(host.contributeStatus, statusItem(item, item.surface ?? "status"));
}

// ---------------------------------------------------------- cancellation

/** Whether the current request has been cancelled. */
export function isCancelled() {
  return cancellation.isCancelled();
}

/** The cancellation reason (`user`, `timeout`, `shutdown`...), or null. */
export function cancellationReason() {
  return cancellation.reason() ?? null;
}

/** Throws `Cancelled` when the current request has been cancelled. */
export function checkCancelled() {
  if (cancellation.isCancelled()) throw new Cancelled();
}

/**
 * Waits up to `ms` milliseconds; `true` as soon as the request is cancelled,
 * `false` when the time ran out.
 */
export function sleep(ms) {
  return cancellation.sleep(Math.max(0, Math.floor(Number(ms) || 0)));
}

// ------------------------------------------------------------- lifecycle

/** The lifecycle kinds, by their protocol names. */
export const LIFECYCLE_KINDS = Object.freeze([
  "session/started",
  "session/settled",
  "turn/started",
  "turn/settled",
  "tool/started",
  "tool/settled",
]);

/** `turn/started`, `turn_started` or `turn-started` → `turn-started`. */
function lifecycleKind(kind) {
  const wit = String(kind).replaceAll("/", "-").replaceAll("_", "-");
  if (!LIFECYCLE_KINDS.includes(wit.replace("-", "/"))) {
    throw new Error(`octet-guest: unknown lifecycle kind ${JSON.stringify(kind)}`);
  }
  return wit;
}

function lifecycleEvent(event) {
  return {
    /** The protocol's name: `turn/started`... */
    kind: event.kind.replace("-", "/"),
    sessionId: event.sessionId,
    runId: event.runId ?? null,
    turnId: event.turnId ?? null,
    toolCallId: event.toolCallId ?? null,
    toolName: event.toolName ?? null,
    outcome: event.outcome ?? null,
    durationMs: event.durationMs ?? null,
    reason: event.reason ?? null,
  };
}

// ------------------------------------------------------------ extension

function assertUnique(map, key, what) {
  if (map.has(key)) throw new Error(`octet-guest: ${what} \`${key}\` is registered twice`);
}

function run(handler, ...args) {
  const value = handler(...args);
  if (value && typeof value.then === "function") {
    throw new Failed("octet-guest handlers must be synchronous (a Promise was returned)");
  }
  return value;
}

/** Runs `body`, turning anything thrown into the WIT error it throws. */
function answer(body) {
  try {
    return body();
  } catch (error) {
    throw toWitError(error);
  }
}

function unknown(what, name) {
  return new RpcError(-32601, `unknown ${what}: ${name}`);
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
   * JSON text kept as written); `outputSchema` is optional (API 0.2). The
   * handler gets `(args, ctx)` and returns a string, `toolResult(...)`, or
   * throws.
   */
  tool({ name, description = "", parameters = { type: "object" }, outputSchema = null }, handler) {
    assertUnique(this.tools, name, "tool");
    this.tools.set(name, {
      definition: {
        name: String(name),
        description: String(description),
        parameters: jsonText(parameters),
        outputSchema: outputSchema === null ? null : jsonText(outputSchema),
      },
      handler,
    });
    return this;
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

  /** Declares optional API 0.2 features the extension uses. */
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

  /** The `describe` answer: registrations in the order they were made. */
  describe() {
    const features = [...this.features];
    if (this.lifecycle.size > 0 && !features.includes("lifecycle_events")) {
      features.push("lifecycle_events");
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

  /** The object to export as the component's `guest` interface. */
  exports() {
    const ext = this;
    return {
      describe() {
        return ext.describe();
      },

      init(params) {
        answer(() => {
          initState = {
            apiVersion: params.apiVersion,
            features: [...params.features],
            workspace: params.workspace,
            initialize: (() => {
              try {
                return JSON.parse(params.initialize);
              } catch {
                return null;
              }
            })(),
          };
          if (ext.initHandler) run(ext.initHandler);
        });
      },

      callTool(call, cx) {
        return answer(() => {
          const tool = ext.tools.get(call.name);
          if (!tool) throw unknown("tool", call.name);
          const args = parseJson(call.arguments, "the tool arguments");
          return intoToolResult(run(tool.handler, args, callContext(cx)));
        });
      },

      executeCommand(name, args, cx) {
        return answer(() => {
          const command = ext.commands.get(name);
          if (!command) throw unknown("command", name);
          return intoCommandResult(run(command.handler, [...args], callContext(cx)));
        });
      },

      runHook(name, payload, cx) {
        return answer(() => {
          const hook = ext.hooks.get(name);
          if (!hook) return intoHookResult(null);
          const value = parseJson(payload, "the hook payload");
          return intoHookResult(run(hook, value, callContext(cx)));
        });
      },

      collectContext(prompt, cx) {
        return answer(() => {
          if (!ext.contextHandler) return [];
          return list(run(ext.contextHandler, prompt ?? null, callContext(cx))).map(contextItem);
        });
      },

      collectStatus(surface, cx) {
        return answer(() => {
          const handler = ext.statusHandlers.get(surface);
          if (!handler) return null;
          const value = run(handler, surface, callContext(cx));
          return value === undefined || value === null ? null : statusItem(value, surface);
        });
      },

      renderTool(request, cx) {
        return answer(() => {
          const handler = ext.renderers.get(request.name);
          if (!handler) throw unknown("renderer", request.name);
          const render = {
            name: request.name,
            arguments: (() => {
              try {
                return JSON.parse(request.arguments);
              } catch {
                return null;
              }
            })(),
            output: request.output ?? null,
            isError: request.isError,
          };
          return list(run(handler, render, callContext(cx))).map(segment);
        });
      },

      collectMenu(cx) {
        return answer(() => {
          if (!ext.menuHandler) return null;
          const value = run(ext.menuHandler, callContext(cx));
          return value === undefined || value === null ? null : JSON.stringify(value);
        });
      },

      onLifecycle(event) {
        const handlers = ext.lifecycle.get(event.kind) ?? [];
        const value = lifecycleEvent(event);
        for (const handler of handlers) {
          try {
            run(handler, value);
          } catch (error) {
            const text = error instanceof Error ? error.message : String(error);
            log("warning", `${value.kind} handler failed: ${text}`);
          }
        }
      },

      onShutdown() {
        answer(() => {
          if (ext.shutdownHandler) run(ext.shutdownHandler);
        });
      },
    };
  }
}
