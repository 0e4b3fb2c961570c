// The component's exports: each finds its handler in the registry and
// converts between WIT values and the SDK's plain objects. Anything a
// handler throws becomes the WIT error the shim answers.

import { callContext, storeInit } from "./call.js";
import { Failed, RpcError, toWitError } from "./errors.js";
import { log } from "./host.js";
import { lifecycleEvent } from "./lifecycle.js";
import { intoCommandResult, intoHookResult, intoToolResult } from "./results.js";
import { contextItem, list, parseJson, parseOrNull, segment, statusItem } from "./values.js";

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

/** The `guest` interface for `ext`. */
export function guestExports(ext) {
  return {
    describe() {
      return ext.describe();
    },

    init(params) {
      answer(() => {
        storeInit(params);
        if (ext.initHandler) run(ext.initHandler);
      });
    },

    callTool(call, cx) {
      return answer(() => {
        const handler = ext.toolHandler(call.name);
        if (!handler) throw unknown("tool", call.name);
        const args = parseJson(call.arguments, "the tool arguments");
        return intoToolResult(run(handler, args, callContext(cx)));
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
          arguments: parseOrNull(request.arguments),
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
