//! Tool composition (API 0.4, `tool_composition_v1`) through the real
//! binary with the api04 guest: every composition request as octet sees it,
//! octet's answers inline and through sidecar files in the scratch
//! directory (and sidecars an attacker tampered with), and every bound the
//! shim enforces before anything is written.

mod updates;

use crate::api_04_services::start;
use crate::support::{REQUEST_TIMEOUT, Shim, expect_error, tool_text};
use octet_hostsim::{ApiVersion, ChildId, FrameKind};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The next child request: its id, method and params.
pub(crate) fn child(shim: &mut Shim) -> (ChildId, String, Value) {
    let frame = shim.recv(REQUEST_TIMEOUT).expect("a child request");
    match frame.kind {
        FrameKind::Request { id, method, params } => (id, method, params),
        _ => panic!("expected a child request, got {}", frame.raw),
    }
}

fn sha256(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The scratch directory the shim was started with (beside the workspace).
fn scratch(shim: &Shim) -> std::path::PathBuf {
    shim.workspace.parent().expect("a parent").join("scratch")
}

fn ready() -> (Shim, tempfile::TempDir) {
    let (mut shim, dir) = start(ApiVersion::V0_4);
    let result = shim.initialize();
    let features = &result["protocol"]["features"];
    assert!(
        features
            .as_array()
            .is_some_and(|f| f.contains(&json!("tool_composition_v1"))),
        "{result}"
    );
    (shim, dir)
}

#[test]
fn context_call_and_store_reach_octet_under_the_tool_call() {
    let (mut shim, _dir) = ready();
    let id = shim.send_tool("compose_context", json!({}));
    let (child_id, method, params) = child(&mut shim);
    assert_eq!(method, "composition/context");
    assert_eq!(params, json!({"parent_request_id": id}));
    let tools =
        json!([{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]);
    shim.respond(
        &child_id,
        json!({"tools": tools, "store": {"seen": 1}, "limits": {"timeout_ms": 30000, "max_calls": 256}}),
    )
    .unwrap();
    let text = tool_text(&shim.reply(id));
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"tools": tools, "store": {"seen": 1}, "timeout_ms": 30000, "max_calls": 256})
    );

    let id = shim.send_tool(
        "compose_call",
        json!({"name": "read", "arguments": {"path": "a.txt"}}),
    );
    let (child_id, method, params) = child(&mut shim);
    assert_eq!(method, "composition/call");
    assert_eq!(
        params,
        json!({"parent_request_id": id, "name": "read", "arguments": {"path": "a.txt"}})
    );
    shim.respond(&child_id, json!({"value": {"text": "hello"}}))
        .unwrap();
    assert_eq!(tool_text(&shim.reply(id)), r#"{"text":"hello"}"#);

    let id = shim.send_tool(
        "compose_call",
        json!({"name": "read", "arguments": {}, "full": true}),
    );
    let (child_id, _, params) = child(&mut shim);
    assert_eq!(params["full_outcome"], true);
    let outcome =
        json!({"content": [{"type": "text", "text": "hi"}], "is_error": false, "value": "hi"});
    shim.respond(&child_id, outcome.clone()).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&tool_text(&shim.reply(id))).unwrap(),
        outcome
    );

    store_round_trip(&mut shim);
    shim.shutdown();
}

/// The test guests' `compose_store`: one commit as octet sees it, and the
/// guest's answer once octet accepts it (every language's guest the same).
pub(crate) fn store_round_trip(shim: &mut Shim) {
    let id = shim.send_tool(
        "compose_store",
        json!({"set": {"count": 2, "note": {"a": [1]}}, "delete": ["old"]}),
    );
    let (child_id, method, params) = child(shim);
    assert_eq!(method, "composition/store");
    assert_eq!(
        params,
        json!({"parent_request_id": id, "set": {"count": 2, "note": {"a": [1]}}, "delete": ["old"]})
    );
    shim.respond(&child_id, json!({})).unwrap();
    assert_eq!(tool_text(&shim.reply(id)), "stored");
}

#[test]
fn octet_errors_reach_the_guest_unchanged() {
    let (mut shim, _dir) = ready();
    let id = shim.send_tool("compose_call", json!({"name": "gone", "arguments": {}}));
    let (child_id, _, _) = child(&mut shim);
    shim.respond_error(&child_id, -32602, "unknown tool: gone")
        .unwrap();
    let reply = shim.reply(id);
    let error = expect_error(&reply);
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32602, "unknown tool: gone")
    );
    shim.shutdown();
}

#[test]
fn large_values_come_through_checked_sidecar_files() {
    let (mut shim, _dir) = ready();
    let scratch = scratch(&shim);
    let big = json!({"text": "x".repeat(2 << 20)});
    let data = big.to_string().into_bytes();
    std::fs::write(scratch.join("value-1.json"), &data).unwrap();
    let id = shim.send_tool(
        "compose_call",
        json!({"name": "read", "arguments": {}, "summary": true}),
    );
    let (child_id, _, _) = child(&mut shim);
    shim.respond(
        &child_id,
        json!({"value_file": {"path": "value-1.json", "bytes": data.len(), "sha256": sha256(&data)}}),
    )
    .unwrap();
    let reply = shim.reply(id);
    assert_eq!(
        tool_text(&reply),
        format!("bytes={}", data.len()),
        "the whole value"
    );

    // A context through a sidecar, too.
    let context =
        json!({"tools": [], "store": {}, "limits": {"timeout_ms": 30000, "max_calls": 256}});
    let data = context.to_string().into_bytes();
    std::fs::write(scratch.join("context-1.json"), &data).unwrap();
    let id = shim.send_tool("compose_context", json!({}));
    let (child_id, _, _) = child(&mut shim);
    shim.respond(
        &child_id,
        json!({"context_file": {"path": "context-1.json", "bytes": data.len(), "sha256": sha256(&data)}}),
    )
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&tool_text(&shim.reply(id))).unwrap()["max_calls"],
        256
    );
    shim.shutdown();
}

#[test]
fn tampered_or_escaping_sidecars_are_refused() {
    let (mut shim, dir) = ready();
    let scratch = scratch(&shim);
    let data = br#"{"secret":"host file"}"#;
    let outside = dir.path().join("outside.json");
    std::fs::write(&outside, data).unwrap();
    std::os::unix::fs::symlink(&outside, scratch.join("link.json")).unwrap();
    std::fs::write(scratch.join("changed.json"), br#"{"secret":"swapped"}"#).unwrap();
    let good = |path: &str| json!({"path": path, "bytes": data.len(), "sha256": sha256(data)});
    for (spec, problem) in [
        (good("link.json"), "without following links"),
        (good("changed.json"), "announced"),
        (good("../outside.json"), "is not a plain file name"),
        (good("missing.json"), "cannot open"),
        (
            json!({"path": "x", "bytes": (8 << 20) + 1, "sha256": sha256(data)}),
            "the limit is 8 MiB",
        ),
    ] {
        let id = shim.send_tool("compose_call", json!({"name": "read", "arguments": {}}));
        let (child_id, _, _) = child(&mut shim);
        shim.respond(&child_id, json!({"value_file": spec}))
            .unwrap();
        let text = tool_text(&shim.reply(id));
        assert!(
            text.starts_with("invalid composition/call response: ") && text.contains(problem),
            "{problem:?} not in {text}"
        );
    }
    shim.shutdown();
}

#[test]
fn bounds_are_refused_before_anything_is_written() {
    let (mut shim, _dir) = ready();
    let deep = (0..33).fold(json!(1), |inner, _| json!({"a": inner}));
    for (arguments, problem) in [
        (
            json!({"name": "read", "arguments": [1]}),
            "must be a JSON object",
        ),
        (
            json!({"name": "read", "arguments": {"a": "x".repeat(128 * 1024)}}),
            "the limit is 128 KiB",
        ),
        (
            json!({"name": "read", "arguments": deep}),
            "nested deeper than 32 levels",
        ),
        (
            json!({"name": "no such/tool", "arguments": {}}),
            "is not an identifier",
        ),
    ] {
        let reply = shim.tool("compose_call", arguments);
        assert!(reply.before.is_empty(), "nothing sent for {problem}");
        let error = expect_error(&reply);
        assert_eq!(error.code, -32602, "{}", reply.frame.raw);
        assert!(
            error.message.contains(problem),
            "{problem:?} not in {}",
            reply.frame.raw
        );
    }
    for (args, problem) in [
        (
            json!({"set": {"k": 1}, "delete": ["k"]}),
            "appears twice in one commit",
        ),
        (json!({"set": {"k".repeat(1025): 1}}), "keys have 1 to 1024"),
        (
            json!({"set": {"k": "x".repeat(256 * 1024)}}),
            "the limit is 256 KiB",
        ),
        (
            json!({"delete": (0..4097).map(|i| format!("k{i}")).collect::<Vec<_>>()}),
            "the limit is 4096",
        ),
    ] {
        let reply = shim.tool("compose_store", args);
        assert!(reply.before.is_empty(), "nothing sent for {problem}");
        let error = expect_error(&reply);
        assert_eq!(error.code, -32602, "{}", reply.frame.raw);
        assert!(
            error.message.contains(problem),
            "{problem:?} not in {}",
            reply.frame.raw
        );
    }
    // One commit per tool call: the second is refused without a frame.
    let id = shim.send_tool("compose_store_twice", json!({}));
    let (child_id, method, _) = child(&mut shim);
    assert_eq!(method, "composition/store");
    shim.respond(&child_id, json!({})).unwrap();
    let reply = shim.reply(id);
    assert!(reply.before.is_empty(), "a second commit was sent");
    assert_eq!(
        expect_error(&reply).message,
        "a tool call may commit to the composition store once; this one already did"
    );
    shim.shutdown();
}

#[test]
fn a_tool_call_makes_at_most_256_composition_calls() {
    let (mut shim, _dir) = ready();
    let id = shim.send_tool("compose_many", json!({"count": 257}));
    for _ in 0..256 {
        let (child_id, method, _) = child(&mut shim);
        assert_eq!(method, "composition/call");
        shim.respond(&child_id, json!({"value": "plain"})).unwrap();
    }
    let reply = shim.reply(id);
    assert!(reply.before.is_empty(), "a 257th call was sent");
    assert_eq!(
        tool_text(&reply),
        "256 calls, then: invalid params: a tool call may make at most 256 composition calls"
    );
    // The budget is per tool call: the next one starts afresh.
    let id = shim.send_tool("compose_many", json!({"count": 1}));
    let (child_id, _, _) = child(&mut shim);
    shim.respond(&child_id, json!({"value": "plain"})).unwrap();
    assert_eq!(tool_text(&shim.reply(id)), "1 calls");
    shim.shutdown();
}

#[test]
fn only_a_model_tool_call_may_compose() {
    let (mut shim, _dir) = ready();
    let context = shim.context();
    let reply = shim.call(
        "command/execute",
        json!({"name": "compose", "arguments": [], "context": context}),
    );
    assert!(reply.before.is_empty(), "nothing sent from a command");
    let error = expect_error(&reply);
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            -32602,
            "composition.context is only available while serving a model tool call"
        )
    );
    shim.shutdown();
}

#[test]
fn without_the_feature_nothing_is_sent() {
    let (mut shim, _dir) = start(ApiVersion::V0_2);
    shim.initialize();
    let reply = shim.tool("compose_context", json!({}));
    assert!(reply.before.is_empty());
    let error = expect_error(&reply);
    assert_eq!(error.code, -32601, "{}", reply.frame.raw);
    assert!(
        error
            .message
            .contains("the negotiated `tool_composition_v1` feature"),
        "{}",
        reply.frame.raw
    );
    shim.shutdown();
}
