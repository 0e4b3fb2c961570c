// What the fake imports saw and how they answer. Tests set `answers[name]`
// (a function of the call's arguments, or a value) and read `calls`.

export const calls = [];
export const answers = {};

/** Forgets every recorded call and answer. */
export function reset() {
  calls.length = 0;
  for (const key of Object.keys(answers)) delete answers[key];
}

/** The recorded calls of `name` (`host.notify`...), as argument lists. */
export function callsOf(name) {
  return calls.filter((c) => c.name === name).map((c) => c.args);
}

/**
 * An error as componentize-qjs throws it for an import's `result` error:
 * an Error whose `payload` is the WIT value.
 */
export function witFailure(payload) {
  const error = new Error("import failed");
  error.payload = payload;
  return error;
}

/** A fake interface: every listed function records and answers. */
export function fakeInterface(prefix, names, defaults = {}) {
  const object = {};
  for (const name of names) {
    const full = `${prefix}.${name}`;
    object[name] = (...args) => {
      calls.push({ name: full, args });
      const answer = full in answers ? answers[full] : defaults[name];
      return typeof answer === "function" ? answer(...args) : answer;
    };
  }
  return object;
}
