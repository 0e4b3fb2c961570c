//! The hello-delay example (`examples/hello-delay`: API 0.2, one `hello` tool
//! with an optional cancellable delay, the cancellation reference), every
//! documented behaviour through the real binary, against the host's real
//! 21-feature offer.

use crate::support::{
    EXIT_AFTER_SHUTDOWN, HOST_GRACE, SHUTDOWN_ACK, Shim, expect_error, expect_result, protocol,
    raws, tool_text,
};
use serde_json::json;
use std::time::{Duration, Instant};

fn ready() -> Shim {
    let mut shim = Shim::hello_delay();
    shim.initialize();
    shim
}

#[test]
fn negotiates_exactly_the_required_features() {
    let mut shim = Shim::hello_delay();
    let result = shim.initialize();
    let protocol = protocol(&result);
    assert_eq!(protocol["version"], "0.2", "{result}");
    assert_eq!(
        protocol["features"],
        json!(["request_cancellation", "content_parts"]),
        "{result}"
    );
    // The guest declares no concurrency: the SDK default of 1.
    assert_eq!(
        protocol["limits"],
        json!({"max_concurrent_requests": 1}),
        "{result}"
    );
    assert!(
        protocol.get("lifecycle_events").is_none(),
        "no lifecycle subscription without handlers: {result}"
    );
    assert_eq!(
        result["tools"],
        json!([{
            "name": "hello",
            "description": "Return a local greeting",
            "parameters": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "maxLength": 256},
                    "delay_ms": {"type": "integer", "minimum": 0, "maximum": 5000, "default": 0},
                },
                "required": ["name"],
                "additionalProperties": false,
            },
        }]),
        "{result}"
    );
    assert_eq!(result["commands"], json!([]), "{result}");
    shim.shutdown();
}

#[test]
fn unicode_passes_through_without_structured_content() {
    let mut shim = ready();
    let reply = shim.tool("hello", json!({"name": "host λ😀"}));
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    let result = expect_result(&reply);
    assert_eq!(
        *result,
        json!({
            "content": [{"type": "text", "text": "Hello, host λ😀!"}],
            "is_error": false,
            "metadata": {},
        }),
        "{}",
        reply.frame.raw
    );
    assert!(
        result.get("structured_content").is_none(),
        "structured_content must be omitted, not null: {}",
        reply.frame.raw
    );
    // The raw line carries the characters themselves or their escapes;
    // either way the decoded text is exact.
    assert_eq!(tool_text(&reply), "Hello, host λ😀!");
    shim.shutdown();
}

#[test]
fn a_bad_or_missing_name_is_invalid_params() {
    let mut shim = ready();
    for arguments in [json!({"name": false}), json!({}), json!({"delay_ms": 5})] {
        let reply = shim.tool("hello", arguments.clone());
        let error = expect_error(&reply);
        assert_eq!(error.code, -32602, "{arguments}: {}", reply.frame.raw);
    }
    // The process is unharmed.
    let reply = shim.tool("hello", json!({"name": "again"}));
    assert_eq!(tool_text(&reply), "Hello, again!");
    shim.shutdown();
}

#[test]
fn cancel_answers_quickly_and_the_next_call_succeeds() {
    let mut shim = ready();
    let pid = shim.pid();
    let id = shim.send_tool("hello", json!({"name": "x", "delay_ms": 5000}));
    // Let the call start waiting in the guest.
    std::thread::sleep(Duration::from_millis(200));
    let cancelled_at = Instant::now();
    shim.cancel(id, "user")
        .unwrap_or_else(|error| panic!("cancel: {error}"));
    let reply = shim.reply(id);
    let waited = cancelled_at.elapsed();
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    assert_eq!(
        reply.frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32800,"message":"request cancelled","data":{{"reason":"user"}}}}}}"#
        )
    );
    assert!(
        waited < HOST_GRACE,
        "cancellation answered after {waited:?} (the host kills at 2 s)"
    );
    // Same process, next call works.
    let reply = shim.tool("hello", json!({"name": "after"}));
    assert_eq!(tool_text(&reply), "Hello, after!");
    assert_eq!(shim.pid(), pid);
    assert!(
        shim.try_exit_status()
            .unwrap_or_else(|error| panic!("{error}"))
            .is_none(),
        "the process exited"
    );
    shim.shutdown();
}

#[test]
fn shutdown_cancels_a_running_call_and_exits_zero() {
    let mut shim = ready();
    let call = shim.send_tool("hello", json!({"name": "x", "delay_ms": 5000}));
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let shutdown = shim.send_request("shutdown", json!({}));
    let responses = shim.responses(&[call, shutdown], SHUTDOWN_ACK);
    assert!(responses.others.is_empty(), "{:?}", raws(&responses.others));
    assert_eq!(
        responses.frame(call).raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{call},"error":{{"code":-32800,"message":"request cancelled","data":{{"reason":"shutdown"}}}}}}"#
        )
    );
    assert_eq!(
        responses.frame(shutdown).raw,
        format!(r#"{{"jsonrpc":"2.0","id":{shutdown},"result":{{}}}}"#)
    );
    assert_eq!(
        responses.order,
        [call, shutdown],
        "the call is answered before the acknowledgement"
    );
    let acked = responses.arrived[&shutdown] - started;
    assert!(acked < HOST_GRACE, "shutdown acknowledged after {acked:?}");
    let status = shim.exit_status(EXIT_AFTER_SHUTDOWN);
    assert_eq!(status.code(), Some(0), "exit status after shutdown");
    let rest = shim
        .read_to_eof(Duration::from_secs(5))
        .unwrap_or_else(|error| panic!("after shutdown: {error}"));
    assert!(rest.is_empty(), "frames after shutdown: {:?}", raws(&rest));
}

#[test]
fn a_cancelled_call_never_answered_twice() {
    // Cancel arrives after the result won the race: one answer only, and the
    // late cancellation is ignored (docs/protocol.md#host-cancellation).
    let mut shim = ready();
    let reply = shim.tool("hello", json!({"name": "quick"}));
    let id = reply.frame.response_id().unwrap_or_default();
    shim.cancel(id, "user")
        .unwrap_or_else(|error| panic!("cancel: {error}"));
    let reply = shim.tool("hello", json!({"name": "next"}));
    assert!(
        reply.before.is_empty(),
        "a late cancellation produced frames: {:?}",
        raws(&reply.before)
    );
    assert_eq!(tool_text(&reply), "Hello, next!");
    shim.shutdown();
}
