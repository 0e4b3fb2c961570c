// octet-guest-build itself (needs the pinned componentize-qjs installed:
// scripts/build-guests-js or `npm ci` here): a missing WIT import fails
// with the sentence and the flag that adds it; the flag makes it build.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const sdk = fileURLToPath(new URL("../", import.meta.url));
const tool = join(sdk, "bin", "octet-guest-build.mjs");
// Inside the SDK: the build exposes the directory holding the entry and the SDK.
const dir = mkdtempSync(join(sdk, "test", ".build-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function build(source, ...flags) {
  return buildIn(dir, source, ...flags);
}

/** Builds `source` in its own directory, with `manifest` as the extension.toml beside it. */
function buildWith(manifest, source, ...flags) {
  const own = mkdtempSync(join(dir, "m-"));
  writeFileSync(join(own, "extension.toml"), manifest);
  return buildIn(own, source, ...flags);
}

function buildIn(where, source, ...flags) {
  const entry = join(where, `ext${Math.random().toString(36).slice(2)}.js`);
  writeFileSync(entry, source);
  const out = `${entry}.wasm`;
  const run = spawnSync(process.execPath, [tool, entry, "-o", out, ...flags], { encoding: "utf8" });
  return { ...run, out };
}

const sockets = `
import { Extension } from "../../index.js";
import tcp from "wasi:sockets/tcp@0.2.12";
const ext = new Extension("net");
ext.tool({ name: "kind", description: "k" }, () => typeof tcp);
export const guest = ext.exports();
`;

test("a WIT import the world lacks fails with the fix, without a stack trace", () => {
  const run = build(sockets);
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /imports "wasi:sockets\/tcp@0\.2\.12", which the world this build uses does not import/);
  assert.match(run.stderr, /Add it with --import wasi:sockets\/tcp@0\.2\.12/);
  assert.doesNotMatch(run.stderr, /triggerUncaughtException|at .*\.mjs:\d+/);
  assert.ok(!existsSync(run.out));
});

test("--import adds the interface and the build succeeds", () => {
  const run = build(sockets, "--import", "wasi:sockets/tcp@0.2.12");
  assert.equal(run.status, 0, run.stderr);
  assert.ok(existsSync(run.out));
});

test("the SDK's own filesystem import is always in the world", () => {
  const run = build(`
import { Extension, fs } from "../../index.js";
const ext = new Extension("files");
ext.tool({ name: "n", description: "n" }, () => String(fs.exists("x")));
export const guest = ext.exports();
`);
  assert.equal(run.status, 0, run.stderr);
});

test("a missing relative module and a bad flag are plain errors", () => {
  const missing = build(`import x from "./nope.js";\nexport const guest = x;\n`);
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /imports "\.\/nope\.js", which does not exist/);
  const flag = build(sockets, "--import", "wasi:sockets/tcp; import evil:x/y");
  assert.equal(flag.status, 2);
  assert.match(flag.stderr, /not a WIT interface name/);
});

const prompted = (depth) => `
import { Extension } from "${"../".repeat(depth)}index.js";
const ext = new Extension("p");
ext.tool({ name: "p", description: "P", promptSnippet: "p: prompted" }, () => "p");
export const guest = ext.exports();
`;

test("a 0.4 manifest builds against octet:extension@0.4.0 and carries prompt metadata", () => {
  const run = buildWith('name = "p"\napi_version = "0.4"\n', prompted(3));
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /\(octet:extension@0\.4\.0, \d+ bytes/);
});

test("prompt metadata in a 0.2 build fails with the fix; an unknown api_version is refused", () => {
  const run = buildWith('api_version = "0.2"\n', prompted(3));
  assert.equal(run.status, 1);
  assert.match(run.stderr, /tool p: prompt metadata needs API 0\.4: set api_version = "0\.4" in extension\.toml/);
  assert.ok(!existsSync(run.out));
  const unknown = buildWith('api_version = "0.3"\n', prompted(3));
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /api_version = "0\.3"; octet-guest-build builds API 0\.1, 0\.2 and 0\.4 extensions/);
});

test("a bound broken at registration fails the build naming the tool", () => {
  const run = buildWith(
    'api_version = "0.4"\n',
    prompted(3).replace('promptSnippet: "p: prompted"', 'promptGuidelines: Array(17).fill("g")'),
  );
  assert.equal(run.status, 1);
  assert.match(run.stderr, /tool p has 17 prompt guidelines; the limit is 16/);
});

test("composition in a 0.2 build fails naming the fix", () => {
  const run = buildWith(
    'api_version = "0.2"\n',
    `
import * as composition from "../../../composition.js";
import { Extension } from "../../../index.js";
const ext = new Extension("c");
ext.tool({ name: "c", description: "C" }, () => JSON.stringify(composition.context()));
export const guest = ext.exports();
`,
  );
  assert.equal(run.status, 1);
  assert.match(run.stderr, /imports "octet:extension\/composition" \(tool composition, octet-guest\/composition\), which only octet:extension@0\.4\.0 has: set api_version = "0\.4"/);
});
