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
