//! A host flood of requests must not cost lifecycle notifications: the
//! host cannot be refused a notification with an answer, and a dropped
//! `turn/settled` would leave a stateful guest "awake" for good. Requests
//! past the admission bound are refused; lifecycle events have their own
//! queue (`protocol/session.rs`, `LIFECYCLE_LIMIT`).

use crate::support::{Shim, expect_result, probe_manifest, tool_text};
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::time::Duration;

#[test]
fn a_full_request_queue_does_not_drop_lifecycle_events() {
    let mut shim = Shim::probe_with(probe_manifest(ApiVersion::V0_2));
    // Concurrency 1: every request and event shares the primary instance,
    // which is the one that counts the events.
    let offer = shim.offer().max_concurrent_requests(1);
    expect_result(&shim.initialize_with(offer.to_json()));
    let sleepers: Vec<u64> = (0..64)
        .map(|_| shim.send_tool("sleep", json!({"ms": 100})))
        .collect();
    let refused = shim.send_tool("sleep", json!({"ms": 100}));
    let events = [
        (
            "turn/started",
            json!({"session_id": "s", "run_id": "r", "turn_id": "t1"}),
        ),
        (
            "tool/started",
            json!({"session_id": "s", "run_id": "r", "turn_id": "t1",
            "tool_call_id": "c1", "tool_name": "echo"}),
        ),
        (
            "tool/settled",
            json!({"session_id": "s", "run_id": "r", "turn_id": "t1",
            "tool_call_id": "c1", "tool_name": "echo", "outcome": "completed", "duration_ms": 3}),
        ),
        (
            "turn/settled",
            json!({"session_id": "s", "run_id": "r", "turn_id": "t1",
            "outcome": "completed", "duration_ms": 9, "reason": null}),
        ),
    ];
    for (method, params) in &events {
        shim.notify(method, params.clone())
            .expect("send a lifecycle event");
    }
    let mut ids = sleepers.clone();
    ids.push(refused);
    let responses = shim.responses(&ids, Duration::from_secs(20));
    let full = responses
        .outcome(refused)
        .as_ref()
        .err()
        .map(|e| e.message.clone());
    assert_eq!(full.as_deref(), Some("extension request queue is full"));
    for id in &sleepers {
        assert!(responses.outcome(*id).is_ok(), "sleeper {id} failed");
    }
    let count = shim.tool("lifecycle_count", json!({}));
    assert_eq!(
        tool_text(&count),
        events.len().to_string(),
        "lifecycle events seen by the guest under a full request queue"
    );
    shim.shutdown();
}
