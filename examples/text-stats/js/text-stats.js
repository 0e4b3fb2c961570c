// text-stats (API 0.4): octet's typescript-hello example in JavaScript, its
// own language less the types. One tool, `text_stats`, counts characters
// (code points), words (whitespace-separated tokens of the trimmed text),
// lines (pieces between CRLF, CR or LF; 0 for empty text) and UTF-8 bytes.
// Serves two calls at once; a call checks for cancellation, reports one
// progress status when the host negotiated progress, and waits `delayMs`
// cooperatively (a cancel ends the wait).

import {
  Cancelled,
  Extension,
  InvalidParams,
  checkCancelled,
  encodeUtf8,
  hasFeature,
  progress,
  sleep,
} from "../../../guest-sdk/js/index.js";

/** Longest text accepted, in code points (the schema's `maxLength`). */
const MAX_TEXT_CHARS = 65536;
/** Longest delay accepted, in milliseconds (the schema's `maximum`). */
const MAX_DELAY_MS = 2000;

function stats(text) {
  const characters = [...text].length;
  const trimmed = text.trim();
  const words = trimmed.length === 0 ? 0 : trimmed.split(/\s+/).length;
  const lines = text.length === 0 ? 0 : text.split(/\r\n|\r|\n/).length;
  return `characters=${characters} words=${words} lines=${lines} utf8_bytes=${encodeUtf8(text).length}`;
}

/** The arguments as the schema allows them: `text`, and `delayMs` from 0 to 2000; nothing else. */
function parse(args) {
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    throw new InvalidParams("arguments must be an object");
  }
  const extra = Object.keys(args).find((key) => key !== "text" && key !== "delayMs");
  if (extra !== undefined) throw new InvalidParams(`unknown argument ${JSON.stringify(extra)}`);
  if (typeof args.text !== "string") throw new InvalidParams("text must be a string");
  if ([...args.text].length > MAX_TEXT_CHARS) {
    throw new InvalidParams(`text must be at most ${MAX_TEXT_CHARS} characters`);
  }
  const delay = args.delayMs ?? 0;
  if (!Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_MS) {
    throw new InvalidParams(`delayMs must be an integer from 0 to ${MAX_DELAY_MS}`);
  }
  return { text: args.text, delay };
}

const ext = new Extension("text-stats").usesProgress();
ext.maxConcurrency = 2;

ext.tool(
  {
    name: "text_stats",
    description: "Count characters, words, lines and UTF-8 bytes in supplied text locally",
    parameters: {
      type: "object",
      properties: {
        text: { type: "string", maxLength: MAX_TEXT_CHARS },
        delayMs: { type: "integer", minimum: 0, maximum: MAX_DELAY_MS },
      },
      required: ["text"],
      additionalProperties: false,
    },
  },
  (args) => {
    const { text, delay } = parse(args);
    checkCancelled();
    if (hasFeature("request_progress")) progress("Counting supplied text");
    if (delay > 0 && sleep(delay)) throw new Cancelled();
    return stats(text);
  },
);

export const guest = ext.exports();
