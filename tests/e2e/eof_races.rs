//! Requests followed at once by the end of input (docs/protocol.md#end-of-input):
//! end of input runs the same bounded drain as `shutdown`, so every
//! admitted request is answered (or cancelled) within it, an admitted
//! `shutdown` is acknowledged `{}`, and the process exits 0 — whatever the
//! timing. A submodule of `hello_world`, so `scripts/test` runs it against
//! every guest language.

use crate::support::{EXIT_AFTER_EOF, EXIT_AFTER_SHUTDOWN, Shim};
use serde_json::json;

/// Enough repetitions to catch a race that lost 39 of 40 tries before.
const ROUNDS: usize = 15;

fn ready() -> Shim {
    let mut shim = Shim::hello_world();
    shim.initialize();
    shim
}

fn exits_zero(shim: &mut Shim) {
    let status = shim.exit_status(EXIT_AFTER_EOF + EXIT_AFTER_SHUTDOWN);
    assert_eq!(status.code(), Some(0), "exit status after end of input");
}

#[test]
fn shutdown_then_eof_is_acknowledged_every_time() {
    for round in 0..ROUNDS {
        let mut shim = ready();
        let shutdown = shim.send_request("shutdown", json!({}));
        shim.close_stdin();
        let responses = shim.responses(&[shutdown], EXIT_AFTER_SHUTDOWN);
        assert_eq!(
            responses.outcome(shutdown).as_ref().ok(),
            Some(&json!({})),
            "round {round}: {}",
            responses.frame(shutdown).raw
        );
        exits_zero(&mut shim);
    }
}

#[test]
fn calls_then_shutdown_then_eof_are_all_answered() {
    for round in 0..ROUNDS {
        let mut shim = ready();
        let tool = shim.send_tool("hello_world", json!({"name": "Ada"}));
        let context = shim.context();
        let command = shim.send_request(
            "command/execute",
            json!({"name": "hello", "arguments": ["Ada"], "context": context}),
        );
        let shutdown = shim.send_request("shutdown", json!({}));
        shim.close_stdin();
        let responses = shim.responses(&[tool, command, shutdown], EXIT_AFTER_SHUTDOWN);
        for id in [tool, command] {
            assert!(
                responses.outcome(id).is_ok(),
                "round {round}: request {id} failed: {}",
                responses.frame(id).raw
            );
        }
        assert_eq!(
            responses.outcome(shutdown).as_ref().ok(),
            Some(&json!({})),
            "round {round}"
        );
        exits_zero(&mut shim);
    }
}

#[test]
fn calls_then_eof_are_all_answered() {
    for round in 0..ROUNDS {
        let mut shim = ready();
        let ids: Vec<u64> = (0..4)
            .map(|i| shim.send_tool("hello_world", json!({"name": format!("n{i}")})))
            .collect();
        shim.close_stdin();
        let responses = shim.responses(&ids, EXIT_AFTER_EOF);
        for id in &ids {
            let outcome = responses.outcome(*id);
            // Answered by the guest, or cancelled by the drain: never lost.
            if let Ok(result) = outcome {
                assert_eq!(result["is_error"], false, "round {round}: {result}");
            }
        }
        exits_zero(&mut shim);
    }
}

#[test]
fn a_call_after_shutdown_and_before_eof_is_refused_not_lost() {
    for round in 0..ROUNDS {
        let mut shim = ready();
        let shutdown = shim.send_request("shutdown", json!({}));
        let late = shim.send_tool("hello_world", json!({"name": "late"}));
        shim.close_stdin();
        let responses = shim.responses(&[shutdown, late], EXIT_AFTER_SHUTDOWN);
        let refused = responses.outcome(late).as_ref().err().map(|e| e.code);
        assert_eq!(
            refused,
            Some(-32000),
            "round {round}: {}",
            responses.frame(late).raw
        );
        assert_eq!(
            responses.outcome(shutdown).as_ref().ok(),
            Some(&json!({})),
            "round {round}"
        );
        exits_zero(&mut shim);
    }
}
