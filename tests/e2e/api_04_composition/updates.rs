//! octet's partial results of a composition call (`composition/update`)
//! through the real binary: the api04 guest's `compose_call` with
//! `updates` starts the call with the Rust SDK's `call_streaming`, reads
//! the updates as they come and reports what it saw. The honest stream is
//! checked byte for byte; each hostile stream (out of order, for unknown
//! or answered calls, a flood past 64, results too large or too deep,
//! malformed params) is dropped without an answer, and the extension keeps
//! serving with nothing but valid frames on stdout.

use super::ready;
use crate::support::{LOG_TIMEOUT, REQUEST_TIMEOUT, Shim, stderr_text, tool_text};
use octet_hostsim::{
    ChildId, CompositionCall, Frame, FrameKind, HostileUpdates, MAX_BUFFERED_UPDATES,
};
use serde_json::{Value, json};
use std::time::Duration;

/// Waits for a stderr line containing `needle`.
fn logged(shim: &Shim, needle: &str) {
    let found = shim
        .stderr()
        .wait_for(LOG_TIMEOUT, |line| line.text.contains(needle));
    assert!(
        found.is_some(),
        "no {needle:?} in stderr:\n{}",
        stderr_text(shim)
    );
}

/// Frames until `done` holds for what was read (each within `timeout`).
fn frames_until(shim: &mut Shim, done: impl Fn(&[Frame]) -> bool) -> Vec<Frame> {
    let mut frames = Vec::new();
    while !done(&frames) {
        frames.push(shim.recv(REQUEST_TIMEOUT).expect("a frame"));
    }
    frames
}

/// Starts `compose_call` with updates read as `how` says; returns the tool
/// call's id and the composition call it sent.
fn start_streaming(shim: &mut Shim, how: Value) -> (u64, CompositionCall) {
    let id = shim.send_tool(
        "compose_call",
        json!({"name": "grep", "arguments": {"pattern": "TODO"}, "updates": how}),
    );
    let frame = shim.recv(REQUEST_TIMEOUT).expect("a child request");
    let call = CompositionCall::from_frame(&frame).expect("a composition/call");
    assert!(call.updates, "asked for updates: {}", frame.raw);
    (id, call)
}

/// What the guest reports having seen.
fn seen(shim: &mut Shim, id: u64) -> Value {
    let reply = shim.reply(id);
    assert!(
        reply.before.is_empty(),
        "unexpected frames before the reply"
    );
    serde_json::from_str(&tool_text(&reply)).expect("the guest's report is JSON")
}

/// The sequences of the updates the guest saw.
fn sequences(report: &Value) -> Vec<u64> {
    report["updates"]
        .as_array()
        .expect("updates")
        .iter()
        .map(|pair| pair[0].as_u64().expect("a sequence"))
        .collect()
}

/// The extension still serves a tool call, and stdout held valid frames
/// only.
fn still_serving(shim: &mut Shim) {
    let reply = shim.tool("plain", json!({}));
    assert!(reply.outcome().is_ok(), "{}", reply.frame.raw);
    shim.check_clean().expect("only valid frames on stdout");
    shim.shutdown();
}

#[test]
fn updates_reach_the_guest_before_the_final_value() {
    let (mut shim, _dir) = ready();
    let id = shim.send_tool(
        "compose_call",
        json!({"name": "grep", "arguments": {"pattern": "TODO"}, "updates": {}}),
    );
    let frame = shim.recv(REQUEST_TIMEOUT).expect("a child request");
    assert_eq!(
        frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":"wasm:1","method":"composition/call","params":{{"parent_request_id":{id},"name":"grep","arguments":{{"pattern":"TODO"}},"updates":true}}}}"#
        )
    );
    let call = CompositionCall::from_frame(&frame).unwrap();
    shim.serve_composition_call(
        &call,
        &[json!({"line": "a.rs:1"}), json!({"line": "b.rs:7"})],
        json!({"matches": 2}),
    )
    .unwrap();
    let reply = shim.reply(id);
    assert!(reply.before.is_empty());
    assert_eq!(
        reply.frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{{\"updates\":[[1,{{\"line\":\"a.rs:1\"}}],[2,{{\"line\":\"b.rs:7\"}}]],\"value\":{{\"matches\":2}}}}"}}],"is_error":false,"metadata":{{}}}}}}"#
        )
    );

    // With the full outcome.
    let id = shim.send_tool(
        "compose_call",
        json!({"name": "grep", "arguments": {}, "full": true, "updates": {}}),
    );
    let call = CompositionCall::from_frame(&shim.recv(REQUEST_TIMEOUT).unwrap()).unwrap();
    assert!(call.full_outcome && call.updates);
    shim.serve_composition_call(&call, &[json!("partial")], json!("done"))
        .unwrap();
    assert_eq!(
        seen(&mut shim, id),
        json!({
            "updates": [[1, "partial"]],
            "value": {"content": [{"type": "text", "text": "\"done\""}], "is_error": false, "value": "done"},
        })
    );
    still_serving(&mut shim);
}

#[test]
fn a_guest_reads_updates_while_the_call_runs_and_may_abandon_it() {
    let (mut shim, _dir) = ready();
    let (id, call) = start_streaming(&mut shim, json!({"read": 1, "abandon": true}));
    shim.composition_update(&call.id, 1, json!({"line": "first"}))
        .unwrap();
    // The guest had the update with no reply sent: it drops the call and
    // answers, and octet is told (in either order).
    let frames = frames_until(&mut shim, |frames| frames.len() == 2);
    let raws: Vec<&str> = frames.iter().map(|f| f.raw.as_str()).collect();
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{{\"updates\":[[1,{{\"line\":\"first\"}}]]}}"}}],"is_error":false,"metadata":{{}}}}}}"#
    );
    let abandon = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"wasm:1","reason":"cancelled"}}"#;
    assert!(
        raws.contains(&answer.as_str()) && raws.contains(&abandon),
        "{raws:#?}"
    );
    // What octet still sends for the abandoned call is dropped.
    shim.composition_update(&call.id, 2, json!("late")).unwrap();
    shim.respond(&call.id, json!({"value": "late"})).unwrap();
    still_serving(&mut shim);
}

#[test]
fn only_a_call_that_asked_gets_updates_and_none_after_its_reply() {
    let (mut shim, _dir) = ready();
    // A plain call never asks, and updates sent for it are dropped.
    let id = shim.send_tool("compose_call", json!({"name": "read", "arguments": {}}));
    let frame = shim.recv(REQUEST_TIMEOUT).unwrap();
    let call = CompositionCall::from_frame(&frame).unwrap();
    assert!(!call.updates && frame.params().get("updates").is_none());
    shim.composition_update(&call.id, 1, json!("unasked"))
        .unwrap();
    shim.serve_composition_call(&call, &[], json!("plain value"))
        .unwrap();
    assert_eq!(tool_text(&shim.reply(id)), r#""plain value""#);

    // Updates after the final reply are dropped.
    let (id, call) = start_streaming(&mut shim, json!({"delay_ms": 300}));
    shim.serve_composition_call(&call, &[json!(1)], json!("v"))
        .unwrap();
    shim.composition_update(&call.id, 2, json!("after the reply"))
        .unwrap();
    assert_eq!(
        seen(&mut shim, id),
        json!({"updates": [[1, 1]], "value": "v"})
    );
    logged(&shim, "composition/update ignored");
    still_serving(&mut shim);
}

#[test]
fn out_of_order_updates_are_dropped() {
    let (mut shim, _dir) = ready();
    let (id, call) = start_streaming(&mut shim, json!({"delay_ms": 300}));
    shim.hostile_updates(&call, &HostileUpdates::OutOfOrder)
        .unwrap();
    shim.serve_composition_call(&call, &[], json!("v")).unwrap();
    assert_eq!(
        seen(&mut shim, id),
        json!({"updates": [[1, "one"], [3, "three"]], "value": "v"})
    );
    still_serving(&mut shim);
}

#[test]
fn updates_for_unknown_requests_are_dropped() {
    let (mut shim, _dir) = ready();
    let (id, call) = start_streaming(&mut shim, json!({"delay_ms": 300}));
    shim.hostile_updates(&call, &HostileUpdates::UnknownRequest)
        .unwrap();
    shim.hostile_updates(&call, &HostileUpdates::Malformed)
        .unwrap();
    shim.composition_update(&call.id, 1, json!("mine")).unwrap();
    shim.serve_composition_call(&call, &[], json!("v")).unwrap();
    assert_eq!(
        seen(&mut shim, id),
        json!({"updates": [[1, "mine"]], "value": "v"})
    );
    still_serving(&mut shim);
}

#[test]
fn past_64_buffered_the_oldest_give_way() {
    let (mut shim, _dir) = ready();
    let (id, call) = start_streaming(&mut shim, json!({"delay_ms": 1500}));
    shim.hostile_updates(&call, &HostileUpdates::Flood(100))
        .unwrap();
    shim.serve_composition_call(&call, &[], json!("v")).unwrap();
    let report = seen(&mut shim, id);
    assert_eq!(
        sequences(&report),
        (37..=100).collect::<Vec<_>>(),
        "the newest {MAX_BUFFERED_UPDATES}"
    );
    assert_eq!(report["value"], "v");
    logged(&shim, "the oldest updates were dropped");
    still_serving(&mut shim);
}

#[test]
fn results_too_large_or_too_deep_are_dropped() {
    let (mut shim, _dir) = ready();
    let (id, call) = start_streaming(&mut shim, json!({"delay_ms": 300}));
    shim.hostile_updates(&call, &HostileUpdates::Oversized)
        .unwrap();
    let deep = (0..100).fold(json!("bottom"), |inner, _| json!([inner]));
    shim.composition_update(&call.id, 2, deep).unwrap();
    let at_bound = (0..64).fold(json!("bottom"), |inner, _| json!([inner]));
    shim.composition_update(&call.id, 3, at_bound.clone())
        .unwrap();
    shim.serve_composition_call(&call, &[], json!("v")).unwrap();
    assert_eq!(
        seen(&mut shim, id),
        json!({"updates": [[3, at_bound]], "value": "v"})
    );
    logged(&shim, "the limit is 256 KiB");
    logged(&shim, "nested deeper than 64 levels");
    still_serving(&mut shim);
}

#[test]
fn cancelling_the_tool_call_ends_the_stream() {
    let (mut shim, _dir) = ready();
    let (id, call) = start_streaming(&mut shim, json!({}));
    shim.composition_update(&call.id, 1, json!("one")).unwrap();
    shim.cancel(id, "user").unwrap();
    // The tool call is answered, and octet is told the composition call is
    // no longer wanted (in either order).
    let frames = frames_until(&mut shim, |frames| frames.len() == 2);
    let raws: Vec<&str> = frames.iter().map(|f| f.raw.as_str()).collect();
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32800,"message":"request cancelled","data":{{"reason":"user"}}}}}}"#
    );
    let abandon =
        r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"wasm:1","reason":"user"}}"#;
    assert!(
        raws.contains(&answer.as_str()) && raws.contains(&abandon),
        "{raws:#?}"
    );
    shim.composition_update(&call.id, 2, json!("after the cancel"))
        .unwrap();
    still_serving(&mut shim);
}

#[test]
fn at_most_four_calls_in_flight() {
    let (mut shim, _dir) = ready();
    let id = shim.send_tool(
        "compose_call",
        json!({"name": "grep", "arguments": {}, "updates": {"parallel": 5}}),
    );
    let reply = shim.reply(id);
    // Calls may still be written (and abandoned) after the reply.
    let mut after = Vec::new();
    while let Ok(frame) = shim.recv(Duration::from_millis(500)) {
        after.push(frame);
    }
    let mut sent = Vec::new();
    let mut abandoned = Vec::new();
    for frame in reply.before.iter().chain(&after) {
        match &frame.kind {
            FrameKind::Request { id, method, .. } if method == "composition/call" => {
                sent.push(id.clone())
            }
            FrameKind::Notification { method, params } if method == "$/cancelRequest" => {
                abandoned.push(ChildId::from_json(&params["id"]).unwrap())
            }
            _ => panic!("unexpected {}", frame.raw),
        }
    }
    assert_eq!(
        serde_json::from_str::<Value>(&tool_text(&reply)).unwrap(),
        json!({"started": 4, "error": "invalid params: a tool call may have at most 4 composition calls in flight; finish one first"})
    );
    assert!(sent.len() <= 4, "{sent:?}");
    assert!(
        sent.iter().all(|id| abandoned.contains(id)),
        "every call sent is abandoned: {sent:?} {abandoned:?}"
    );
    // octet's late answers to the abandoned calls are dropped.
    for id in &sent {
        shim.respond(id, json!({"value": 0})).unwrap();
    }
    still_serving(&mut shim);
}

#[test]
fn without_the_feature_start_call_sends_nothing() {
    let (mut shim, _dir) = crate::api_04_services::start(octet_hostsim::ApiVersion::V0_2);
    shim.initialize();
    let reply = shim.tool(
        "compose_call",
        json!({"name": "grep", "arguments": {}, "updates": {}}),
    );
    assert!(reply.before.is_empty(), "nothing sent");
    let error = crate::support::expect_error(&reply);
    assert_eq!(error.code, -32601, "{}", reply.frame.raw);
    assert!(
        error
            .message
            .contains("the negotiated `tool_composition_v1` feature"),
        "{}",
        reply.frame.raw
    );
    // And a notification octet should not send is ignored there too.
    shim.notify(
        "composition/update",
        json!({"request_id": "wasm:1", "sequence": 1, "result": 1}),
    )
    .unwrap();
    still_serving(&mut shim);
}
