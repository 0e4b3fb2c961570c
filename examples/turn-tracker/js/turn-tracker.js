// turn-tracker (API 0.2): tracks which turns are active from lifecycle
// events, shows `awake` while any is, and answers `/turns`.
//
// A sandboxed variant of a keep-awake extension: the native original starts
// an operating-system helper while turns run; a wasm guest cannot start
// processes, so it only keeps the state.

import { Extension } from "../../../guest-sdk/js/index.js";

/** The active turns: `(session_id, turn_id)` pairs, keyed as JSON text. */
const active = new Set();
const key = (sessionId, turnId) => JSON.stringify([sessionId, turnId]);

function summary() {
  switch (active.size) {
    case 0:
      return "No turn is active.";
    case 1:
      return "1 turn active.";
    default:
      return `${active.size} turns active.`;
  }
}

const ext = new Extension("turn-tracker");

ext.onLifecycle(["session/settled", "turn/settled", "turn/started"], (event) => {
  switch (event.kind) {
    case "turn/started":
      if (event.turnId !== null) active.add(key(event.sessionId, event.turnId));
      break;
    case "turn/settled":
      if (event.turnId !== null) active.delete(key(event.sessionId, event.turnId));
      break;
    case "session/settled":
      for (const pair of [...active]) {
        if (JSON.parse(pair)[0] === event.sessionId) active.delete(pair);
      }
      break;
  }
});

ext.command(
  { name: "turns", description: "Show how many turns are active", usage: "/turns" },
  (args) => (args.length === 0 ? summary() : "Usage: /turns"),
);

ext.status("status", (surface) =>
  active.size === 0
    ? null
    : { surface, text: "awake", styleRole: "extension.turn_tracker.active", priority: 10 },
);

ext.onShutdown(() => active.clear());

export const guest = ext.exports();
