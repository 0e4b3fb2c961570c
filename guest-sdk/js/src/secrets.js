// Brokered secrets (API 0.2, feature `secrets`; declare `usesSecrets()` and
// the names under `[capabilities] secrets`). Never log a value or put it in
// results, progress, metadata or presentation.

import { hostCall } from "./errors.js";
import { secrets } from "./wit.js";

/**
 * The value of the declared secret `name`, for the tool call or command
 * being served. An undeclared name is refused without asking the host; a
 * secret the broker does not have is the host's error -32004.
 */
export function get(name) {
  return hostCall(secrets.get, String(name));
}
