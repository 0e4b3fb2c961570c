import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { FsError, fs } from "../index.js";
import { open, setDirectories } from "./fakes/preopens.mjs";

const root = mkdtempSync(join(tmpdir(), "octet-guest-fs-"));
const workspace = join(root, "workspace");
const scratch = join(root, "scratch");
mkdirSync(workspace);
mkdirSync(scratch);
setDirectories([
  [workspace, workspace],
  [workspace, "."],
  [scratch, scratch],
]);

function fsCode(code) {
  return (error) => error instanceof FsError && error.code === code;
}

test("text and bytes round-trip, relative and absolute", () => {
  fs.write("notes.txt", "héllo 😀\n");
  assert.equal(readFileSync(join(workspace, "notes.txt"), "utf8"), "héllo 😀\n");
  assert.equal(fs.readToString(join(workspace, "notes.txt")), "héllo 😀\n");
  const big = Uint8Array.from({ length: 200_000 }, (_, i) => i % 251);
  fs.write(join(scratch, "blob.bin"), big);
  assert.deepEqual(fs.read(join(scratch, "blob.bin")), big);
  fs.write("notes.txt", "short");
  assert.equal(fs.readToString("notes.txt"), "short", "write truncates");
  assert.equal(open.size, 0, "every descriptor is closed");
});

test("invalid UTF-8 fails readToString but not read", () => {
  writeFileSync(join(workspace, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  assert.throws(() => fs.readToString("latin1.txt"), (e) => fsCode("invalid")(e) && /not UTF-8 text/.test(e.message));
  assert.equal(fs.read("latin1.txt").length, 4);
});

test("directories: create, list sorted with types, metadata, remove", () => {
  fs.createDirAll("a/b/c");
  fs.createDirAll("a/b");
  fs.write("a/z.txt", "z");
  fs.write("a/b/y.txt", "yy");
  symlinkSync("z.txt", join(workspace, "a", "link"));
  assert.deepEqual(fs.readDir("a"), [
    { name: "b", type: "dir" },
    { name: "link", type: "symlink" },
    { name: "z.txt", type: "file" },
  ]);
  const meta = fs.metadata("a/b/y.txt");
  assert.equal(meta.isFile, true);
  assert.equal(meta.len, 2);
  assert.ok(meta.modified > Date.now() - 600_000);
  assert.equal(fs.metadata("a").isDir, true);
  assert.equal(fs.metadata(".").isDir, true);
  assert.ok(fs.readDir(".").some((e) => e.name === "notes.txt"));
  assert.ok(fs.exists("a/b/c"));
  assert.ok(!fs.exists("a/missing"));
  fs.createDir("a/new");
  assert.throws(() => fs.createDir("a/new"), fsCode("exist"));
  assert.throws(() => fs.removeDir("a"), fsCode("not-empty"));
  fs.removeFile("a/z.txt");
  assert.throws(() => fs.removeFile("a/b"), fsCode("is-directory"));
  fs.write("a/b/c/deep.txt", "d");
  fs.removeDirAll("a");
  assert.ok(!fs.exists("a"));
  assert.equal(open.size, 0, "every descriptor and stream is closed");
});

test("failures are plain sentences with the WASI code", () => {
  assert.throws(() => fs.readToString("missing.txt"), (e) => fsCode("no-entry")(e) && e.message === "missing.txt: no such file or directory");
  assert.throws(() => fs.readToString("/etc/passwd"), (e) => fsCode("not-permitted")(e) && /outside the directories this extension may use/.test(e.message));
  assert.throws(() => fs.write("../escape.txt", "x"), (e) => /leads outside the workspace/.test(e.message));
  assert.throws(() => fs.removeDirAll(workspace), /granted directory itself/);
  assert.throws(() => fs.createDirAll("notes.txt/x"), fsCode("not-directory"));
});
