// Errors: what a handler throws, and what a host import's failure becomes.

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
 * -32800 and -32099..=-32000; any other code becomes -32603. `data` is any
 * JSON-serialisable value.
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
    /** The JSON-RPC error code (the host's, for a refused service call). */
    this.code = code | 0;
    this.data = data === undefined ? null : data;
  }
}

/** Whether `error` reports a cancellation (stop instead of retrying). */
export function isCancelledError(error) {
  return error instanceof Cancelled;
}

const ERROR_TAGS = new Set(["invalid-params", "cancelled", "failed", "rpc"]);

function isWitError(value) {
  return value !== null && typeof value === "object" && ERROR_TAGS.has(value.tag);
}

/** The WIT error for anything a handler threw. */
export function toWitError(error) {
  if (error instanceof ExtensionError) return error.variant;
  if (isWitError(error)) return error;
  const message = error instanceof Error ? error.message || String(error) : String(error);
  return { tag: "failed", val: message };
}

/** An error a host import returned, as the SDK's class for it. */
export function fromWitError(error) {
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
      let parsed;
      try {
        parsed = data == null ? undefined : JSON.parse(data);
      } catch {
        parsed = data;
      }
      return new RpcError(code, message, parsed);
    }
  }
}

/**
 * The payload of an exception a host import threw: componentize-qjs throws
 * an Error whose `payload` is the WIT `result`'s error value.
 */
export function importErrorPayload(error) {
  return error !== null && typeof error === "object" && "payload" in error ? error.payload : error;
}

/** Calls a host import, rethrowing its WIT error as an SDK error. */
export function hostCall(fn, ...args) {
  try {
    return fn(...args);
  } catch (error) {
    throw fromWitError(importErrorPayload(error));
  }
}
