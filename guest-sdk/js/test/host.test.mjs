import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";
import {
  Cancelled,
  InvalidParams,
  RpcError,
  cancellationReason,
  checkCancelled,
  confirm,
  contributeContext,
  contributeStatus,
  isCancelled,
  log,
  notify,
  notifyTitled,
  progress,
  progressDecoration,
  progressOutput,
  requestInput,
  sendNotification,
  sleep,
} from "../index.js";
import { answers, callsOf, reset, witFailure } from "./fakes/recorder.mjs";

beforeEach(reset);

test("notify takes the level first, as in the Rust SDK", () => {
  notify("success", "done");
  notifyTitled("warning", "Disk", "almost full");
  sendNotification({ level: "error", message: "broken" });
  assert.deepEqual(callsOf("host.notify"), [
    [{ level: "success", title: null, message: "done" }],
    [{ level: "warning", title: "Disk", message: "almost full" }],
    [{ level: "error", title: null, message: "broken" }],
  ]);
  assert.throws(() => notify("done", "success"), /level must be info, success, warning or error/);
});

test("a refused host call throws the SDK error the shim returned", () => {
  answers["host.notify"] = () => {
    throw witFailure({ tag: "rpc", val: { code: -32601, message: "notifications are not declared", data: null } });
  };
  assert.throws(() => notify("info", "x"), (error) => error instanceof RpcError && error.code === -32601);
  answers["host.confirm"] = () => {
    throw witFailure({ tag: "cancelled" });
  };
  assert.throws(() => confirm("sure?"), Cancelled);
  answers["host.progress"] = () => {
    throw witFailure({ tag: "invalid-params", val: "progress needs request_progress" });
  };
  assert.throws(() => progress("x"), (e) => e instanceof InvalidParams && /request_progress/.test(e.message));
});

test("confirm takes a prompt with options or one request object", () => {
  answers["host.confirm"] = true;
  assert.equal(confirm("Delete?", { detail: "3 files", destructive: true }), true);
  assert.equal(confirm({ prompt: "Go?", default: true }), true);
  assert.deepEqual(callsOf("host.confirm"), [
    [{ prompt: "Delete?", detail: "3 files", destructive: true, default: false }],
    [{ prompt: "Go?", detail: null, destructive: false, default: true }],
  ]);
});

test("requestInput takes the prompt and the secret flag", () => {
  answers["host.requestInput"] = "hunter2";
  assert.equal(requestInput("Token?", true), "hunter2");
  answers["host.requestInput"] = null;
  assert.equal(requestInput("Name?"), null);
  assert.deepEqual(callsOf("host.requestInput"), [["Token?", true], ["Name?", false]]);
});

test("progress carries counts and units; output and decoration their own events", () => {
  progress("indexing");
  progress("indexing", { current: 3, total: 10, unit: "files" });
  progressOutput("stderr", "é");
  progressOutput("stdout", [1, 2]);
  progressDecoration("Building", null);
  assert.deepEqual(callsOf("host.progress"), [
    [{ tag: "status", val: { message: "indexing", current: null, total: null, unit: null } }],
    [{ tag: "status", val: { message: "indexing", current: 3, total: 10, unit: "files" } }],
    [{ tag: "output", val: { stream: "stderr", data: Uint8Array.of(0xc3, 0xa9) } }],
    [{ tag: "output", val: { stream: "stdout", data: Uint8Array.of(1, 2) } }],
    [{ tag: "decoration", val: { label: "Building", detail: null } }],
  ]);
  assert.throws(() => progressOutput("é", "stdout"), /stream must be "stdout" or "stderr"/);
  assert.throws(() => progress("x", { current: -1 }), /non-negative integer/);
});

test("log writes JSON fields and refuses unknown levels", () => {
  log("info", "loaded", { n: 2 });
  log("warn", "old spelling");
  assert.deepEqual(callsOf("host.log"), [
    ["info", "loaded", '{"n":2}'],
    ["warning", "old spelling", null],
  ]);
  assert.throws(() => log("verbose", "x"), /log level/);
});

test("contributions default their placement and surface", () => {
  contributeContext({ label: "l", content: "c" });
  contributeContext({ label: "l", content: "c", placement: "system_prefix" });
  contributeStatus({ text: "awake", priority: 5 });
  assert.deepEqual(callsOf("host.contributeContext"), [
    [{ label: "l", content: "c", placement: "prompt-suffix" }],
    [{ label: "l", content: "c", placement: "system-prefix" }],
  ]);
  assert.deepEqual(callsOf("host.contributeStatus"), [
    [{ surface: "status", text: "awake", styleRole: null, priority: 5 }],
  ]);
});

test("cancellation: sleep in milliseconds rounded up, checks and reasons", () => {
  answers["cancellation.sleep"] = (ms) => ms > 100;
  assert.equal(sleep(2.2), false);
  assert.equal(sleep(250), true);
  assert.deepEqual(callsOf("cancellation.sleep"), [[3], [250]]);
  assert.throws(() => sleep(-1), /milliseconds/);
  assert.equal(isCancelled(), false);
  assert.equal(cancellationReason(), null);
  checkCancelled();
  answers["cancellation.isCancelled"] = true;
  answers["cancellation.reason"] = "timeout";
  assert.equal(cancellationReason(), "timeout");
  assert.throws(() => checkCancelled(), Cancelled);
});
