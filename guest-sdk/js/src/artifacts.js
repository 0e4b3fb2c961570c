// Artifacts (API 0.2, feature `artifacts`; declare `usesArtifacts()`):
// publish bytes, then reference the returned id from image and audio parts
// of a tool result.
//
//   const id = artifacts.publish("image/png", pngBytes);
//   return ToolResult.text("Rendered").withImage(id, "image/png", "chart");
//
// The shim checks the MIME type and the bytes' signature, 20 MiB per
// artifact and 64 artifacts / 64 MiB per process generation before anything
// reaches the host; a refusal throws the error naming the bound.

import { hostCall } from "./errors.js";
import { artifacts } from "./wit.js";

/** The MIME types the host accepts (the bytes must start with the type's signature). */
export const MIME_TYPES = Object.freeze([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "audio/wav",
  "audio/mpeg",
  "audio/flac",
  "audio/opus",
  "audio/aac",
  "audio/mp4",
]);

/**
 * Publishes `data` (a Uint8Array or an array of bytes) as an artifact of
 * `mimeType` for the tool call or command being served and returns its id,
 * valid in any tool result of the same session in this process generation.
 */
export function publish(mimeType, data) {
  if (typeof data === "string") {
    throw new TypeError("artifacts.publish takes bytes (a Uint8Array), not a string");
  }
  const bytes = data instanceof Uint8Array ? data : Uint8Array.from(data);
  return hostCall(artifacts.publish, String(mimeType), bytes);
}
