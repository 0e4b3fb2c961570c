#!/usr/bin/env python3
"""Track which turns are active while octet is processing a prompt: the
Python SDK's lifecycle idiom (a keep-awake extension, without the
operating-system helper a sandbox cannot start)."""

import threading

from octet_extension import Extension

ext = Extension(
    api_version="0.2",
    supported_features=(
        "request_cancellation",
        "content_parts",
        "lifecycle_events",
    ),
)
active_turns = set()
settled = []
state_lock = threading.RLock()


def turn_key(event):
    return (event.get("session_id"), event.get("turn_id"))


@ext.on_lifecycle("turn/started")
def turn_started(event):
    with state_lock:
        active_turns.add(turn_key(event))


@ext.on_lifecycle("turn_settled")
def turn_settled(event):
    with state_lock:
        active_turns.discard(turn_key(event))
        settled.append(event.get("outcome"))


@ext.on_lifecycle("session/settled")
def session_settled(event):
    with state_lock:
        session_id = event.get("session_id")
        active_turns.difference_update(
            [owner for owner in active_turns if owner[0] == session_id]
        )


@ext.on_lifecycle("tool/started")
def tool_started(event):
    raise RuntimeError(f"cannot observe {event.get('tool_name')}")


@ext.command(name="turns", description="Show the active turns", usage="/turns")
def turns_command(arguments):
    if arguments:
        return {"text": "Usage: /turns"}
    with state_lock:
        if not active_turns:
            return {"text": f"No turn is active; settled: {', '.join(settled) or 'none'}."}
        return {"text": f"{len(active_turns)} active; settled: {', '.join(settled) or 'none'}."}


@ext.status("status")
def collect_status(params):
    if not active_turns:
        return None
    return {
        "surface": params.get("surface", "status"),
        "text": "awake",
        "style_role": "extension.seed_lifecycle.active",
        "priority": 10,
    }


@ext.on_shutdown
def shutdown(params):
    with state_lock:
        ext.log.warning("shutdown", params=params, active=len(active_turns))
        active_turns.clear()


if __name__ == "__main__":
    ext.run()
