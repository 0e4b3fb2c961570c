//! Scheduling (docs/protocol.md#scheduling, docs/protocol.md#concurrency):
//! the probe negotiates concurrency 4, so tool calls run on a pool of four
//! instances; admission is bounded at 64 units.

use crate::support::{Shim, expect_error, expect_result};
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::time::{Duration, Instant};

fn ready() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let result = shim.initialize();
    assert_eq!(result["protocol"]["limits"]["max_concurrent_requests"], 4);
    shim
}

#[test]
fn four_calls_run_at_once_and_keep_their_ids() {
    let mut shim = ready();
    let wait_ms = 1_500;
    let started = Instant::now();
    let ids: Vec<u64> = (0..4)
        .map(|i| {
            shim.send_tool(
                "sleep_then_echo",
                json!({"ms": wait_ms, "text": format!("call {i}")}),
            )
        })
        .collect();
    let responses = shim.responses(&ids, Duration::from_secs(30));
    let elapsed = started.elapsed();
    assert!(responses.others.is_empty());
    for (i, id) in ids.iter().enumerate() {
        let result = responses
            .outcome(*id)
            .as_ref()
            .unwrap_or_else(|error| panic!("call {i}: {error}"));
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": format!("call {i}")}]),
            "request {id} got another call's answer"
        );
    }
    // One after another would take 4 × 1.5 s; in parallel about 1.5 s.
    assert!(
        elapsed < Duration::from_millis(4 * wait_ms - 1_500),
        "four {wait_ms} ms calls took {elapsed:?}: they did not run in parallel"
    );
    shim.shutdown();
}

#[test]
fn the_sixty_fifth_request_is_refused_while_the_rest_complete() {
    let mut shim = ready();
    // Four slow calls hold the four lanes; 60 more wait in the queue: 64
    // admitted units, the admission bound.
    let mut admitted: Vec<u64> = (0..4)
        .map(|_| shim.send_tool("sleep", json!({"ms": 3_000})))
        .collect();
    admitted
        .extend((0..60).map(|i| shim.send_tool("echo", json!({"text": format!("queued {i}")}))));
    let refused = shim.send_tool("echo", json!({"text": "one too many"}));
    let reply = shim.reply(refused);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32000, "{}", reply.frame.raw);
    assert_eq!(error.message, "extension request queue is full");
    assert!(
        reply.before.is_empty(),
        "admitted requests answered before the refusal: the test's premise failed"
    );
    let responses = shim.responses(&admitted, Duration::from_secs(30));
    for (n, id) in admitted.iter().enumerate() {
        let result = responses
            .outcome(*id)
            .as_ref()
            .unwrap_or_else(|error| panic!("admitted request {id}: {error}"));
        let expected = if n < 4 {
            "slept 3000 ms".to_owned()
        } else {
            format!("queued {}", n - 4)
        };
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": expected}]),
            "request {id}"
        );
    }
    // Room again.
    shim.assert_alive_and_silent("a full queue");
    shim.shutdown();
}

#[test]
fn a_duplicate_of_a_queued_id_is_refused_and_the_id_is_reusable_after() {
    let mut shim = ready();
    let busy: Vec<u64> = (0..4)
        .map(|_| shim.send_tool("sleep", json!({"ms": 1_000})))
        .collect();
    // This one waits in the queue behind the four slow calls.
    let queued = 500;
    let params = shim.tool_params("echo", json!({"text": "queued"}));
    shim.request_with_id(queued, "tool/call", params)
        .unwrap_or_else(|error| panic!("send: {error}"));
    let params = shim.tool_params("echo", json!({"text": "duplicate"}));
    shim.request_with_id(queued, "tool/call", params)
        .unwrap_or_else(|error| panic!("send duplicate: {error}"));
    let first = shim.reply(queued);
    let error = expect_error(&first);
    assert_eq!(error.code, -32600, "{}", first.frame.raw);
    assert_eq!(error.message, "duplicate active request id");
    // The original request with that id is still served, once.
    let mut ids = busy.clone();
    ids.push(queued);
    let responses = shim.responses(&ids, Duration::from_secs(30));
    for id in &busy {
        assert!(
            responses.outcome(*id).is_ok(),
            "{}",
            responses.frame(*id).raw
        );
    }
    assert_eq!(
        responses
            .outcome(queued)
            .as_ref()
            .ok()
            .map(|r| &r["content"]),
        Some(&json!([{"type": "text", "text": "queued"}])),
        "{}",
        responses.frame(queued).raw
    );
    // Settled ids are no longer active: the same id may come again.
    let params = shim.tool_params("echo", json!({"text": "again"}));
    shim.request_with_id(queued, "tool/call", params)
        .unwrap_or_else(|error| panic!("send: {error}"));
    let again = shim.reply(queued);
    assert_eq!(
        expect_result(&again)["content"],
        json!([{"type": "text", "text": "again"}])
    );
    shim.shutdown();
}

#[test]
fn non_tool_requests_stay_responsive_while_the_pool_is_busy() {
    let mut shim = ready();
    let busy: Vec<u64> = (0..4)
        .map(|_| shim.send_tool("sleep", json!({"ms": 2_000})))
        .collect();
    // Status runs on the primary instance, not behind the tool calls.
    let context = shim.context();
    let started = Instant::now();
    let reply = shim.call(
        "status/collect",
        json!({"surface": "status", "context": context}),
    );
    assert_eq!(
        *expect_result(&reply),
        json!({"surface": "status", "text": "probe", "priority": 0}),
        "{}",
        reply.frame.raw
    );
    assert!(
        started.elapsed() < Duration::from_millis(1_500),
        "status waited for the busy pool ({:?})",
        started.elapsed()
    );
    let responses = shim.responses(&busy, Duration::from_secs(30));
    assert_eq!(responses.order.len(), 4);
    shim.shutdown();
}
