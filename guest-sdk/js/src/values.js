// Conversions between the SDK's plain objects and the WIT records
// componentize-qjs expects (camelCase keys, enums as strings, variants as
// `{tag, val}`, `option<T>` as the value or null).

import { InvalidParams } from "./errors.js";
import { promptMetadata } from "./prompt.js";

/** WIT enum case names use `-`; the protocol's names use `_`. */
export function witName(value) {
  return String(value).replaceAll("_", "-");
}

export function optionalString(value) {
  return value === undefined || value === null ? null : String(value);
}

export function optionalNumber(value, what) {
  if (value === undefined || value === null) return null;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || !Number.isInteger(n)) {
    throw new TypeError(`${what} must be a non-negative integer, not ${JSON.stringify(value)}`);
  }
  return n;
}

/** A JSON value as text; strings are taken as JSON text already written. */
export function jsonText(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Any value as JSON text (strings become JSON strings). */
export function toJson(value) {
  return JSON.stringify(value === undefined ? null : value);
}

/** JSON text from the shim, parsed; `null` when unreadable. */
export function parseOrNull(text) {
  if (text === undefined || text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidParams(`${what} is not valid JSON: ${error.message}`);
  }
}

export function list(value) {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

const LEVELS = new Set(["info", "success", "warning", "error"]);

export function notifyLevel(level) {
  const name = String(level ?? "info");
  if (!LEVELS.has(name)) {
    throw new TypeError(
      `notification level must be info, success, warning or error, not ${JSON.stringify(level)}`,
    );
  }
  return name;
}

/** A notification: `{level, title, message}` or a message string. */
export function notification(value) {
  if (typeof value === "string") return { level: "info", title: null, message: value };
  return {
    level: notifyLevel(value.level),
    title: optionalString(value.title),
    message: String(value.message ?? ""),
  };
}

export function contextItem(value) {
  return {
    label: String(value.label),
    content: String(value.content),
    placement: witName(value.placement ?? "prompt-suffix"),
  };
}

export function statusItem(value, surface) {
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

export function segment(value) {
  if (typeof value === "string") return { text: value, styleRole: null };
  return {
    text: String(value.text),
    styleRole: optionalString(value.styleRole ?? value.style_role),
  };
}

/**
 * A tool definition: `{name, description, parameters, outputSchema,
 * promptSnippet, promptGuidelines}`. The prompt metadata (API 0.4) is
 * checked against the host's bounds here (see prompt.js); both members are
 * always present, as the 0.4.0 record needs them (a 0.2.0 build ignores
 * them).
 */
export function toolDefinition({
  name,
  description = "",
  parameters = { type: "object" },
  outputSchema = null,
  promptSnippet = null,
  promptGuidelines = [],
}) {
  if (typeof name !== "string") throw new TypeError("a tool needs a string `name`");
  return {
    name,
    description: String(description),
    parameters: jsonText(parameters),
    outputSchema: outputSchema === null || outputSchema === undefined ? null : jsonText(outputSchema),
    ...promptMetadata(name, promptSnippet, promptGuidelines),
  };
}
