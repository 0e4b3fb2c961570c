//! `shutdown` and stdin EOF with work in flight (docs/protocol.md#shutdown):
//! every request is answered, the acknowledgement comes within the host's
//! 2 s ack stage, and the process exits 0.

use crate::support::{EXIT_AFTER_EOF, EXIT_AFTER_SHUTDOWN, HOST_GRACE, Shim, expect_result, raws};
use octet_hostsim::{ApiVersion, Frame};
use serde_json::json;
use std::time::{Duration, Instant};

fn ready() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    shim
}

fn cancelled(frame: &Frame, id: u64, reason: &str) {
    assert_eq!(
        frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32800,"message":"request cancelled","data":{{"reason":"{reason}"}}}}}}"#
        )
    );
}

/// Expects exit status 0 within `timeout` and nothing more on stdout.
fn exits_zero(shim: &mut Shim, timeout: Duration) {
    let status = shim.exit_status(timeout);
    assert_eq!(status.code(), Some(0), "exit status");
    let rest = shim
        .read_to_eof(Duration::from_secs(5))
        .unwrap_or_else(|error| panic!("after exit: {error}"));
    assert!(rest.is_empty(), "frames after the end: {:?}", raws(&rest));
}

#[test]
fn shutdown_answers_two_calls_in_flight_then_acknowledges() {
    let mut shim = ready();
    let calls = [
        shim.send_tool("sleep", json!({"ms": 5_000})),
        shim.send_tool("sleep", json!({"ms": 5_000})),
    ];
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let shutdown = shim.send_request("shutdown", json!({}));
    let responses = shim.responses(&[calls[0], calls[1], shutdown], HOST_GRACE * 2);
    assert!(responses.others.is_empty(), "{:?}", raws(&responses.others));
    for id in calls {
        cancelled(responses.frame(id), id, "shutdown");
    }
    assert_eq!(
        responses.frame(shutdown).raw,
        format!(r#"{{"jsonrpc":"2.0","id":{shutdown},"result":{{}}}}"#)
    );
    assert_eq!(
        responses.order.last(),
        Some(&shutdown),
        "the acknowledgement comes last"
    );
    for (id, at) in &responses.arrived {
        let after = *at - started;
        assert!(
            after < HOST_GRACE,
            "request {id} answered {after:?} after shutdown"
        );
    }
    exits_zero(&mut shim, EXIT_AFTER_SHUTDOWN);
}

#[test]
fn shutdown_with_a_guest_ignoring_cancellation() {
    // One instance: the spinning call holds the very instance whose
    // shutdown handler must run.
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let params = shim.offer().max_concurrent_requests(1).to_json();
    expect_result(&shim.initialize_with(params));
    let spin = shim.send_tool("spin", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let shutdown = shim.send_request("shutdown", json!({}));
    let responses = shim.responses(&[spin, shutdown], HOST_GRACE * 2);
    cancelled(responses.frame(spin), spin, "shutdown");
    assert_eq!(
        responses.frame(shutdown).raw,
        format!(r#"{{"jsonrpc":"2.0","id":{shutdown},"result":{{}}}}"#)
    );
    let acked = responses.arrived[&shutdown] - started;
    assert!(acked < HOST_GRACE, "acknowledged {acked:?} after shutdown");
    exits_zero(&mut shim, EXIT_AFTER_SHUTDOWN);
}

#[test]
fn a_long_cancel_grace_from_the_bundle_still_fits_the_ack_stage() {
    // The manifest asks for the longest grace the shim allows (clamped to
    // the user's ceiling): drain, grace and handler together must still be
    // acknowledged inside octet's 2 s.
    let mut shim = Shim::probe_with_args(
        crate::support::probe_manifest(ApiVersion::V0_2),
        &["--deadline-ms", "cancel_grace=1999"],
    );
    let params = shim.offer().max_concurrent_requests(1).to_json();
    expect_result(&shim.initialize_with(params));
    let spin = shim.send_tool("spin", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let shutdown = shim.send_request("shutdown", json!({}));
    let responses = shim.responses(&[spin, shutdown], HOST_GRACE * 2);
    cancelled(responses.frame(spin), spin, "shutdown");
    assert_eq!(responses.outcome(shutdown).as_ref().ok(), Some(&json!({})));
    let acked = responses.arrived[&shutdown] - started;
    assert!(acked < HOST_GRACE, "acknowledged {acked:?} after shutdown");
    exits_zero(&mut shim, EXIT_AFTER_SHUTDOWN);
}

#[test]
fn requests_while_draining_are_refused() {
    let mut shim = ready();
    let call = shim.send_tool("sleep", json!({"ms": 5_000}));
    let shutdown = shim.send_request("shutdown", json!({}));
    let late = shim.send_tool("echo", json!({"text": "too late"}));
    let again = shim.send_request("shutdown", json!({}));
    let responses = shim.responses(&[call, shutdown, late, again], HOST_GRACE * 2);
    let message = |id: u64| match responses.outcome(id) {
        Err(error) => (error.code, error.message.clone()),
        Ok(result) => panic!("request {id} succeeded while draining: {result}"),
    };
    assert_eq!(message(late), (-32000, "extension is draining".to_owned()));
    assert_eq!(
        message(again),
        (-32000, "extension is already draining".to_owned())
    );
    cancelled(responses.frame(call), call, "shutdown");
    assert_eq!(responses.outcome(shutdown).as_ref().ok(), Some(&json!({})));
    exits_zero(&mut shim, EXIT_AFTER_SHUTDOWN);
}

#[test]
fn stdin_eof_answers_the_call_in_flight_and_exits_zero() {
    let mut shim = ready();
    let call = shim.send_tool("sleep", json!({"ms": 10_000}));
    std::thread::sleep(Duration::from_millis(200));
    shim.close_stdin();
    // The shim drains for up to 2 s, then cancels what is left
    // (docs/protocol.md#end-of-input).
    let responses = shim.responses(&[call], EXIT_AFTER_EOF);
    cancelled(responses.frame(call), call, "transport_lost");
    exits_zero(&mut shim, EXIT_AFTER_EOF);
}

#[test]
fn stdin_eof_lets_a_short_call_finish() {
    let mut shim = ready();
    let call = shim.send_tool("sleep_then_echo", json!({"ms": 300, "text": "finished"}));
    shim.close_stdin();
    let responses = shim.responses(&[call], EXIT_AFTER_EOF);
    let result = responses
        .outcome(call)
        .as_ref()
        .unwrap_or_else(|error| panic!("the drained call failed: {error}"));
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": "finished"}])
    );
    exits_zero(&mut shim, EXIT_AFTER_EOF);
}
