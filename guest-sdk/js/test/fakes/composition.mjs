import { calls, fakeInterface } from "./recorder.mjs";

/** A pending call that hands out `updates`, then `final`. */
export class FakePendingCall {
  constructor(updates, final) {
    this.updates = [...updates];
    this.final = final;
    this.disposed = false;
  }

  nextUpdate() {
    return this.updates.shift() ?? null;
  }

  finish() {
    calls.push({ name: "composition.finish", args: [] });
    return this.final;
  }

  [Symbol.dispose]() {
    this.disposed = true;
  }
}

export default fakeInterface("composition", ["context", "call", "startCall", "store"], {
  context: {
    tools: '[{"name":"read"}]',
    store: '{"seen":1}',
    limits: { timeoutMs: 30000, maxCalls: 256 },
  },
  call: (name, args, full) => JSON.stringify({ name, args: JSON.parse(args), full }),
  startCall: () => new FakePendingCall([{ sequence: 1, result: '{"partial":1}' }], '{"done":true}'),
  store: undefined,
});
