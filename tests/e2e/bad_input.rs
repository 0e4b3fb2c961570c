//! Malformed or out-of-order host input (docs/protocol.md#bad-input,
//! docs/protocol.md#scheduling, docs/protocol.md#initialize-checks). Each
//! case is followed by a normal request that must still work. Where
//! answering would be fatal to the host (no recoverable numeric id) the shim
//! must write nothing on stdout and log a JSON record on stderr instead.

use crate::support::{Shim, expect_error, expect_result, raws, tool_text};
use octet_hostsim::{ApiVersion, FrameKind, MAX_LINE_BYTES};
use serde_json::json;

fn ready() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    shim
}

/// Input with no recoverable id: silence on stdout, a record on stderr, and
/// the shim keeps serving.
fn assert_dropped_with_log(input: &[u8], what: &str) {
    let mut shim = ready();
    let records = shim.stderr().records().len();
    shim.raw(input);
    shim.wait_new_record(records, what);
    shim.assert_alive_and_silent(what);
    shim.shutdown();
}

#[test]
fn invalid_json_is_logged_not_answered() {
    assert_dropped_with_log(b"{\"jsonrpc\":\"2.0\",\"id\":\n", "an invalid JSON line");
}

#[test]
fn invalid_utf8_is_logged_not_answered() {
    assert_dropped_with_log(b"\xff\xfe\xfd{}\n", "invalid UTF-8");
}

#[test]
fn a_json_array_is_logged_not_answered() {
    assert_dropped_with_log(b"[1]\n", "a JSON array");
}

#[test]
fn a_json_number_is_logged_not_answered() {
    assert_dropped_with_log(b"42\n", "a JSON number");
}

#[test]
fn ten_thousand_levels_of_nesting_are_logged_not_answered() {
    let mut line = "[".repeat(10_000);
    line.push_str(&"]".repeat(10_000));
    line.push('\n');
    assert_dropped_with_log(line.as_bytes(), "10,000 nested arrays");
}

/// A request whose params nest 10,000 levels deep: the shim must survive;
/// it may answer that id with an error, never with a result.
#[test]
fn a_deeply_nested_request_does_not_kill_the_shim() {
    let mut shim = ready();
    let id = 4_000;
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tool/call","params":{{"name":"echo","arguments":{{"text":"deep","deep":{deep}}},"context":{}}}}}"#,
        shim.context()
    );
    // The checker cannot parse this line either, so it is told about the
    // request by hand: an error answer for this id is allowed.
    shim.with_checker(|checker| checker.host_sent_request(id, "tool/call", &json!({})));
    shim.raw(format!("{line}\n").as_bytes());
    let reply = shim.tool("echo", json!({"text": "still alive"}));
    for frame in &reply.before {
        assert!(
            matches!(&frame.kind, FrameKind::Response { id: got, outcome: Err(_) } if *got == id),
            "unexpected frame after the deep request: {}",
            frame.raw
        );
    }
    assert_eq!(tool_text(&reply), "still alive");
    shim.shutdown();
}

/// A `tool/call` to echo padded (inside `context.host`, which the shim must
/// ignore) to exactly `len` bytes before the LF.
fn padded_echo(shim: &Shim, id: u64, len: usize) -> Vec<u8> {
    let mut context = shim.context();
    let mut frame = |pad: &str| {
        context["host"]["pad"] = json!(pad);
        json!({"jsonrpc": "2.0", "id": id, "method": "tool/call",
               "params": {"name": "echo", "arguments": {"text": "big frame"}, "context": context}})
        .to_string()
    };
    let base = frame("").len();
    let mut line = frame(&"p".repeat(len - base)).into_bytes();
    assert_eq!(line.len(), len);
    line.push(b'\n');
    line
}

#[test]
fn the_largest_host_frame_is_accepted() {
    let mut shim = ready();
    let id = 5_000;
    let line = padded_echo(&shim, id, MAX_LINE_BYTES - 1);
    shim.raw(&line);
    let reply = shim.reply(id);
    assert_eq!(tool_text(&reply), "big frame");
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    shim.shutdown();
}

#[test]
fn an_oversized_host_frame_is_rejected_without_dying() {
    let mut shim = ready();
    let id = 5_001;
    let records = shim.stderr().records().len();
    let line = padded_echo(&shim, id, MAX_LINE_BYTES);
    shim.raw(&line);
    shim.wait_new_record(records, "a 1,048,576-byte line");
    let reply = shim.tool("echo", json!({"text": "still alive"}));
    for frame in &reply.before {
        assert!(
            matches!(&frame.kind, FrameKind::Response { id: got, outcome: Err(_) } if *got == id),
            "the oversized request was not rejected: {}",
            frame.raw
        );
    }
    assert_eq!(tool_text(&reply), "still alive");
    shim.shutdown();
}

#[test]
fn an_unknown_method_request_is_answered_like_the_sdk() {
    let mut shim = ready();
    let reply = shim.call("does/not_exist", json!({}));
    let error = expect_error(&reply);
    assert_eq!(error.code, -32601, "{}", reply.frame.raw);
    assert_eq!(error.message, "unknown method: does/not_exist");
    shim.assert_alive_and_silent("an unknown method");
    shim.shutdown();
}

#[test]
fn an_unknown_notification_is_ignored() {
    let mut shim = ready();
    shim.notify("does/not_exist", json!({}))
        .unwrap_or_else(|error| panic!("notify: {error}"));
    shim.assert_alive_and_silent("an unknown notification");
    shim.shutdown();
}

#[test]
fn a_request_before_initialize_is_refused() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let params = shim.tool_params("echo", json!({"text": "too early"}));
    let reply = shim.call("tool/call", params);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32600, "{}", reply.frame.raw);
    assert_eq!(error.message, "initialize must be the first request");
    shim.initialize();
    shim.assert_alive_and_silent("initialize after a refused request");
    shim.shutdown();
}

#[test]
fn a_second_initialize_is_refused() {
    let mut shim = ready();
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32600, "{}", reply.frame.raw);
    assert_eq!(error.message, "initialize must be the first request");
    shim.assert_alive_and_silent("a second initialize");
    shim.shutdown();
}

#[test]
fn a_duplicate_in_flight_id_is_refused() {
    let mut shim = ready();
    let id = 7_000;
    let slow = shim.tool_params("sleep", json!({"ms": 3_000}));
    shim.request_with_id(id, "tool/call", slow)
        .unwrap_or_else(|error| panic!("send sleep: {error}"));
    let echo = shim.tool_params("echo", json!({"text": "duplicate"}));
    shim.request_with_id(id, "tool/call", echo)
        .unwrap_or_else(|error| panic!("send duplicate: {error}"));
    let first = shim.reply(id);
    let error = expect_error(&first);
    assert_eq!(error.code, -32600, "{}", first.frame.raw);
    assert_eq!(error.message, "duplicate active request id");
    let second = shim.reply(id);
    assert_eq!(
        expect_result(&second)["is_error"],
        false,
        "{}",
        second.frame.raw
    );
    shim.assert_alive_and_silent("a duplicate id");
    shim.shutdown();
}
