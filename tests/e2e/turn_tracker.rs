//! `turn-tracker.md` (API 0.2): lifecycle subscriptions and the state they
//! drive, through the real binary. Lifecycle events are notifications: the
//! shim must never answer them (the checker fails any unexpected response).

use crate::support::{LOG_TIMEOUT, Shim, expect_result, protocol, raws};
use serde_json::json;

const AWAKE: &str = r#"{"surface":"status","text":"awake","style_role":"extension.turn_tracker.active","priority":10}"#;

fn ready() -> Shim {
    let mut shim = Shim::turn_tracker();
    shim.initialize();
    shim
}

fn turn_started(shim: &mut Shim, session: &str, turn: &str) {
    shim.notify(
        "turn/started",
        json!({"session_id": session, "run_id": "run-1", "turn_id": turn}),
    )
    .unwrap_or_else(|error| panic!("turn/started: {error}"));
}

fn turn_settled(shim: &mut Shim, session: &str, turn: &str) {
    shim.notify(
        "turn/settled",
        json!({
            "session_id": session, "run_id": "run-1", "turn_id": turn,
            "outcome": "completed", "duration_ms": 1804, "reason": null,
        }),
    )
    .unwrap_or_else(|error| panic!("turn/settled: {error}"));
}

/// `status/collect` for the `status` surface: the raw result member.
fn status(shim: &mut Shim) -> String {
    let context = shim.context();
    let reply = shim.call(
        "status/collect",
        json!({"surface": "status", "context": context}),
    );
    assert!(
        reply.before.is_empty(),
        "frames before the status reply (a lifecycle answer?): {:?}",
        raws(&reply.before)
    );
    expect_result(&reply).to_string()
}

/// `/turns` with `arguments`: the reply's text.
fn turns(shim: &mut Shim, arguments: &[&str]) -> String {
    let context = shim.context();
    let reply = shim.call(
        "command/execute",
        json!({"name": "turns", "arguments": arguments, "context": context}),
    );
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    let result = expect_result(&reply);
    result["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {}", reply.frame.raw))
        .to_owned()
}

#[test]
fn initialize_subscribes_to_the_three_handled_events() {
    let mut shim = Shim::turn_tracker();
    let result = shim.initialize();
    let protocol = protocol(&result);
    assert_eq!(
        protocol["features"],
        json!(["request_cancellation", "content_parts", "lifecycle_events"]),
        "{result}"
    );
    assert_eq!(
        protocol["lifecycle_events"],
        json!(["session/settled", "turn/settled", "turn/started"]),
        "{result}"
    );
    assert_eq!(result["tools"], json!([]), "{result}");
    assert_eq!(
        result["commands"],
        json!([{"name": "turns", "description": "Show how many turns are active", "usage": "/turns"}]),
        "{result}"
    );
    shim.shutdown();
}

#[test]
fn reference_transcript() {
    let mut shim = Shim::turn_tracker();
    let params = shim.offer().to_json();
    let reply = shim.initialize_with(params);
    let result = expect_result(&reply);
    assert_eq!(
        protocol(result)["features"],
        json!(["request_cancellation", "content_parts", "lifecycle_events"])
    );
    turn_started(&mut shim, "s-01", "turn-1");
    assert_eq!(status(&mut shim), AWAKE);
    assert_eq!(turns(&mut shim, &[]), "1 turn active.");
    turn_settled(&mut shim, "s-01", "turn-1");
    assert_eq!(status(&mut shim), "null");
    shim.shutdown();
}

#[test]
fn idle_and_usage_replies() {
    let mut shim = ready();
    assert_eq!(turns(&mut shim, &[]), "No turn is active.");
    assert_eq!(status(&mut shim), "null");
    assert_eq!(turns(&mut shim, &["now"]), "Usage: /turns");
    turn_started(&mut shim, "s-01", "turn-1");
    assert_eq!(turns(&mut shim, &["now"]), "Usage: /turns");
    shim.shutdown();
}

#[test]
fn counts_turns_and_forgets_a_settled_session() {
    let mut shim = ready();
    turn_started(&mut shim, "s-01", "turn-1");
    turn_started(&mut shim, "s-01", "turn-2");
    turn_started(&mut shim, "s-02", "turn-1");
    assert_eq!(turns(&mut shim, &[]), "3 turns active.");
    shim.notify(
        "session/settled",
        json!({"session_id": "s-01", "run_id": null, "outcome": "completed", "duration_ms": 10, "reason": null}),
    )
    .unwrap_or_else(|error| panic!("session/settled: {error}"));
    assert_eq!(turns(&mut shim, &[]), "1 turn active.");
    assert_eq!(status(&mut shim), AWAKE);
    turn_settled(&mut shim, "s-02", "turn-1");
    assert_eq!(turns(&mut shim, &[]), "No turn is active.");
    shim.shutdown();
}

#[test]
fn unsubscribed_events_are_ignored_silently() {
    let mut shim = ready();
    // Not subscribed (the guest has no handler): ignored, never answered.
    shim.notify(
        "tool/started",
        json!({"session_id": "s-01", "run_id": "run-1", "turn_id": "turn-1", "tool_call_id": "c1", "tool_name": "bash"}),
    )
    .unwrap_or_else(|error| panic!("tool/started: {error}"));
    shim.notify(
        "session/started",
        json!({"session_id": "s-01", "run_id": null}),
    )
    .unwrap_or_else(|error| panic!("session/started: {error}"));
    assert_eq!(turns(&mut shim, &[]), "No turn is active.");
    let record = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "lifecycle event not subscribed; ignored")
        .unwrap_or_else(|| panic!("no diagnostic for the ignored events"));
    assert!(
        [json!("tool/started"), json!("session/started")].contains(
            record
                .field("event")
                .unwrap_or_else(|| panic!("no event field in {}", record.text))
        ),
        "{}",
        record.text
    );
    shim.shutdown();
}
