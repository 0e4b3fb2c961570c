// Tool prompt metadata (API 0.4): the definitions carry it, `describe`
// declares tool_prompt_metadata_v1 for it, and every bound of the host is
// refused at registration with the tool and the bound named.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { Extension, toolsCatalog } from "../index.js";
import { callsOf, reset } from "./fakes/recorder.mjs";

const VERSION = Symbol.for("octet-guest.wit-version");

beforeEach(reset);
afterEach(() => {
  delete globalThis[VERSION];
});

test("prompt metadata reaches the definition and declares its feature", () => {
  const ext = new Extension("demo").usesProgress();
  ext.tool(
    {
      name: "grep",
      description: "Search",
      promptSnippet: "grep: search the workspace",
      promptGuidelines: ["Prefer grep\tover reading files", "One pattern\nper call"],
    },
    () => "",
  );
  ext.tool({ name: "plain", description: "P" }, () => "");
  const description = ext.exports().describe();
  assert.equal(description.tools[0].promptSnippet, "grep: search the workspace");
  assert.deepEqual(description.tools[0].promptGuidelines, ["Prefer grep\tover reading files", "One pattern\nper call"]);
  assert.equal(description.tools[1].promptSnippet, null);
  assert.deepEqual(description.tools[1].promptGuidelines, []);
  assert.deepEqual(description.features, ["request_progress", "tool_prompt_metadata_v1"]);
});

test("a dynamic tool's metadata declares the feature and goes with its registration", () => {
  const ext = new Extension("demo").usesDynamicTools().usesFeature("tool_prompt_metadata_v1");
  ext.dynamicTool({ name: "later", description: "L", promptGuidelines: "Only after plain" }, () => "");
  assert.deepEqual(ext.exports().describe().features, ["dynamic_tools", "tool_prompt_metadata_v1"]);
  toolsCatalog.registerDynamic(["later"]);
  assert.deepEqual(callsOf("toolsCatalog.register")[0][0][0].promptGuidelines, ["Only after plain"]);
  assert.deepEqual(new Extension("none").exports().describe().features, []);
});

test("every bound is refused at registration, naming the tool", () => {
  const ext = new Extension("demo");
  const tool = (extra) => () => ext.tool({ name: "t", description: "d", ...extra }, () => "");
  const atLimit = "é".repeat(512);
  ext.tool({ name: "ok", description: "d", promptSnippet: atLimit, promptGuidelines: Array(16).fill("g") }, () => "");
  assert.throws(tool({ promptSnippet: `${atLimit}x` }), {
    message: "tool t: promptSnippet has 1025 bytes; the limit is 1024",
  });
  assert.throws(tool({ promptGuidelines: Array(17).fill("g") }), {
    message: "tool t has 17 prompt guidelines; the limit is 16",
  });
  assert.throws(tool({ promptGuidelines: ["ok", "a\rb"] }), {
    message: "tool t: prompt guideline 2 contains the control character U+000D (only LF and TAB are allowed)",
  });
  assert.throws(tool({ promptSnippet: "\u0085" }), /U\+0085/);
  assert.throws(tool({ promptSnippet: "\u007f" }), /U\+007F/);
  assert.throws(tool({ promptSnippet: 7 }), /promptSnippet must be a string/);
  assert.throws(tool({ promptGuidelines: [null] }), /prompt guideline 1 must be a string/);
  assert.throws(() => toolsCatalog.register([{ name: "r", promptSnippet: "\u0000" }]), /tool r: promptSnippet contains/);
});

test("a build against octet:extension@0.2.0 refuses metadata with the fix", () => {
  globalThis[VERSION] = "0.2.0";
  const ext = new Extension("demo");
  ext.tool({ name: "plain", description: "P" }, () => "");
  assert.throws(() => ext.tool({ name: "t", description: "d", promptSnippet: "s" }, () => ""), {
    message: /^tool t: prompt metadata needs API 0\.4: set api_version = "0\.4" in extension\.toml/,
  });
  globalThis[VERSION] = "0.4.0";
  ext.tool({ name: "t", description: "d", promptSnippet: "s" }, () => "");
});
