#!/usr/bin/env node
// octet-guest-build: builds an octet extension written in JavaScript into a
// WebAssembly component for octet-wasm.
//
//   octet-guest-build <extension.js> [-o <out.wasm>] [--manifest <extension.toml>]
//                     [--wit <dir>] [--import <interface>]... [--async]
//
// The entry module exports `guest` (normally `export const guest =
// ext.exports()`). Relative imports and bare imports of installed packages
// (`octet-guest`) are resolved at build time and snapshotted with the QuickJS
// engine; the component needs nothing at run time.
//
// The world is octet:extension (from `--wit`, or $OCTET_WIT, default the
// package's own octet-wit/ when installed from a tarball, else this
// repository's `wit/` found from this script's real location), in the
// version the manifest's api_version asks for (extension.toml beside the
// entry, or `--manifest`): octet:extension@0.4.0 (`wit/0.4.0`) for "0.4",
// @0.2.0 for "0.1", "0.2" or no manifest; plus
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
import { buildPrologue } from "../src/build_info.js";
import { explainFailure, manifestApiVersion, octetPackage, selectWit, validInterface, worldSource } from "./world.mjs";

function usage(message) {
  if (message) console.error(`octet-guest-build: ${message}`);
  console.error(
    "usage: octet-guest-build <extension.js> [-o <out.wasm>] [--manifest <extension.toml>] [--wit <dir>] [--import <interface>]... [--async]",
  );
  process.exit(2);
}

const args = process.argv.slice(2);
let entry = null;
let output = null;
let wit = process.env.OCTET_WIT || null;
let manifest = null;
let sync = true;
const imports = [];
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === "-o" || arg === "--output") output = args[++i] ?? usage("-o needs a path");
  else if (arg === "--wit") wit = args[++i] ?? usage("--wit needs a path");
  else if (arg === "--manifest") manifest = args[++i] ?? usage("--manifest needs a path");
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
// An installed package carries the WIT as octet-wit/ (packed by
// tools/pack-wit.mjs); a checkout's SDK uses the repository's wit/.
if (wit === null) {
  const packed = join(sdkDir, "octet-wit");
  wit = existsSync(join(packed, "world.wit")) ? packed : resolve(sdkDir, "..", "..", "wit");
}
if (manifest !== null && !existsSync(manifest)) usage(`no such manifest ${manifest}`);
manifest = manifest ?? join(dirname(entry), "extension.toml");
let api = null;
if (existsSync(manifest)) {
  api = manifestApiVersion(readFileSync(manifest, "utf8"));
  if (api === null) usage(`${manifest} has no top-level api_version`);
}
const chosen = selectWit(resolve(wit), api, { exists: existsSync, read: (path) => readFileSync(path, "utf8") });
if (chosen.error) usage(chosen.error);
wit = chosen.dir;

/** `source` with `prologue` at the start of its first line (after a `#!` line). */
function withPrologue(source, prologue) {
  if (!source.startsWith("#!")) return prologue + source;
  const end = source.indexOf("\n") + 1 || source.length;
  return source.slice(0, end) + prologue + source.slice(end);
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
const witPackage = octetPackage(octetWorld);
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
    // On the entry's first line, so line numbers stay the entry's own: the
    // SDK then knows the WIT version (src/build_info.js).
    jsSource: withPrologue(readFileSync(entry, "utf8"), buildPrologue(witPackage.split("@")[1])),
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
  `octet-guest-build: ${shown} (${witPackage}, ${component.length} bytes, ${Date.now() - started} ms${sync ? "" : ", async ABI"})`,
);
