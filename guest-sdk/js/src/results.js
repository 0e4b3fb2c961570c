// What handlers return: tool results (text, image and audio parts,
// structured content, metadata), hook verdicts and command results.

import { hookResult04 } from "./hooks.js";
import { contextItem, list, notification, optionalString, toJson } from "./values.js";

/** A text content part. */
export function textContent(text) {
  return { tag: "text", val: String(text) };
}

/** An image published as an artifact (API 0.2 with `artifacts`). */
export function imageContent(artifactId, mimeType, alt = null) {
  return {
    tag: "image",
    val: { artifactId: String(artifactId), mimeType: String(mimeType), alt: optionalString(alt) },
  };
}

/** Audio published as an artifact (API 0.2 with `artifacts`). */
export function audioContent(artifactId, mimeType, transcript = null) {
  return {
    tag: "audio",
    val: {
      artifactId: String(artifactId),
      mimeType: String(mimeType),
      transcript: optionalString(transcript),
    },
  };
}

function contentPart(value) {
  if (typeof value === "string") return textContent(value);
  if (value && typeof value.tag === "string") return value;
  if (value && value.type === "text") return textContent(value.text);
  if (value && (value.type === "image" || value.type === "audio")) {
    const id = value.artifactId ?? value.artifact_id;
    const mime = value.mimeType ?? value.mime_type;
    return value.type === "image"
      ? imageContent(id, mime, value.alt)
      : audioContent(id, mime, value.transcript);
  }
  throw new TypeError(`not a content part: ${JSON.stringify(value)}`);
}

/**
 * A tool result, built like the Rust SDK's: `ToolResult.text("done")
 * .withImage(id, "image/png", "chart").structured({n: 1})`. The shim checks
 * the protocol's bounds (1..=256 parts, at least one text part, structured
 * content exactly when the tool declared an output schema).
 */
export class ToolResult {
  constructor() {
    this.content = [];
    this.structuredContent = null;
    this.metadataValue = null;
    this.error = false;
  }

  /** A result with one text part. */
  static text(text) {
    return new ToolResult().withText(text);
  }

  /** An error result the model reads: one text part, `is_error: true`. */
  static error(text) {
    return ToolResult.text(text).isError(true);
  }

  /** Appends a text part. */
  withText(text) {
    return this.withPart(textContent(text));
  }

  /** Appends any content part (`textContent`, `imageContent`, ...). */
  withPart(part) {
    this.content.push(contentPart(part));
    return this;
  }

  /** Appends an image part for a published artifact. */
  withImage(artifactId, mimeType, alt = null) {
    return this.withPart(imageContent(artifactId, mimeType, alt));
  }

  /** Appends an audio part for a published artifact. */
  withAudio(artifactId, mimeType, transcript = null) {
    return this.withPart(audioContent(artifactId, mimeType, transcript));
  }

  /** The structured content (validated by the shim against `outputSchema`). */
  structured(value) {
    this.structuredContent = toJson(value);
    return this;
  }

  /** Metadata the host keeps but never shows the model (API 0.2). */
  metadata(value) {
    this.metadataValue = toJson(value);
    return this;
  }

  /** Marks the result as an error the model should read. */
  isError(isError = true) {
    this.error = Boolean(isError);
    return this;
  }

  /** The WIT `tool-result`. */
  toWit() {
    return {
      content: [...this.content],
      structuredContent: this.structuredContent,
      isError: this.error,
      metadata: this.metadataValue,
    };
  }
}

/**
 * The short form: `content` is a string, a content part or a list of them;
 * `structuredContent` and `metadata` any JSON-serialisable values.
 */
export function toolResult(content, { structuredContent, isError = false, metadata } = {}) {
  const result = new ToolResult();
  for (const part of list(content)) result.withPart(part);
  if (structuredContent !== undefined && structuredContent !== null) result.structured(structuredContent);
  if (metadata !== undefined && metadata !== null) result.metadata(metadata);
  return result.isError(isError);
}

/** What a tool handler returned, as the WIT `tool-result`. */
export function intoToolResult(value) {
  if (value instanceof ToolResult) return value.toWit();
  if (value === undefined || value === null) return ToolResult.text("").toWit();
  if (typeof value === "object" && "content" in value) return toolResult(value.content, value).toWit();
  return ToolResult.text(String(value)).toWit();
}

const HOOK_RESULT = Symbol("octet.hookResult");

function retryDecision(value) {
  if (value === null || value === undefined) return null;
  if (value === "retry" || value === "stop") return { tag: value };
  if (typeof value.tag === "string") return value;
  if (value.delay !== undefined) return { tag: "delay", val: Number(value.delay) };
  throw new TypeError(`providerRetry must be "retry", "stop" or {delay: ms}, not ${JSON.stringify(value)}`);
}

function rescanDecision(value) {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) {
    return value.length === 0 ? { tag: "no-rescan" } : { tag: "request-rescan", val: value.map(String) };
  }
  if (typeof value.tag === "string") return value;
  throw new TypeError(`postMutation must be a list of resource ids, not ${JSON.stringify(value)}`);
}

/**
 * A hook's verdict: `deny` (a reason; honoured for `before_prompt` and
 * `before_tool_call`), context items and notifications to add, and the typed
 * extras of particular hooks: `providerRetry` (`"retry"`, `"stop"` or
 * `{delay: ms}`), `persistenceMetadata` (`{value, public}`) and
 * `postMutation` (a list of affected resource ids to rescan, or `[]`); on
 * API 0.4 (hooks.js) `cacheWarming`, `compactionFrames`, `providerPayload`
 * and `providerHeaders`. Returning nothing from a hook continues.
 */
export function hookResult({
  deny = null,
  context = [],
  notifications = [],
  providerRetry = null,
  persistenceMetadata = null,
  postMutation = null,
  cacheWarming = null,
  compactionFrames = [],
  providerPayload = null,
  providerHeaders = null,
} = {}) {
  return {
    [HOOK_RESULT]: true,
    disposition:
      deny === null || deny === undefined ? { tag: "continue" } : { tag: "deny", val: String(deny) },
    context: list(context).map(contextItem),
    notifications: list(notifications).map(notification),
    providerRetry: retryDecision(providerRetry),
    persistenceMetadata: persistenceMetadata
      ? { value: toJson(persistenceMetadata.value ?? null), public: Boolean(persistenceMetadata.public) }
      : null,
    postMutation: rescanDecision(postMutation),
    // The members octet:extension@0.4.0 adds; always present, as its record
    // needs them (a 0.2.0 build ignores them).
    ...hookResult04({ cacheWarming, compactionFrames, providerPayload, providerHeaders }),
  };
}

/** A hook result that denies with `reason`. */
export function deny(reason) {
  return hookResult({ deny: reason });
}

export function intoHookResult(value) {
  if (value === undefined || value === null) value = hookResult();
  else if (!value[HOOK_RESULT]) value = hookResult(value);
  const { [HOOK_RESULT]: _, ...wit } = value;
  return wit;
}

export function intoCommandResult(value) {
  if (value === undefined || value === null) return { text: "", notifications: [], context: [] };
  if (typeof value === "object") {
    return {
      text: String(value.text ?? ""),
      notifications: list(value.notifications).map(notification),
      context: list(value.context).map(contextItem),
    };
  }
  return { text: String(value), notifications: [], context: [] };
}
