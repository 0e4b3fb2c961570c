// Tool prompt metadata (API 0.4, `tool_prompt_metadata_v1`): a snippet the
// host may put in the system prompt's list of tools and guidelines for the
// model. The shim checks the same bounds before anything reaches octet;
// checking them here too turns a mistake into an error at `ext.tool(...)`,
// which runs while the build snapshots the module, so a bad tool fails the
// build with its name instead of the first start (docs/api-0.4.md#v04-prompt-metadata).

import { witVersion } from "./build_info.js";

/** The feature a tool with prompt metadata needs (added by `describe`). */
export const PROMPT_METADATA_FEATURE = "tool_prompt_metadata_v1";
/** Most UTF-8 bytes of the snippet and of each guideline. */
export const MAX_PROMPT_TEXT_BYTES = 1024;
/** Most guidelines per tool. */
export const MAX_PROMPT_GUIDELINES = 16;

function utf8Length(text) {
  let bytes = 0;
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** Why `text` is out of bounds, or null (the host's rule: Cc controls other than LF and TAB are refused). */
function textProblem(text) {
  const bytes = utf8Length(text);
  if (bytes > MAX_PROMPT_TEXT_BYTES) {
    return `has ${bytes} bytes; the limit is ${MAX_PROMPT_TEXT_BYTES}`;
  }
  for (const ch of text) {
    const cp = ch.codePointAt(0);
    if ((cp < 0x20 && cp !== 0x0a && cp !== 0x09) || (cp >= 0x7f && cp <= 0x9f)) {
      const hex = cp.toString(16).toUpperCase().padStart(4, "0");
      return `contains the control character U+${hex} (only LF and TAB are allowed)`;
    }
  }
  return null;
}

function text(value, what, name) {
  if (typeof value !== "string") {
    throw new TypeError(`tool ${name}: ${what} must be a string, not ${JSON.stringify(value)}`);
  }
  const problem = textProblem(value);
  if (problem) throw new RangeError(`tool ${name}: ${what} ${problem}`);
  return value;
}

/**
 * `{promptSnippet, promptGuidelines}` of a definition, checked: the snippet
 * a string or null, the guidelines a list (a single string is one) of at
 * most 16 strings, each at most 1,024 bytes without control characters
 * other than LF and TAB. A build against octet:extension@0.2.0 (an API 0.1
 * or 0.2 manifest) cannot carry metadata, so asking for it there throws.
 */
export function promptMetadata(name, snippet, guidelines) {
  const promptSnippet = snippet === undefined || snippet === null ? null : text(snippet, "promptSnippet", name);
  const items =
    guidelines === undefined || guidelines === null ? [] : Array.isArray(guidelines) ? guidelines : [guidelines];
  if (items.length > MAX_PROMPT_GUIDELINES) {
    throw new RangeError(`tool ${name} has ${items.length} prompt guidelines; the limit is ${MAX_PROMPT_GUIDELINES}`);
  }
  const promptGuidelines = items.map((g, i) => text(g, `prompt guideline ${i + 1}`, name));
  if ((promptSnippet !== null || promptGuidelines.length > 0) && witVersion() === "0.2.0") {
    throw new TypeError(
      `tool ${name}: prompt metadata needs API 0.4: set api_version = "0.4" in extension.toml ` +
        "(octet-guest-build then builds against octet:extension@0.4.0; this build uses 0.2.0, which cannot carry it)",
    );
  }
  return { promptSnippet, promptGuidelines };
}

/** Whether a WIT tool definition carries prompt metadata. */
export function hasPromptMetadata(definition) {
  return definition.promptSnippet !== null || definition.promptGuidelines.length > 0;
}
