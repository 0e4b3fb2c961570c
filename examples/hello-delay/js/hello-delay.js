// hello-delay (API 0.2): the cancellation reference. One tool, `hello`,
// that validates its own arguments and waits cooperatively, stopping as soon
// as the request is cancelled.

import { Cancelled, Extension, InvalidParams, sleep } from "../../../guest-sdk/js/index.js";

/** Longest name accepted, in characters (the schema's `maxLength`). */
const MAX_NAME_CHARS = 256;
/** Longest delay accepted, in milliseconds (the schema's `maximum`). */
const MAX_DELAY_MS = 5000;
/** How long one cooperative wait lasts before the next check. */
const STEP_MS = 50;

/** Checks the arguments as the schema does; returns `{name, delayMs}`. */
function validate(args) {
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    throw new InvalidParams("arguments must be an object");
  }
  for (const key of Object.keys(args)) {
    if (key !== "name" && key !== "delay_ms") {
      throw new InvalidParams(`unknown field \`${key}\`, expected \`name\` or \`delay_ms\``);
    }
  }
  const { name, delay_ms: delayMs = 0 } = args;
  if (typeof name !== "string") {
    throw new InvalidParams("name must be a string");
  }
  // Characters, not UTF-16 units: "😀" is one.
  if ([...name].length > MAX_NAME_CHARS) {
    throw new InvalidParams(`name must be at most ${MAX_NAME_CHARS} characters`);
  }
  if (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS) {
    throw new InvalidParams(`delay_ms must be an integer from 0 to ${MAX_DELAY_MS}`);
  }
  return { name, delayMs };
}

const ext = new Extension("hello-delay");

ext.tool(
  {
    name: "hello",
    description: "Return a local greeting",
    parameters: {
      type: "object",
      properties: {
        name: { type: "string", maxLength: MAX_NAME_CHARS },
        delay_ms: { type: "integer", minimum: 0, maximum: MAX_DELAY_MS, default: 0 },
      },
      required: ["name"],
      additionalProperties: false,
    },
  },
  (args) => {
    const { name, delayMs } = validate(args);
    // A cooperative wait in small steps: `sleep` returns true as soon as the
    // request is cancelled.
    for (let left = delayMs; left > 0; left -= STEP_MS) {
      if (sleep(Math.min(STEP_MS, left))) throw new Cancelled();
    }
    return `Hello, ${name}!`;
  },
);

export const guest = ext.exports();
