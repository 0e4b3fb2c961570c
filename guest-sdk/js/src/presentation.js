// Presentation snapshots (API 0.2, manifest `[contributes] presentation =
// true`; no feature string). A snapshot is a complete replacement of what
// the frontend shows for the extension: `revision` (strictly increasing),
// `status`, `activities`, `collection` and `actions`. The shim validates the
// whole schema and its bounds (256 KiB, 128 activities, 256 nodes, 64
// actions) before anything is written.

import { hostCall } from "./errors.js";
import { presentation } from "./wit.js";

/**
 * Publishes `snapshot` (an object). Inside a request the host derives its
 * owner from the request; outside one the snapshot is process-scoped.
 */
export function update(snapshot) {
  hostCall(presentation.update, JSON.stringify(snapshot), null);
}

/**
 * Publishes `snapshot` for `owner`, a resource owner the host gave this
 * process in a call context (`ctx.resourceOwner`, kept by a background
 * publisher).
 */
export function updateFor(owner, snapshot) {
  const { sessionId, extensionInstanceId, processGeneration } = owner;
  hostCall(presentation.update, JSON.stringify(snapshot), {
    sessionId: String(sessionId),
    extensionInstanceId: String(extensionInstanceId),
    processGeneration: Number(processGeneration),
  });
}
