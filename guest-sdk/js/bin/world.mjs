// The world octet-guest-build builds against, and what its failures mean.
// Kept apart from the CLI so the unit tests can check both without
// componentize-qjs.

/** The WASI version of the pinned WIT (guest-sdk/js/wit/deps), the host's. */
export const WASI_VERSION = "0.2.12";

/** The WASI packages shipped in guest-sdk/js/wit/deps. */
export const WASI_PACKAGES = Object.freeze(["cli", "clocks", "filesystem", "io", "random", "sockets"]);

/** What every build imports besides octet:extension: the SDK's `fs`. */
export const DEFAULT_IMPORTS = Object.freeze([
  `wasi:filesystem/types@${WASI_VERSION}`,
  `wasi:filesystem/preopens@${WASI_VERSION}`,
]);

/** The manifest versions a build serves, and the octet WIT package each builds against. */
export const WIT_FOR_API = Object.freeze({ "0.1": "0.2.0", "0.2": "0.2.0", "0.4": "0.4.0" });

/**
 * The top-level `api_version` of an extension.toml's text, or null when it
 * has none. Only what precedes the first table header is looked at, which is
 * where TOML puts top-level keys; a string in either quote style.
 */
export function manifestApiVersion(toml) {
  for (const raw of toml.split(/\r?\n/)) {
    const line = raw.trim();
    if (line.startsWith("[")) break;
    const match = /^api_version\s*=\s*(?:"([^"]*)"|'([^']*)')\s*(?:#.*)?$/.exec(line);
    if (match) return match[1] ?? match[2];
  }
  return null;
}

/** Compares two `x.y.z` versions: negative, 0 or positive. */
function newer(a, b) {
  const x = a.split(".").map(Number);
  const y = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] || 0) - (y[i] || 0);
  return 0;
}

/**
 * Which octet WIT directory a build uses: `wit` is a WIT root like the
 * checkout's `wit/` (octet:extension@0.2.0, with the newer packages in
 * subdirectories named by version: `wit/0.4.0`), or one package's own
 * directory. `api` is the manifest's api_version (null without a
 * manifest: 0.2.0, what every build used before 0.4). Returns `{dir}`, or
 * `{error}` with the sentence to show.
 */
export function selectWit(wit, api, { exists, read }) {
  if (api !== null && !(api in WIT_FOR_API)) {
    return {
      error: `the manifest says api_version = "${api}"; octet-guest-build builds API 0.1, 0.2 and 0.4 extensions (set api_version = "0.1", "0.2" or "0.4")`,
    };
  }
  const wanted = WIT_FOR_API[api ?? "0.2"];
  const versionOf = (dir) => octetPackage(read(`${dir}/world.wit`)).split("@")[1];
  if (!exists(`${wit}/world.wit`)) return { error: `no WIT package at ${wit} (pass --wit <octet-wasm>/wit or set OCTET_WIT)` };
  const nested = `${wit}/${wanted}`;
  if (versionOf(wit) !== wanted && exists(`${nested}/world.wit`) && versionOf(nested) === wanted) {
    return { dir: nested };
  }
  // A package named directly is used when it can serve the manifest: its
  // own version, or a newer one (a 0.4.0 component serves 0.1 and 0.2
  // manifests too).
  if (newer(versionOf(wit), wanted) >= 0) return { dir: wit };
  return {
    error:
      `the manifest's api_version "${api ?? "0.2"}" builds against octet:extension@${wanted}, ` +
      `but ${wit} holds octet:extension@${versionOf(wit)} and no ${wanted}/ beside it: ` +
      "pass --wit <octet-wasm>/wit (the WIT root of a checkout, holding both)",
  };
}

const INTERFACE = /^[a-z][a-z0-9-]*:[a-z][a-z0-9-]*\/[a-z][a-z0-9-]*(@[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*)?$/;

/** Whether `name` is a WIT interface name (`ns:pkg/iface@version`). */
export function validInterface(name) {
  return INTERFACE.test(name);
}

/** The `package ...@version` of the octet WIT's world.wit text. */
export function octetPackage(worldWit) {
  const match = /^\s*package\s+(octet:extension@[0-9][0-9A-Za-z.+-]*)\s*;/m.exec(worldWit);
  if (!match) throw new Error("the WIT's world.wit does not declare package octet:extension@<version>");
  return match[1];
}

/** The root package's world.wit: octet:extension's world plus `extra` imports. */
export function worldSource(octetWorldWit, extra = []) {
  const pkg = octetPackage(octetWorldWit);
  const [name, version] = pkg.split("@");
  const imports = [...new Set([...DEFAULT_IMPORTS, ...extra])];
  return [
    "// Written by octet-guest-build for one build.",
    "package octet:guest-build;",
    "",
    "world extension {",
    `    include ${name}/extension@${version};`,
    ...imports.map((i) => `    import ${i};`),
    "}",
    "",
  ].join("\n");
}

function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const UNRESOLVED = /failed to resolve JavaScript import "([^"]+)" from (\S+)/;

/**
 * A componentize-qjs failure as one plain paragraph: an import the world
 * lacks is named with the flag that adds it, a missing module or package
 * with where it was looked for. Anything else keeps the engine's own words.
 */
export function explainFailure(error, { entry, moduleRoot, imports = [] }) {
  const text = String(error && error.message ? error.message : error)
    .replace(/^[:\s]+/, "")
    .trim();
  const match = UNRESOLVED.exec(text);
  if (!match) return text;
  const [, specifier, from] = match;
  if (validInterface(specifier) || /^[a-z][a-z0-9-]*:/.test(specifier)) {
    const world = ["octet:extension", ...DEFAULT_IMPORTS, ...imports].join(", ");
    if (/^octet:extension\/composition(@|$)/.test(specifier)) {
      return (
        `${from} imports "${specifier}" (tool composition, octet-guest/composition), which only ` +
        `octet:extension@0.4.0 has: set api_version = "0.4" in extension.toml ` +
        `(a 0.1 or 0.2 manifest builds against 0.2.0).`
      );
    }
    if (specifier.startsWith("octet:")) {
      return (
        `${from} imports "${specifier}", which is not an interface of the octet WIT this build uses ` +
        `(the world imports ${world}). The SDK already wraps every octet interface: ` +
        `import its functions from octet-guest instead.`
      );
    }
    const pkg = /^wasi:([a-z-]+)\//.exec(specifier);
    const shipped = pkg && WASI_PACKAGES.includes(pkg[1]);
    const versioned = `${specifier.split("@")[0]}@${WASI_VERSION}`;
    const packages = WASI_PACKAGES.join(", ");
    let fix;
    if (!shipped) {
      fix = `Only interfaces of the WASI ${WASI_VERSION} packages (${packages}) can be added, with --import <interface>@${WASI_VERSION}.`;
    } else {
      fix =
        (versioned === specifier ? "" : `Import it as "${versioned}" (the host's WASI version), then add it `) +
        (versioned === specifier ? "Add it " : "") +
        `with --import ${versioned} (the WIT of ${packages} ships in guest-sdk/js/wit/deps), ` +
        "and grant what it needs under [capabilities] in extension.toml.";
    }
    return `${from} imports "${specifier}", which the world this build uses does not import (it imports ${world}). ${fix}`;
  }
  if (specifier.startsWith(".") || specifier.startsWith("/")) {
    return `${from} imports "${specifier}", which does not exist (relative imports resolve from the importing file).`;
  }
  return (
    `${from} imports the package "${specifier}", which is not installed under ${moduleRoot}: ` +
    `install it (npm install ${packageName(specifier)}) in a node_modules folder inside ${moduleRoot}, ` +
    `the directory the build exposes (it holds ${entry} and the SDK).`
  );
}
