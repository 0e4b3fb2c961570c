// The typed results of the API 0.4 hooks (docs/api-0.4.md#v04-hook-results),
// as members of `hookResult({...})`:
//
//   cache_warming_decision   cacheWarming: "warm" | "stop" (null: no opinion)
//   compaction_strategy      compactionFrames: [PNG bytes, ...] (the shim
//                            sends them as base64)
//   before_provider_request  providerPayload: the payload to send instead
//                            (a JSON object or array)
//   before_provider_headers  providerHeaders: {name: value | [values] | null}
//                            (null removes the header)
//
// The shim sends each only for its own hook and checks every bound (32
// frames of 512 KiB, 768 KiB of payload, 256 headers and 64 KiB, header
// names and values) before anything reaches octet; the SDK checks the
// shapes. A build against octet:extension@0.2.0 cannot carry them, so
// setting one there throws.

import { witVersion } from "./build_info.js";

const ACTIONS = new Set(["warm", "stop"]);

function needs04(what) {
  if (witVersion() === "0.2.0") {
    throw new TypeError(
      `${what} is an API 0.4 hook result: set api_version = "0.4" in extension.toml and rebuild ` +
        "(this build uses octet:extension@0.2.0, which cannot carry it)",
    );
  }
}

function frame(value, index) {
  if (value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return Uint8Array.from(value);
  throw new TypeError(`compaction frame ${index + 1} must be PNG bytes (a Uint8Array), not ${typeof value}`);
}

function headers(value) {
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError(`providerHeaders must be an object {name: value | [values] | null}, not ${JSON.stringify(value)}`);
  }
  return Object.entries(value).map(([name, v]) => {
    if (v === null || v === undefined) return { name, values: null };
    const values = Array.isArray(v) ? v : [v];
    for (const item of values) {
      if (typeof item !== "string") {
        throw new TypeError(`header ${name}: values must be strings, not ${JSON.stringify(item)}`);
      }
    }
    return { name, values };
  });
}

/** The WIT members of the 0.4 hook results, checked; the defaults give no opinion. */
export function hookResult04({ cacheWarming = null, compactionFrames = [], providerPayload = null, providerHeaders = null }) {
  if (cacheWarming !== null && cacheWarming !== undefined) {
    needs04("cacheWarming");
    if (!ACTIONS.has(cacheWarming)) {
      throw new TypeError(`cacheWarming must be "warm" or "stop", not ${JSON.stringify(cacheWarming)}`);
    }
  }
  const frames = compactionFrames === null || compactionFrames === undefined ? [] : compactionFrames;
  if (!Array.isArray(frames)) throw new TypeError("compactionFrames must be a list of PNG images");
  if (frames.length > 0) needs04("compactionFrames");
  let payload = null;
  if (providerPayload !== null && providerPayload !== undefined) {
    needs04("providerPayload");
    if (typeof providerPayload !== "object") {
      throw new TypeError(`providerPayload must be a JSON object or array, not ${JSON.stringify(providerPayload)}`);
    }
    payload = JSON.stringify(providerPayload);
  }
  const edits = providerHeaders === null || providerHeaders === undefined ? [] : headers(providerHeaders);
  if (edits.length > 0) needs04("providerHeaders");
  return {
    cacheWarming: cacheWarming ?? null,
    compactionFrames: frames.map(frame),
    providerPayload: payload,
    providerHeaders: edits,
  };
}
