//! A command or hook that fails answers a message that says why: the
//! guest's own text as the `-32603` message (bounded), the whole text in
//! the shim's log. (The Python SDK answers octet's bare "internal error"
//! itself, for parity with octet's SDK: `python_compat`.)

use crate::support::{LOG_TIMEOUT, Shim, expect_error, probe_manifest};
use octet_hostsim::ApiVersion;
use serde_json::json;

fn ready() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    shim
}

fn stats(shim: &mut Shim, arguments: &[&str]) -> octet_hostsim::Reply {
    let context = shim.context();
    shim.call(
        "command/execute",
        json!({"name": "stats", "arguments": arguments, "context": context}),
    )
}

#[test]
fn a_failing_command_says_why() {
    let mut shim = ready();
    let reply = stats(&mut shim, &["fail", "the", "index", "is", "gone"]);
    assert_eq!(
        reply.frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32603,"message":"the index is gone"}}}}"#,
            reply.frame.response_id().unwrap()
        )
    );
    shim.stderr()
        .wait_for(LOG_TIMEOUT, |line| {
            line.text.contains("request handler failed") && line.text.contains("the index is gone")
        })
        .expect("the failure is logged for the author");
    shim.assert_alive_and_silent("a failing command");
    shim.shutdown();
}

#[test]
fn a_failing_hook_says_why() {
    let mut shim = ready();
    let context = shim.context();
    let reply = shim.call(
        "hook/run",
        json!({"hook": "after_response", "payload": {"probe_fail": "no transcript to summarise"},
               "context": context}),
    );
    let error = expect_error(&reply);
    assert_eq!(error.code, -32603, "{}", reply.frame.raw);
    assert_eq!(error.message, "no transcript to summarise");
    shim.assert_alive_and_silent("a failing hook");
    shim.shutdown();
}

#[test]
fn a_long_or_empty_failure_is_bounded_and_never_blank() {
    let mut shim = Shim::probe_with(probe_manifest(ApiVersion::V0_2));
    shim.initialize();
    let long = "é".repeat(5_000);
    let reply = stats(&mut shim, &["fail", &long]);
    let error = expect_error(&reply);
    // The protocol caps error messages at 4 KiB; the log keeps them whole.
    assert!(
        error.message.len() <= 4_096 && error.message.starts_with("éé"),
        "a 10,000-byte failure message on the wire: {} bytes",
        error.message.len()
    );
    let reply = stats(&mut shim, &["fail"]);
    assert_eq!(expect_error(&reply).message, "internal error");
    shim.assert_alive_and_silent("bounded failures");
    shim.shutdown();
}
