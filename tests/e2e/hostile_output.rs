//! Issue 17, hole 6: a guest cannot make the shim write without end.
//!
//! Everything guest-driven on stderr (its stdout and stderr, `log` records,
//! trap reports) shares one process budget (64 KiB/s, 256 KiB burst, 4 MiB
//! in all) with lines of at most 16 KiB, and drops are counted in summary
//! records. Reverse notifications (bounded in count and bytes, dropping
//! past a bound) are `hostile_streams`'s.

use crate::support::{EXIT_AFTER_EOF, Shim, expect_result, tool_text};
use octet_hostsim::{ApiVersion, StderrLine};
use octet_wasm::log::MAX_LINE_BYTES;
use octet_wasm::log::budget::{BURST_BYTES, RATE_BYTES_PER_SECOND};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const SUMMARY: &str = "guest diagnostics over budget; dropped and counted";
/// Records the shim writes on the guest's behalf (beside `source: guest`).
const GUEST_DRIVEN: &[&str] = &[
    "guest output",
    "guest trapped",
    "guest failed",
    "guest instance discarded; the next request gets a fresh one (its in-memory state is lost)",
    "the guest returned an invalid result",
];

fn guest_driven(line: &StderrLine) -> bool {
    line.field("source") == Some(&json!("guest"))
        || line.message().is_some_and(|m| GUEST_DRIVEN.contains(&m))
}

/// Bytes of guest-driven lines on stderr so far, newlines included.
fn guest_bytes(shim: &Shim) -> u64 {
    shim.stderr()
        .lines()
        .iter()
        .filter(|line| guest_driven(line))
        .map(|line| line.text.len() as u64 + 1)
        .sum()
}

/// What the budget can have let through since `started` (before the shim
/// was spawned, so the budget's own clock started later): the burst plus
/// the rate for the elapsed time, rounded up to a whole second.
fn allowed_since(started: Instant) -> u64 {
    BURST_BYTES + RATE_BYTES_PER_SECOND * (started.elapsed().as_secs() + 1)
}

fn summaries(shim: &Shim) -> Vec<StderrLine> {
    shim.stderr()
        .lines()
        .into_iter()
        .filter(|line| line.message() == Some(SUMMARY))
        .collect()
}

fn field_u64(line: &StderrLine, name: &str) -> u64 {
    line.field(name)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{name} missing in {}", line.text))
}

/// The summary of `phase`, waiting for it.
fn wait_summary(shim: &Shim, phase: &str) -> StderrLine {
    shim.stderr()
        .wait_for(Duration::from_secs(10), |line| {
            line.message() == Some(SUMMARY) && line.field("phase") == Some(&json!(phase))
        })
        .unwrap_or_else(|| {
            panic!(
                "no {phase} summary; summaries: {:?}",
                summaries(shim)
                    .iter()
                    .map(|l| l.text.clone())
                    .collect::<Vec<_>>()
            )
        })
}

fn assert_lines_bounded(shim: &Shim) {
    for line in shim.stderr().lines() {
        assert!(
            line.text.len() <= MAX_LINE_BYTES,
            "a {} byte stderr line: {}…",
            line.text.len(),
            &line.text[..200.min(line.text.len())]
        );
    }
}

#[test]
fn a_thousand_long_log_records_stay_within_the_process_budget() {
    let started = Instant::now();
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let reply = shim.tool("log_flood", json!({"count": 1000, "bytes": 16_000}));
    assert_eq!(
        tool_text(&reply),
        "logged 1000 records",
        "{}",
        reply.frame.raw
    );
    let started_summary = wait_summary(&shim, "started");
    assert_eq!(started_summary.field("limit"), Some(&json!("rate")));
    shim.assert_alive_and_silent("a log flood");
    shim.shutdown();
    let exit = wait_summary(&shim, "exit");
    let written = shim
        .stderr()
        .lines()
        .iter()
        .filter(|line| line.field("source") == Some(&json!("guest")))
        .count() as u64;
    assert_eq!(
        written + field_u64(&exit, "total_dropped_records"),
        1000,
        "every record is either written or counted: {}",
        exit.text
    );
    assert!(
        written >= BURST_BYTES / 16_100,
        "the burst got through: {written}"
    );
    let bytes = guest_bytes(&shim);
    assert!(
        bytes <= allowed_since(started),
        "{bytes} guest bytes on stderr in {:?}",
        started.elapsed()
    );
    assert_lines_bounded(&shim);
}

#[test]
fn one_huge_log_line_is_cut_to_the_line_bound() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    for in_fields in [false, true] {
        let reply = shim.tool(
            "log_flood",
            json!({"count": 1, "bytes": 2 << 20, "in_fields": in_fields}),
        );
        assert_eq!(tool_text(&reply), "logged 1 records");
        let line = shim
            .stderr()
            .wait_for(Duration::from_secs(10), |line| {
                line.field("source") == Some(&json!("guest"))
                    && (line.field("payload").is_some() == in_fields)
            })
            .expect("the cut record");
        assert!(
            line.text.len() <= MAX_LINE_BYTES,
            "{} bytes",
            line.text.len()
        );
        let truncated = line.field("truncated").expect("a truncation marker");
        let line_bytes = truncated["line_bytes"].as_u64().unwrap();
        let cut = truncated["cut_bytes"].as_u64().unwrap();
        assert!(line_bytes > 2 << 20, "{}", line.text.len());
        assert_eq!(
            line_bytes - cut,
            line.text.len() as u64 - truncated_len(&line)
        );
        let kept = if in_fields {
            line.field("payload")
        } else {
            line.field("message")
        };
        assert!(
            kept.and_then(Value::as_str)
                .is_some_and(|text| text.starts_with("llll") && text.ends_with('…')),
            "{}",
            &line.text[..200]
        );
    }
    shim.assert_alive_and_silent("two huge log lines");
    shim.shutdown();
}

/// The length of `,"truncated":{...}` in the line (added after the cut).
fn truncated_len(line: &StderrLine) -> u64 {
    let marker = format!(",\"truncated\":{}", line.field("truncated").unwrap());
    marker.len() as u64
}

#[test]
fn a_flood_without_newlines_is_one_cut_record_per_stream() {
    // API 0.1: one instance, so the exit that follows ends exactly the
    // instance that printed (its unfinished lines are logged then).
    let mut shim = Shim::probe(ApiVersion::V0_1);
    shim.initialize();
    for stream in ["stdout", "stderr"] {
        let reply = shim.tool(&format!("{stream}_flood"), json!({"bytes": 2_000_000}));
        assert_eq!(
            tool_text(&reply),
            format!("wrote 2000000 bytes to {stream}")
        );
    }
    let before = shim.stderr().total_bytes();
    shim.tool("exit", json!({"code": 3}));
    for stream in ["stdout", "stderr"] {
        let line = shim
            .stderr()
            .wait_for(Duration::from_secs(10), |line| {
                line.message() == Some("guest output")
                    && line.field("stream") == Some(&json!(stream))
                    && line.field("cut_bytes").is_some()
            })
            .unwrap_or_else(|| panic!("no cut {stream} record"));
        let kept = line.field("text").and_then(Value::as_str).unwrap().len() as u64;
        assert_eq!(field_u64(&line, "line_bytes"), 2_000_000);
        assert_eq!(
            field_u64(&line, "cut_bytes"),
            2_000_000 - kept,
            "{}",
            &line.text[..100]
        );
        assert!(line.text.len() <= MAX_LINE_BYTES);
    }
    let written = shim.stderr().total_bytes() - before;
    assert!(
        written < 4 * MAX_LINE_BYTES as u64,
        "4 MB of guest output cost {written} bytes of stderr"
    );
    shim.assert_alive_and_silent("stdout and stderr floods");
    shim.shutdown();
}

#[test]
fn a_trap_loop_shares_one_budget_across_replaced_instances() {
    const ROUNDS: usize = 30;
    let started = Instant::now();
    let mut shim = Shim::probe(ApiVersion::V0_1);
    shim.initialize();
    for round in 0..ROUNDS {
        let reply = shim.tool("flood_then_trap", json!({"bytes": 100_000}));
        let result = expect_result(&reply);
        assert_eq!(
            result["is_error"], true,
            "round {round}: {}",
            reply.frame.raw
        );
    }
    wait_summary(&shim, "started");
    shim.assert_alive_and_silent("a trap loop");
    // End of input: the other way the process ends.
    shim.close_stdin();
    let status = shim.exit_status(EXIT_AFTER_EOF);
    assert_eq!(status.code(), Some(0));
    let exit = wait_summary(&shim, "exit");
    assert!(field_u64(&exit, "total_dropped_bytes") > 0, "{}", exit.text);
    let bytes = guest_bytes(&shim);
    assert!(
        bytes <= allowed_since(started),
        "{ROUNDS} traps wrote {bytes} guest bytes in {:?}",
        started.elapsed()
    );
    assert_lines_bounded(&shim);
}
