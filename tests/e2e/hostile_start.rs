//! A guest that spins or blocks while starting: in `describe` or `init`
//! (inside octet's 30 s `initialize` wait), and in the `init` of a fresh
//! instance that replaces a trapped one. The shim answers `initialize`
//! with a clear error before the host gives up, exits cleanly after the
//! host's shutdown, and never lets a replacement instance hold a lane.

use crate::support::{Shim, expect_error, expect_result, probe_manifest, tool_text};
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::ffi::CString;
use std::path::Path;
use std::time::{Duration, Instant};

/// octet's initialize timeout; the answer must come before it.
const HOST_INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

/// A probe whose workspace tells its next instance to misbehave (see
/// `tests/guests/probe/src/start.rs`).
fn probe_in_mode(mode: &str) -> Shim {
    let shim = Shim::probe_with(probe_manifest(ApiVersion::V0_2));
    set_mode(&shim.workspace, mode);
    shim
}

fn set_mode(workspace: &Path, mode: &str) {
    std::fs::write(workspace.join(".probe-start"), mode).expect("write the probe's mode file");
    if mode.starts_with("block-") {
        let fifo = CString::new(workspace.join(".probe-fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo has no other inputs.
        let made = unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) };
        assert!(
            made == 0
                || std::io::Error::last_os_error().kind() == std::io::ErrorKind::AlreadyExists,
            "mkfifo failed: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// Sends `initialize`, expects the shim's own error naming `step` in time,
/// then the host's shutdown: `{}` and exit status 0.
fn assert_start_refused(mode: &str, step: &str) {
    let started = Instant::now();
    let mut shim = probe_in_mode(mode);
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    let elapsed = started.elapsed();
    let error = expect_error(&reply);
    assert!(
        elapsed < HOST_INITIALIZE_TIMEOUT,
        "{mode}: the initialize answer took {elapsed:?}, past octet's 30 s"
    );
    assert_eq!(error.code, -32603, "{mode}: {}", reply.frame.raw);
    for needle in [step, "did not return", "30 s"] {
        assert!(
            error.message.contains(needle),
            "{mode}: {needle:?} not in the initialize error: {}",
            error.message
        );
    }
    shim.shutdown();
}

#[test]
fn a_describe_that_spins_is_answered_before_the_host_gives_up() {
    assert_start_refused("spin-describe", "describe");
}

#[test]
fn a_describe_blocked_in_a_fifo_is_answered_before_the_host_gives_up() {
    assert_start_refused("block-describe", "describe");
}

#[test]
fn an_init_that_spins_is_answered_before_the_host_gives_up() {
    assert_start_refused("spin-init", "init");
}

#[test]
fn an_init_blocked_in_a_fifo_is_answered_before_the_host_gives_up() {
    assert_start_refused("block-init", "init");
}

#[test]
fn a_replacement_instance_whose_init_spins_never_holds_the_lane() {
    // Concurrency 1 keeps every call on the primary lane, the one a stuck
    // replacement would block.
    let mut shim = Shim::probe_with_args(
        probe_manifest(ApiVersion::V0_2),
        &["--deadline-ms", "request=1500"],
    );
    let offer = shim.offer().max_concurrent_requests(1);
    let reply = shim.initialize_with(offer.to_json());
    expect_result(&reply);
    set_mode(&shim.workspace, "spin-init");
    let panic = shim.tool("panic", json!({}));
    assert_eq!(
        expect_result(&panic)["is_error"],
        true,
        "{}",
        panic.frame.raw
    );
    // The next two calls each need a fresh instance whose init spins: each
    // is answered at its deadline instead of waiting behind the other.
    for attempt in 0..2 {
        let started = Instant::now();
        let reply = shim.tool("echo", json!({"text": "hi"}));
        // A tool error result or a JSON-RPC error, as long as it says why.
        let text = match &reply.frame.outcome() {
            Some(Ok(result)) => {
                assert_eq!(
                    result["is_error"], true,
                    "attempt {attempt}: {}",
                    reply.frame.raw
                );
                tool_text(&reply)
            }
            _ => reply.frame.raw.clone(),
        };
        assert!(
            text.contains("did not return"),
            "attempt {attempt} does not say the fresh instance's init did not return: {text}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "attempt {attempt} took {:?}: {text}",
            started.elapsed()
        );
    }
    std::fs::remove_file(shim.workspace.join(".probe-start")).unwrap();
    shim.assert_alive_and_silent("replacement instances whose init spun");
    shim.shutdown();
}
