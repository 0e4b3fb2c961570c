// Lifecycle observations, by the protocol's names (`turn/started`...).

/** The lifecycle kinds, by their protocol names. */
export const LIFECYCLE_KINDS = Object.freeze([
  "session/started",
  "session/settled",
  "turn/started",
  "turn/settled",
  "tool/started",
  "tool/settled",
]);

/** `turn/started`, `turn_started` or `turn-started` → the WIT `turn-started`. */
export function lifecycleKind(kind) {
  const wit = String(kind).replaceAll("/", "-").replaceAll("_", "-");
  if (!LIFECYCLE_KINDS.includes(wit.replace("-", "/"))) {
    throw new Error(`octet-guest: unknown lifecycle kind ${JSON.stringify(kind)}`);
  }
  return wit;
}

export function lifecycleEvent(event) {
  return {
    /** The protocol's name: `turn/started`... */
    kind: event.kind.replace("-", "/"),
    sessionId: event.sessionId,
    runId: event.runId ?? null,
    turnId: event.turnId ?? null,
    toolCallId: event.toolCallId ?? null,
    toolName: event.toolName ?? null,
    outcome: event.outcome ?? null,
    durationMs: event.durationMs ?? null,
    reason: event.reason ?? null,
  };
}
