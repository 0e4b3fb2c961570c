import assert from "node:assert/strict";
import { test } from "node:test";
import { locate, segments } from "../src/paths.js";

const ws = { name: "/home/ada/project", dir: "WS" };
const dot = { name: ".", dir: "WS" };
const scratch = { name: "/tmp/scratch", dir: "SCRATCH" };
const workspace = [ws, dot, scratch];

test("segments resolve . and .. lexically", () => {
  assert.deepEqual(segments("a/./b//c/../d"), ["a", "b", "d"]);
  assert.deepEqual(segments("./"), []);
  assert.equal(segments("a/../.."), null);
});

test("relative paths land in the workspace", () => {
  assert.deepEqual(locate("README.md", workspace), { dir: "WS", rel: "README.md" });
  assert.deepEqual(locate("./src/../docs/a.md", workspace), { dir: "WS", rel: "docs/a.md" });
  assert.deepEqual(locate(".", workspace), { dir: "WS", rel: "." });
});

test("absolute paths pick the longest granted prefix, by whole components", () => {
  assert.deepEqual(locate("/home/ada/project/src/x.js", workspace), { dir: "WS", rel: "src/x.js" });
  assert.deepEqual(locate("/home/ada/project", workspace), { dir: "WS", rel: "." });
  assert.deepEqual(locate("/tmp/scratch/out.png", workspace), { dir: "SCRATCH", rel: "out.png" });
  const nested = [{ name: "/", dir: "ROOT" }, { name: "/tmp/scratch", dir: "SCRATCH" }];
  assert.deepEqual(locate("/tmp/scratch/a", nested), { dir: "SCRATCH", rel: "a" });
  assert.deepEqual(locate("/etc/hosts", nested), { dir: "ROOT", rel: "etc/hosts" });
  assert.match(locate("/home/ada/project2/x", workspace).problem, /outside the directories/);
});

test("escapes and ungranted paths are refused with the reason", () => {
  assert.match(locate("../secret", workspace).problem, /leads outside the workspace/);
  assert.match(locate("/etc/passwd", workspace).problem, /directories granted are \/home\/ada\/project, \/tmp\/scratch/);
  assert.match(locate("a.txt", []).problem, /filesystem = "workspace"/);
  assert.match(locate("/x", []).problem, /no directory is granted/);
  assert.match(locate("a.txt", [scratch]).problem, /relative but no working directory/);
  assert.match(locate("", workspace).problem, /non-empty string/);
  assert.match(locate("a\0b", workspace).problem, /NUL/);
  assert.match(locate(42, workspace).problem, /non-empty string/);
});
