//! Issue 17, hole 7: calls a guest leaves blocked in the host (opening a
//! FIFO that has no other end) cannot pile up threads. wasmtime-wasi runs
//! them on tokio's blocking pool and a cancelled call's thread stays
//! blocked, so each runtime's pool is capped at `MAX_BLOCKING_THREADS`:
//! repeated cancels leave at most that many threads behind, later
//! filesystem calls end at their deadlines, other work goes on, and the
//! process still exits. Reads cannot block the same way: wasmtime-wasi
//! reads files with `pread`, which a FIFO refuses at once.

use crate::support::{EXIT_AFTER_EOF, Shim, expect_error, expect_result, probe_manifest};
use octet_hostsim::ApiVersion;
use octet_wasm::protocol::requests::lanes::MAX_BLOCKING_THREADS;
use serde_json::json;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

/// More cancels than the cap, so an uncapped pool would show.
const CANCELS: usize = 3 * MAX_BLOCKING_THREADS;
const CAP_REACHED: &str = "the runtime's threads for blocking host calls (filesystem, name lookups) reached their cap; further calls wait for one to finish, and a call that never finishes (a FIFO, a device) holds its thread for good";

fn mkfifo(path: &Path) {
    let c_path = CString::new(path.as_os_str().as_bytes()).expect("no NUL in the path");
    // SAFETY: a valid NUL-terminated path; mkfifo has no other inputs.
    let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

/// Live threads of the shim.
fn threads(shim: &Shim) -> usize {
    std::fs::read_dir(format!("/proc/{}/task", shim.pid()))
        .expect("the shim's /proc entry")
        .count()
}

/// One FIFO per way of blocking, so a reader and a writer never meet:
/// `read_file` opens read-only and waits for a writer, `write_file` opens
/// write-only and waits for a reader.
fn blocking_call(shim: &Shim, round: usize) -> (&'static str, serde_json::Value) {
    if round.is_multiple_of(2) {
        let path = shim.workspace.join("read.fifo");
        ("read_file", json!({"path": path.to_string_lossy()}))
    } else {
        let path = shim.workspace.join("write.fifo");
        (
            "write_file",
            json!({"path": path.to_string_lossy(), "text": "never read"}),
        )
    }
}

fn make_fifos(shim: &Shim) {
    mkfifo(&shim.workspace.join("read.fifo"));
    mkfifo(&shim.workspace.join("write.fifo"));
}

fn assert_within_cap(shim: &Shim, baseline: usize, after: &str) {
    let now = threads(shim);
    assert!(
        now <= baseline + MAX_BLOCKING_THREADS,
        "{now} threads after {after} (baseline {baseline}, cap {MAX_BLOCKING_THREADS})"
    );
}

#[test]
fn cancelled_blocking_calls_leave_at_most_the_cap_on_the_pool() {
    // API 0.2: tool calls run on the pool runtime, cancelled by the host.
    let mut shim = Shim::probe_with_args(
        probe_manifest(ApiVersion::V0_2),
        &[
            "--deadline-ms",
            "cancel_grace=50",
            "--deadline-ms",
            "request=2000",
        ],
    );
    make_fifos(&shim);
    shim.initialize();
    expect_result(&shim.tool("echo", json!({"text": "warm"})));
    let baseline = threads(&shim);
    for round in 0..CANCELS {
        let (tool, arguments) = blocking_call(&shim, round);
        let id = shim.send_tool(tool, arguments);
        std::thread::sleep(Duration::from_millis(50));
        shim.cancel(id, "user").expect("cancel");
        let reply = shim.reply(id);
        assert_eq!(
            expect_error(&reply).code,
            -32800,
            "round {round}: {}",
            reply.frame.raw
        );
        assert_within_cap(&shim, baseline, &format!("{} cancels", round + 1));
    }
    shim.stderr()
        .wait_for(Duration::from_secs(10), |line| {
            line.message() == Some(CAP_REACHED) && line.field("runtime") == Some(&json!("pool"))
        })
        .expect("the shim says when the pool reached its cap");
    // Work on the primary instance (another runtime) goes on.
    let context = shim.context();
    let stats = shim.call(
        "command/execute",
        json!({"name": "stats", "arguments": [], "context": context}),
    );
    expect_result(&stats);
    // A filesystem call on the saturated pool ends at its deadline.
    std::fs::write(shim.workspace.join("plain.txt"), "plain").unwrap();
    let path = shim.workspace.join("plain.txt");
    let reply = shim.tool("read_file", json!({"path": path.to_string_lossy()}));
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], true, "{}", reply.frame.raw);
    assert!(reply.frame.raw.contains("deadline"), "{}", reply.frame.raw);
    assert_within_cap(&shim, baseline, "a call queued behind blocked ones");
    shim.shutdown();
}

#[test]
fn calls_past_their_deadline_leave_at_most_the_cap_on_the_protocol_runtime() {
    // API 0.1: every call runs on the primary instance, on the protocol
    // thread's runtime, and ends at the shim's own deadline.
    let mut shim = Shim::probe_with_args(
        probe_manifest(ApiVersion::V0_1),
        &["--deadline-ms", "request=400"],
    );
    make_fifos(&shim);
    shim.initialize();
    expect_result(&shim.tool("echo", json!({"text": "warm"})));
    let baseline = threads(&shim);
    for round in 0..CANCELS {
        let (tool, arguments) = blocking_call(&shim, round);
        let reply = shim.tool(tool, arguments);
        let result = expect_result(&reply);
        assert_eq!(
            result["is_error"], true,
            "round {round}: {}",
            reply.frame.raw
        );
        assert_within_cap(&shim, baseline, &format!("{} expired calls", round + 1));
    }
    shim.stderr()
        .wait_for(Duration::from_secs(10), |line| {
            line.message() == Some(CAP_REACHED) && line.field("runtime") == Some(&json!("protocol"))
        })
        .expect("the shim says when the protocol runtime reached its cap");
    // Threads stuck in the host do not hold the process at end of input.
    shim.close_stdin();
    let status = shim.exit_status(EXIT_AFTER_EOF);
    assert_eq!(status.code(), Some(0));
}

#[test]
fn reading_a_fifo_fails_at_once_instead_of_blocking() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    make_fifos(&shim);
    shim.initialize();
    let path = shim.workspace.join("read.fifo");
    let started = std::time::Instant::now();
    // Opened read-write, the FIFO opens at once; the read is a `pread`.
    let reply = shim.tool("fifo_read", json!({"path": path.to_string_lossy()}));
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], true, "{}", reply.frame.raw);
    assert!(reply.frame.raw.contains("read "), "{}", reply.frame.raw);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "answered by the guest, not by the 29 s deadline"
    );
    shim.shutdown();
}
