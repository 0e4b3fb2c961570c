// What a guest may ask of the host while serving a request: notifications,
// confirmations, input, progress, logs and unsolicited contributions. Every
// function acts for the request the instance is serving; a refused call
// throws the SDK error the shim returned and sends nothing.

import { hostCall } from "./errors.js";
import {
  contextItem,
  notification,
  optionalNumber,
  optionalString,
  statusItem,
} from "./values.js";
import { encodeUtf8 } from "./utf8.js";
import { host } from "./wit.js";

/**
 * Shows a notification (manifest `contributes.notifications = true`):
 * `notify("success", "done")`. Levels: `info`, `success`, `warning`, `error`.
 */
export function notify(level, message) {
  sendNotification({ level, title: null, message });
}

/** Shows a notification with a title. */
export function notifyTitled(level, title, message) {
  sendNotification({ level, title, message });
}

/** Shows a notification `{level, title, message}`. */
export function sendNotification(value) {
  hostCall(host.notify, notification(value));
}

/**
 * Asks the user a yes/no question and waits (manifest
 * `contributes.confirmations = true`; API 0.2 only from a tool call or a
 * command). `false` when the frontend cannot ask; throws `Cancelled` when the
 * request is cancelled while waiting. Takes a prompt and options, or one
 * `{prompt, detail, destructive, default}` object.
 */
export function confirm(prompt, options = {}) {
  const request = typeof prompt === "object" && prompt !== null ? prompt : { ...options, prompt };
  return hostCall(host.confirm, {
    prompt: String(request.prompt),
    detail: optionalString(request.detail),
    destructive: Boolean(request.destructive),
    default: Boolean(request.default),
  });
}

/**
 * Asks the user for text (API 0.2, from a tool call or a command); `null`
 * when cancelled, unavailable or headless. Never log or return a `secret`
 * answer.
 */
export function requestInput(prompt, secret = false) {
  return hostCall(host.requestInput, String(prompt), Boolean(secret)) ?? null;
}

/**
 * Reports progress for the current request (declare `usesProgress()`):
 * `progress("indexing")` or `progress("indexing", {current: 3, total: 10,
 * unit: "files"})`, shown as `message [current/total unit]`.
 */
export function progress(message, { current = null, total = null, unit = null } = {}) {
  const status =
    typeof message === "object" && message !== null ? message : { message, current, total, unit };
  hostCall(host.progress, {
    tag: "status",
    val: {
      message: String(status.message),
      current: optionalNumber(status.current, "progress current"),
      total: optionalNumber(status.total, "progress total"),
      unit: optionalString(status.unit),
    },
  });
}

/**
 * Streams output for the current request: `stream` is `stdout` or `stderr`,
 * `data` a string (sent as UTF-8) or bytes.
 */
export function progressOutput(stream, data) {
  if (stream !== "stdout" && stream !== "stderr") {
    throw new TypeError(`progressOutput's stream must be "stdout" or "stderr", not ${JSON.stringify(stream)}`);
  }
  const bytes = typeof data === "string" ? encodeUtf8(data) : Uint8Array.from(data);
  hostCall(host.progress, { tag: "output", val: { stream, data: bytes } });
}

/** Replaces the request's decoration (declare `usesProgressDecoration()`). */
export function progressDecoration(label, detail = null) {
  hostCall(host.progress, {
    tag: "decoration",
    val: { label: String(label), detail: optionalString(detail) },
  });
}

const LOG_LEVELS = new Set(["debug", "info", "warning", "error"]);

/**
 * Writes a structured record to the shim's log (stderr, never the protocol
 * stream): `log("info", "loaded", {n: 2})`. Levels: `debug`, `info`,
 * `warning`, `error`.
 */
export function log(level, message, fields = null) {
  const name = level === "warn" ? "warning" : String(level);
  if (!LOG_LEVELS.has(name)) {
    throw new TypeError(`log level must be debug, info, warning or error, not ${JSON.stringify(level)}`);
  }
  host.log(name, String(message), fields === null || fields === undefined ? null : JSON.stringify(fields));
}

/** Sends context the model sees unasked (manifest `contributes.context`). */
export function contributeContext(item) {
  hostCall(host.contributeContext, contextItem(item));
}

/** Sends a status line for a declared surface (manifest `contributes.ui`). */
export function contributeStatus(item) {
  hostCall(host.contributeStatus, statusItem(item, item.surface ?? "status"));
}
