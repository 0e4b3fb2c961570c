import assert from "node:assert/strict";
import { test } from "node:test";
import { FsError, fs } from "../index.js";
import { setDirectories } from "./fakes/preopens.mjs";

setDirectories([]);

test("without a granted directory every path says how to grant one", () => {
  for (const path of ["README.md", "/tmp/x"]) {
    assert.throws(
      () => fs.readToString(path),
      (e) => e instanceof FsError && /set filesystem = "workspace" under \[capabilities\] in extension.toml/.test(e.message),
    );
  }
});
