// What octet-guest-build tells the SDK about the build: the version of the
// octet:extension WIT package the component is built against ("0.2.0" for
// API 0.1 and 0.2 manifests, "0.4.0" for API 0.4). The build sets it on the
// first line of the entry module, so it is known from the entry's first
// statement on (a module the entry imports runs before that, and sees
// null). null outside a build (the unit tests): nothing is refused then.

const KEY = Symbol.for("octet-guest.wit-version");

/** The octet:extension WIT version of this build, or null when unknown. */
export function witVersion() {
  const version = globalThis[KEY];
  return typeof version === "string" ? version : null;
}

/** The statement octet-guest-build puts before the entry's first line. */
export function buildPrologue(version) {
  return `globalThis[Symbol.for("octet-guest.wit-version")] = ${JSON.stringify(version)};`;
}
