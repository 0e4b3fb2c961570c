#!/usr/bin/env node
// octet-guest-build: builds an octet extension written in JavaScript into a
// WebAssembly component for octet-wasm.
//
//   octet-guest-build <extension.js> [-o <out.wasm>] [--wit <dir>]
//                     [--import <interface>]... [--async]
//
// The entry module exports `guest` (normally `export const guest =
// ext.exports()`). Relative imports and bare imports of installed packages
// (`octet-guest`) are resolved at build time and snapshotted with the QuickJS
// engine; the component needs nothing at run time.
//
// The world is octet:extension (from `--wit`, default this repository's
// `wit/` found from this script's real location, or $OCTET_WIT) plus
// wasi:filesystem (types, preopens) for the SDK's `fs`, from the WASI WIT
// pinned in guest-sdk/js/wit/deps; `--import` adds any other interface of
// those WASI packages (e.g. `wasi:sockets/tcp@0.2.12`).
import { componentize } from "componentize-qjs";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, parse, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { explainFailure, validInterface, worldSource } from "./world.mjs";

function usage(message) {
  if (message) console.error(`octet-guest-build: ${message}`);
  console.error(
    "usage: octet-guest-build <extension.js> [-o <out.wasm>] [--wit <dir>] [--import <interface>]... [--async]",
  );
  process.exit(2);
}

const args = process.argv.slice(2);
let entry = null;
let output = null;
let wit = process.env.OCTET_WIT || null;
let sync = true;
const imports = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === "-o" || arg === "--output") output = args[++i] ?? usage("-o needs a path");
  else if (arg === "--wit") wit = args[++i] ?? usage("--wit needs a path");
  else if (arg === "--import") imports.push(args[++i] ?? usage("--import needs an interface"));
  else if (arg === "--async") sync = false;
  else if (arg === "-h" || arg === "--help") usage();
  else if (arg.startsWith("-")) usage(`unknown option ${arg}`);
  else if (entry === null) entry = arg;
  else usage(`unexpected argument ${arg}`);
}
if (entry === null) usage("no entry file");
for (const name of imports) {
  if (!validInterface(name)) {
    usage(`--import ${name}: not a WIT interface name like wasi:sockets/tcp@0.2.12`);
  }
}
if (!existsSync(entry)) usage(`no such file ${entry}`);

entry = realpathSync(resolve(entry));
output = resolve(output ?? join(dirname(entry), `${parse(entry).name}.wasm`));

const sdkDir = realpathSync(join(dirname(fileURLToPath(import.meta.url)), ".."));
if (wit === null) wit = resolve(sdkDir, "..", "..", "wit");
if (!existsSync(join(wit, "world.wit"))) {
  usage(`no WIT package at ${wit} (pass --wit <octet-wasm>/wit or set OCTET_WIT)`);
}

// The module root is exposed read-only while the snapshot is taken: it must
// hold the entry, everything it imports and its node_modules. Use the
// closest directory that contains both the entry and the SDK (imports of the
// SDK by relative path or through a node_modules link).
function commonAncestor(a, b) {
  const x = a.split(sep);
  const y = b.split(sep);
  let n = 0;
  while (n < x.length && n < y.length && x[n] === y[n]) n++;
  return x.slice(0, n).join(sep) || sep;
}
const moduleRoot = commonAncestor(dirname(entry), sdkDir);

// The world, assembled in a temporary directory: a root package whose world
// includes octet:extension, with the octet package and the pinned WASI
// packages as its deps.
const octetWorld = readFileSync(join(wit, "world.wit"), "utf8");
const witDir = mkdtempSync(join(tmpdir(), "octet-guest-build-"));
let component;
const started = Date.now();
try {
  const deps = join(witDir, "deps");
  mkdirSync(join(deps, "octet-extension"), { recursive: true });
  for (const file of readdirSync(join(sdkDir, "wit", "deps"))) {
    if (file.endsWith(".wit")) cpSync(join(sdkDir, "wit", "deps", file), join(deps, file));
  }
  for (const file of readdirSync(wit)) {
    if (file.endsWith(".wit")) cpSync(join(wit, file), join(deps, "octet-extension", file));
  }
  writeFileSync(join(witDir, "world.wit"), worldSource(octetWorld, imports));
  ({ component } = await componentize({
    witPath: witDir,
    world: "extension",
    jsSource: readFileSync(entry, "utf8"),
    jsPath: entry,
    moduleRoot,
    sync,
  }));
} catch (error) {
  console.error(`octet-guest-build: ${explainFailure(error, { entry, moduleRoot, imports })}`);
  process.exit(1);
} finally {
  rmSync(witDir, { recursive: true, force: true });
}
mkdirSync(dirname(output), { recursive: true });
// Through a temporary file so a reader never sees half a component.
writeFileSync(`${output}.tmp`, component);
renameSync(`${output}.tmp`, output);
const near = relative(process.cwd(), output);
const shown = near && !near.startsWith("..") ? near : output;
console.log(
  `octet-guest-build: ${shown} (${component.length} bytes, ${Date.now() - started} ms${sync ? "" : ", async ABI"})`,
);
