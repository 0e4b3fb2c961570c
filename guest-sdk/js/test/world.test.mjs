import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { test } from "node:test";
import {
  DEFAULT_IMPORTS,
  WASI_VERSION,
  explainFailure,
  manifestApiVersion,
  octetPackage,
  selectWit,
  validInterface,
  worldSource,
} from "../bin/world.mjs";

const sdk = new URL("../", import.meta.url);
const repo = new URL("../../../", import.meta.url);

test("the world includes octet:extension and the SDK's filesystem imports", () => {
  const octet = readFileSync(new URL("wit/world.wit", repo), "utf8");
  assert.equal(octetPackage(octet), "octet:extension@0.2.0");
  const world = worldSource(octet, ["wasi:sockets/tcp@0.2.12", DEFAULT_IMPORTS[0]]);
  assert.match(world, /^package octet:guest-build;$/m);
  assert.match(world, /^ {4}include octet:extension\/extension@0\.2\.0;$/m);
  const imports = world.split("\n").filter((line) => line.trim().startsWith("import "));
  assert.deepEqual(imports.map((line) => line.trim()), [
    "import wasi:filesystem/types@0.2.12;",
    "import wasi:filesystem/preopens@0.2.12;",
    "import wasi:sockets/tcp@0.2.12;",
  ]);
  assert.throws(() => octetPackage("package other:thing@1.0.0;"), /does not declare package octet:extension/);
});

test("--import takes interface names only", () => {
  assert.ok(validInterface("wasi:sockets/tcp@0.2.12"));
  assert.ok(validInterface("wasi:random/random"));
  for (const bad of ["wasi:sockets", "tcp", "wasi:sockets/tcp; import evil:x/y", "WASI:x/y", "wasi:x/y@"]) {
    assert.ok(!validInterface(bad), bad);
  }
});

const context = { entry: "/p/ext.js", moduleRoot: "/p", imports: [] };

test("a WASI import the world lacks names the flag that adds it", () => {
  const error = new Error(
    ': Failed to evaluate user JavaScript module: Error resolving module \'wasi:sockets/tcp@0.2.12\' from \'/p/ext.js\': filesystem module not found: failed to resolve JavaScript import "wasi:sockets/tcp@0.2.12" from /p/ext.js',
  );
  const text = explainFailure(error, context);
  assert.match(text, /^\/p\/ext\.js imports "wasi:sockets\/tcp@0\.2\.12", which the world this build uses does not import/);
  assert.match(text, /Add it with --import wasi:sockets\/tcp@0\.2\.12/);
  assert.match(text, /under \[capabilities\] in extension\.toml/);
  const old = explainFailure(new Error('failed to resolve JavaScript import "wasi:filesystem/types@0.2.0" from /p/ext.js'), context);
  assert.match(old, /Import it as "wasi:filesystem\/types@0\.2\.12"/);
  const other = explainFailure(new Error('failed to resolve JavaScript import "wasi:http/types@0.2.12" from /p/ext.js'), context);
  assert.match(other, /Only interfaces of the WASI 0\.2\.12 packages/);
  const octet = explainFailure(new Error('failed to resolve JavaScript import "octet:extension/nope@0.2.0" from /p/ext.js'), context);
  assert.match(octet, /import its functions from octet-guest instead/);
});

test("missing modules and packages say where they were looked for", () => {
  const relative = explainFailure(new Error('failed to resolve JavaScript import "./util.js" from /p/ext.js'), context);
  assert.match(relative, /"\.\/util\.js", which does not exist/);
  const bare = explainFailure(new Error('failed to resolve JavaScript import "@scope/lib/x" from /p/ext.js'), context);
  assert.match(bare, /npm install @scope\/lib\) in a node_modules folder inside \/p/);
  assert.equal(explainFailure(new Error(": SyntaxError: unexpected token"), context), "SyntaxError: unexpected token");
});

test("the shipped WASI WIT is the pinned copy, at the host's wasmtime-wasi version", () => {
  const pins = readFileSync(new URL("wit/deps.sha256", sdk), "utf8")
    .trim()
    .split("\n")
    .map((line) => line.split(/\s+/));
  const files = readdirSync(new URL("wit/deps/", sdk)).filter((f) => f.endsWith(".wit")).sort();
  assert.deepEqual(pins.map(([, file]) => file).sort(), files);
  for (const [hash, file] of pins) {
    const text = readFileSync(new URL(`wit/deps/${file}`, sdk));
    assert.equal(createHash("sha256").update(text).digest("hex"), hash, `${file} changed`);
    assert.match(text.toString(), new RegExp(`^package wasi:[a-z]+@${WASI_VERSION.replaceAll(".", "\\.")};`, "m"));
  }
  const cargo = readFileSync(new URL("host/Cargo.toml", repo), "utf8");
  assert.match(cargo, /^wasmtime-wasi = \{ version = "=48\.0\.8"/m, "guest-sdk/js/wit/README.md says how to move with the host");
  const wasi = readFileSync(new URL("src/wasi.js", sdk), "utf8");
  assert.ok(wasi.includes(`wasi:filesystem/preopens@${WASI_VERSION}`));
});

test("the manifest's top-level api_version is read, nothing under a table", () => {
  assert.equal(manifestApiVersion('name = "x"\napi_version = "0.4"\n[entrypoint]\n'), "0.4");
  assert.equal(manifestApiVersion("  api_version = '0.2'  # legacy\r\n"), "0.2");
  assert.equal(manifestApiVersion('name = "x"\n[meta]\napi_version = "0.4"\n'), null);
  assert.equal(manifestApiVersion("# api_version = \"0.4\"\n"), null);
});

test("the WIT follows the manifest: wit/0.4.0 for 0.4, wit/ for 0.1, 0.2 or no manifest", () => {
  const root = new URL("wit", repo).pathname;
  const fs = { exists: (p) => isFile(p), read: (p) => readFileSync(p, "utf8") };
  assert.deepEqual(selectWit(root, "0.4", fs), { dir: `${root}/0.4.0` });
  assert.deepEqual(selectWit(root, "0.2", fs), { dir: root });
  assert.deepEqual(selectWit(root, "0.1", fs), { dir: root });
  assert.deepEqual(selectWit(root, null, fs), { dir: root });
  // A package named directly serves its own version and older manifests.
  assert.deepEqual(selectWit(`${root}/0.4.0`, "0.2", fs), { dir: `${root}/0.4.0` });
  assert.match(selectWit(root, "0.3", fs).error, /builds API 0\.1, 0\.2 and 0\.4 extensions/);
  const only02 = { exists: (p) => !p.includes("0.4.0") && isFile(p), read: fs.read };
  assert.match(selectWit(root, "0.4", only02).error, /holds octet:extension@0\.2\.0 and no 0\.4\.0\/ beside it/);
  assert.match(selectWit("/nowhere", "0.4", fs).error, /no WIT package at \/nowhere/);
});

function isFile(path) {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}
