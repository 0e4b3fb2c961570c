// Policy intents and approvals (API 0.2, features `policy_intents` and
// `approvals`; declare `usesPolicy()` / `usesApprovals()`).
//
//   const verdict = policy.evaluate({
//     kind: "external_side_effect", operation: "issues.create",
//     target: {label: "Open issue"}, dataClasses: ["user_text"],
//   });
//   if (verdict.decision !== "allow") throw new Failed("not allowed by policy");

import { hostCall } from "./errors.js";
import { optionalString } from "./values.js";
import { policy } from "./wit.js";

function optionalBool(value) {
  return value === undefined || value === null ? null : Boolean(value);
}

/**
 * What the extension is about to do: `kind` (e.g. `external_side_effect`),
 * `operation` (a stable dotted name), `target` (a JSON object for display
 * and audit), `dataClasses`, and the hints `readOnly` and `destructive`
 * (which can only raise caution).
 */
function intent({ kind, operation, target = {}, dataClasses = [], readOnly = null, destructive = null }) {
  if (target === null || typeof target !== "object" || Array.isArray(target)) {
    throw new TypeError("a policy intent's target must be a JSON object");
  }
  return {
    kind: String(kind),
    operation: String(operation),
    target: JSON.stringify(target),
    dataClasses: dataClasses.map(String),
    readOnly: optionalBool(readOnly),
    destructive: optionalBool(destructive),
  };
}

/**
 * Asks the host to classify `intent` for the tool call or command being
 * served; `approvalToken` redeems an approval. Returns `{decision,
 * approvalToken}` with `decision` one of `allow`, `ask`, `deny` (`ask`
 * without a token means: not authorized).
 */
export function evaluate(value, approvalToken = null) {
  const verdict = hostCall(policy.evaluate, intent(value), optionalString(approvalToken));
  return { decision: verdict.decision, approvalToken: verdict.approvalToken ?? null };
}
