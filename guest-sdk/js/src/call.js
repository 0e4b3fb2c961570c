// Where a request comes from (the call context) and what the instance
// learnt at init (API version, negotiated features, the guest's workspace).

import { parseOrNull } from "./values.js";

/**
 * The context of the host request a handler is serving, as the Rust SDK's
 * `Call`: `requestId`, `workspace` (the host's path), `executionScope`,
 * `resourceOwner` (`{sessionId, extensionInstanceId, processGeneration}` on
 * API 0.2, else null) and `host` (the host's session state, parsed: model,
 * skills, session; null when unreadable). Key per-session state by the
 * whole resource owner: either fence changing means the state is stale.
 */
export function callContext(cx) {
  return {
    requestId: cx.requestId,
    workspace: cx.workspace,
    executionScope: cx.executionScope ?? null,
    resourceOwner: cx.resourceOwner ?? null,
    host: parseOrNull(cx.host),
  };
}

/** A context for code outside any request (lifecycle, shutdown, tests). */
export function detachedCall() {
  return { requestId: 0, workspace: "", executionScope: null, resourceOwner: null, host: null };
}

let initState = null;

export function storeInit(params) {
  initState = {
    apiVersion: params.apiVersion,
    features: [...params.features],
    workspace: params.workspace,
    initialize: parseOrNull(params.initialize),
  };
}

/** `0.1` or `0.2` after init; `""` before (inside registration code). */
export function apiVersion() {
  return initState ? initState.apiVersion : "";
}

/** The negotiated protocol features (empty on API 0.1 and before init). */
export function features() {
  return initState ? [...initState.features] : [];
}

/** Whether `name` was negotiated. */
export function hasFeature(name) {
  return initState ? initState.features.includes(name) : false;
}

/** The workspace as the guest sees it (its host path when granted). */
export function guestWorkspace() {
  return initState ? initState.workspace : "";
}

/** The host's whole `initialize` params, parsed (null before init). */
export function initializeParams() {
  return initState ? initState.initialize : null;
}
