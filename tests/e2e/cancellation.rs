//! `$/cancelRequest` (docs/protocol.md#host-cancellation) with the probe: a
//! guest that ignores cancellation is interrupted after the shim's 250 ms
//! grace and its instance replaced; a cooperative one keeps its instance; a
//! request cancelled before it starts never runs.

use crate::support::{HOST_GRACE, Shim, expect_error, expect_result, tool_text};
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::time::{Duration, Instant};

/// The probe with everything on one instance (negotiated concurrency 1), so
/// `counter` shows whether that instance was replaced.
fn single_instance() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let params = shim.offer().max_concurrent_requests(1).to_json();
    let result = expect_result(&shim.initialize_with(params)).clone();
    assert_eq!(result["protocol"]["limits"]["max_concurrent_requests"], 1);
    shim
}

/// Cancels `id` with reason `user` and asserts the -32800 answer arrives
/// well within the host's 2 s grace.
fn cancel_and_expect_answer(shim: &mut Shim, id: u64) {
    let cancelled_at = Instant::now();
    shim.cancel(id, "user")
        .unwrap_or_else(|error| panic!("cancel: {error}"));
    let reply = shim.reply(id);
    let waited = cancelled_at.elapsed();
    let error = expect_error(&reply);
    assert_eq!(error.code, -32800, "{}", reply.frame.raw);
    assert_eq!(error.message, "request cancelled", "{}", reply.frame.raw);
    assert_eq!(
        error.data,
        Some(json!({"reason": "user"})),
        "{}",
        reply.frame.raw
    );
    assert!(
        waited < HOST_GRACE,
        "cancellation answered after {waited:?} (the host kills at 2 s)"
    );
}

#[test]
fn a_guest_ignoring_cancellation_is_interrupted_and_replaced() {
    let mut shim = single_instance();
    assert_eq!(tool_text(&shim.tool("counter", json!({}))), "1");
    assert_eq!(tool_text(&shim.tool("counter", json!({}))), "2");
    let id = shim.send_tool("spin", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    cancel_and_expect_answer(&mut shim, id);
    // The next call succeeds, on a fresh instance (its counter restarts).
    let reply = shim.tool("counter", json!({}));
    assert_eq!(tool_text(&reply), "1", "{}", reply.frame.raw);
    shim.assert_alive_and_silent("an interrupted spin");
    shim.shutdown();
}

#[test]
fn every_pool_lane_recovers_from_an_ignored_cancellation() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let spins: Vec<u64> = (0..4).map(|_| shim.send_tool("spin", json!({}))).collect();
    std::thread::sleep(Duration::from_millis(300));
    for id in &spins {
        cancel_and_expect_answer(&mut shim, *id);
    }
    // All four lanes were stuck; four calls at once still complete.
    let echoes: Vec<u64> = (0..4)
        .map(|i| shim.send_tool("echo", json!({"text": format!("lane {i}")})))
        .collect();
    let responses = shim.responses(&echoes, Duration::from_secs(30));
    for (i, id) in echoes.iter().enumerate() {
        let result = responses
            .outcome(*id)
            .as_ref()
            .unwrap_or_else(|error| panic!("echo {i}: {error}"));
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": format!("lane {i}")}])
        );
    }
    shim.shutdown();
}

#[test]
fn a_cooperative_guest_keeps_its_instance() {
    let mut shim = single_instance();
    assert_eq!(tool_text(&shim.tool("counter", json!({}))), "1");
    for tool in ["spin_polite", "sleep"] {
        let id = shim.send_tool(tool, json!({"ms": 5000}));
        std::thread::sleep(Duration::from_millis(200));
        cancel_and_expect_answer(&mut shim, id);
    }
    // Give the lane time to finish the cancelled calls (they stop within
    // the grace), then the same instance serves the next call.
    let reply = shim.tool("counter", json!({}));
    assert_eq!(
        tool_text(&reply),
        "2",
        "a cooperative guest should not lose its instance: {}",
        reply.frame.raw
    );
    shim.shutdown();
}

#[test]
fn a_request_cancelled_before_it_starts_never_runs() {
    let mut shim = single_instance();
    let busy = shim.send_tool("sleep", json!({"ms": 1000}));
    let queued = shim.send_tool("counter", json!({}));
    cancel_and_expect_answer(&mut shim, queued);
    let reply = shim.reply(busy);
    assert_eq!(tool_text(&reply), "slept 1000 ms");
    // `counter` never ran: the first counted call is this one.
    assert_eq!(tool_text(&shim.tool("counter", json!({}))), "1");
    shim.shutdown();
}

#[test]
fn cancelling_unknown_or_settled_ids_is_ignored() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let reply = shim.tool("echo", json!({"text": "done"}));
    let settled = reply.frame.response_id().unwrap_or_default();
    shim.cancel(settled, "user")
        .unwrap_or_else(|error| panic!("cancel: {error}"));
    shim.cancel(9_999, "user")
        .unwrap_or_else(|error| panic!("cancel: {error}"));
    shim.notify(
        "$/cancelRequest",
        json!({"id": "py:1", "reason": "parent settled"}),
    )
    .unwrap_or_else(|error| panic!("cancel: {error}"));
    shim.assert_alive_and_silent("cancellations of unknown ids");
    shim.shutdown();
}
