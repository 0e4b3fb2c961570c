// A module resolve hook: `octet:extension/<interface>` and
// `wasi:filesystem/<interface>`, with or without `@<version>`, resolve to
// test/fakes/<interface>.mjs.
const FAKES = new URL("./fakes/", import.meta.url);
const WIT = /^(octet:extension|wasi:filesystem)\/([a-z-]+)(@[0-9.]+)?$/;

export async function resolve(specifier, context, next) {
  const match = WIT.exec(specifier);
  if (match) {
    return { url: new URL(`${match[2]}.mjs`, FAKES).href, shortCircuit: true };
  }
  return next(specifier, context);
}
