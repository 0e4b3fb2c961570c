"""turn-tracker (API 0.2): tracks which turns are active from lifecycle
events, shows `awake` while any is, and answers `/turns`.

A sandboxed variant of a keep-awake extension: the native original starts an
operating-system helper while turns run; a wasm guest cannot start processes,
so it only keeps the state. Written for octet's Python SDK."""

from octet_extension import Extension

# One instance (lifecycle state and commands share it), and only the
# features it uses.
ext = Extension(
    max_concurrent_requests=1,
    supported_features=("request_cancellation", "content_parts", "lifecycle_events"),
)

# The active turns, as (session_id, turn_id) pairs.
active = set()


@ext.on_lifecycle("turn/started")
def turn_started(event):
    active.add((event["session_id"], event.get("turn_id")))


@ext.on_lifecycle("turn/settled")
def turn_settled(event):
    active.discard((event["session_id"], event.get("turn_id")))


@ext.on_lifecycle("session/settled")
def session_settled(event):
    for pair in [pair for pair in active if pair[0] == event["session_id"]]:
        active.discard(pair)


def summary():
    if not active:
        return "No turn is active."
    if len(active) == 1:
        return "1 turn active."
    return f"{len(active)} turns active."


@ext.command(name="turns", description="Show how many turns are active", usage="/turns")
def turns(arguments):
    return "Usage: /turns" if arguments else summary()


@ext.status("status")
def status(params):
    if not active:
        return None
    return {
        "surface": params["surface"],
        "text": "awake",
        "style_role": "extension.turn_tracker.active",
        "priority": 10,
    }


@ext.on_shutdown
def clear(params):
    active.clear()


if __name__ == "__main__":
    ext.run()
