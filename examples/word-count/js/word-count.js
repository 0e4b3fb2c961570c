// word-count (API 0.2): the file-reading reference. One tool,
// `word_count {path}`, that reads a text file of the workspace (granted by
// `filesystem = "workspace"`) and returns its line, word, character and
// byte counts, as text and as structured content.
//
// Files go through the SDK's `fs` (the engine has none): relative paths
// resolve in the workspace. The Rust and C versions answer word for word
// the same (tests/e2e/word_count.rs).

import { Extension, Failed, FsError, InvalidParams, ToolResult, decodeUtf8, fs } from "../../../guest-sdk/js/index.js";

/** Files above this size are refused rather than read into memory. */
const MAX_BYTES = 1 << 20;

/** A relative path that stays in the workspace: not empty, not absolute, no `..`. */
function checkedPath(args) {
  const path = args === null || typeof args !== "object" ? undefined : args.path;
  if (typeof path !== "string") throw new InvalidParams("path must be a string");
  if (path === "" || path.startsWith("/") || path.split("/").includes("..")) {
    throw new InvalidParams("path must be relative to the workspace, without `..`");
  }
  return path;
}

/** ASCII whitespace separates words (the same set in every language). */
const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c]);

function counts(bytes) {
  let lines = 0;
  let words = 0;
  let inWord = false;
  for (const byte of bytes) {
    if (byte === 0x0a) lines++;
    if (SPACE.has(byte)) {
      inWord = false;
    } else if (!inWord) {
      inWord = true;
      words++;
    }
  }
  return { lines, words };
}

function wordCount(args) {
  const path = checkedPath(args);
  let meta;
  try {
    meta = fs.metadata(path);
  } catch (error) {
    if (error instanceof FsError && error.code === "no-entry") {
      throw new Failed(`${path}: no such file in the workspace`);
    }
    throw new Failed(`${path} cannot be read`);
  }
  if (meta.isDir) throw new Failed(`${path} is a directory, not a file`);
  if (meta.len > MAX_BYTES) throw new Failed(`${path} is larger than 1 MiB`);
  let bytes;
  try {
    bytes = fs.read(path);
  } catch {
    throw new Failed(`${path} cannot be read`);
  }
  let text;
  try {
    text = decodeUtf8(bytes, { fatal: true });
  } catch {
    throw new Failed(`${path} is not UTF-8 text`);
  }
  const { lines, words } = counts(bytes);
  // Characters, not UTF-16 units: "😀" is one.
  const chars = [...text].length;
  return ToolResult.text(`${path}: ${lines} lines, ${words} words, ${chars} characters, ${bytes.length} bytes`)
    .structured({ lines, words, chars, bytes: bytes.length });
}

const ext = new Extension("word-count");

ext.tool(
  {
    name: "word_count",
    description: "Count the lines, words, characters and bytes of a text file in the workspace",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "A file in the workspace, relative to its root" } },
      required: ["path"],
      additionalProperties: false,
    },
    outputSchema: {
      type: "object",
      properties: {
        lines: { type: "integer" },
        words: { type: "integer" },
        chars: { type: "integer" },
        bytes: { type: "integer" },
      },
      required: ["lines", "words", "chars", "bytes"],
    },
  },
  wordCount,
);

export const guest = ext.exports();
