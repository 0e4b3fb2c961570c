//! Issue 23, parts 5 and 6, through the real binary with attacker guests.
//!
//! - API 0.4 provider headers are HTTP field values, counted as the frame
//!   carries them: 300,000 empty values and control characters are refused
//!   with an error naming the header and the rule, and the extension keeps
//!   serving; obs-text and inner tabs pass.
//! - Reverse notifications are bounded in bytes as well as in count, and a
//!   bound drops instead of failing: a flood of megabyte notifications
//!   reaches the host within the byte budget, a burst past 200 a second
//!   still gets the tool its result, and the shim's warnings count every
//!   drop.

use crate::support::{LOG_TIMEOUT, Shim, expect_error, expect_result, tool_text};
use octet_hostsim::{ApiVersion, FrameKind, Reply, StderrLine};
use octet_wasm::protocol::imports::notices::{
    MAX_NOTICE_BYTES_PER_REQUEST, MAX_NOTICES_PER_REQUEST, NOTICE_BURST_BYTES,
    NOTICE_BYTES_PER_SECOND, NOTICES_PER_SECOND,
};
use octet_wasm::protocol::results::provider_headers::MAX_HEADER_VALUES;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const DROPPED: &str =
    "reverse notifications over budget; dropped and counted (the guest was told they were sent)";

fn headers_hook(shim: &mut Shim, name: &str, values: &[&str], repeat: usize) -> Reply {
    let context = shim.context();
    let payload = json!({
        "operation_id": "op-1",
        "model": {"id": "m-large", "provider": "p", "api": "a"},
        "headers": {"accept": "application/json"},
        "mode": "given",
        "header": {"name": name, "values": values, "repeat": repeat},
    });
    shim.call(
        "hook/run",
        json!({"hook": "before_provider_headers", "payload": payload, "context": context}),
    )
}

/// The hook's refusal: the request's -32603, nothing else written, a short
/// frame whatever the guest returned.
fn refused(reply: &Reply) -> String {
    assert!(reply.before.is_empty(), "frames before the answer");
    assert!(
        reply.frame.raw.len() < 4096,
        "{} bytes",
        reply.frame.raw.len()
    );
    let error = expect_error(reply);
    assert_eq!(error.code, -32603, "{}", reply.frame.raw);
    assert!(
        error.message.starts_with("invalid handler result: "),
        "{}",
        reply.frame.raw
    );
    error.message.clone()
}

fn assert_serving(shim: &mut Shim) {
    let reply = shim.tool("plain", json!({}));
    assert!(reply.before.is_empty(), "frames before the reply");
    assert_eq!(tool_text(&reply), "plain", "{}", reply.frame.raw);
}

#[test]
fn three_hundred_thousand_empty_header_values_are_refused_and_serving_goes_on() {
    let (mut shim, _dir) = crate::api_04_services::start(ApiVersion::V0_4);
    shim.initialize();
    let reply = headers_hook(&mut shim, "x-many", &[""], 300_000);
    let message = refused(&reply);
    assert!(
        message.contains(&format!(
            "provider_headers carry 300000 values; the limit is {MAX_HEADER_VALUES} over all headers"
        )),
        "{message}"
    );
    // Within the count, past 64 KiB only as the frame counts: 1,024 values
    // of 62 bytes are 63,494 bytes of name and values, 66,572 of JSON.
    let long = "v".repeat(62);
    let reply = headers_hook(&mut shim, "x-long", &[&long], MAX_HEADER_VALUES);
    let message = refused(&reply);
    assert!(
        message.contains(
            "provider_headers take 66572 bytes as JSON in the frame; the limit is 64 KiB"
        ),
        "{message}"
    );
    assert_serving(&mut shim);
    shim.shutdown();
}

#[test]
fn header_values_with_control_characters_are_refused_by_name() {
    let (mut shim, _dir) = crate::api_04_services::start(ApiVersion::V0_4);
    shim.initialize();
    for (value, control, at) in [
        ("tab\u{b}vt", "0x0B (VT)", 3),
        ("\u{1b}[2J", "0x1B (ESC)", 0),
        ("del\u{7f}", "0x7F (DEL)", 3),
        ("nul\0", "0x00 (NUL)", 3),
        ("1\r\nx-injected: 1", "0x0D (CR)", 1),
        ("1\nx-injected: 1", "0x0A (LF)", 1),
    ] {
        let reply = headers_hook(&mut shim, "x-ctl", &["fine", value], 1);
        let message = refused(&reply);
        let expected = format!(
            "value 2 of provider header x-ctl is not an HTTP field value (RFC 9110 §5.5): it holds the control character {control} at byte {at}"
        );
        assert!(message.contains(&expected), "{value:?}: {message}");
    }
    let reply = headers_hook(&mut shim, "x-pad", &[" padded"], 1);
    assert!(refused(&reply).contains("starts or ends with a space or tab"));
    assert_serving(&mut shim);
    shim.shutdown();
}

#[test]
fn a_field_value_with_obs_text_and_inner_tabs_is_forwarded() {
    let (mut shim, _dir) = crate::api_04_services::start(ApiVersion::V0_4);
    shim.initialize();
    let value = "gzip;\tq=1, café \u{ff}";
    let reply = headers_hook(&mut shim, "x-ok", &[value, ""], 1);
    let result = expect_result(&reply);
    assert_eq!(
        result["provider_headers"],
        json!({"x-ok": [value, ""]}),
        "{}",
        reply.frame.raw
    );
    shim.shutdown();
}

/// `notice_flood` in one call: the tool's text, its `is_error`, and the
/// frames and bytes (line feeds included) of `method` the host received.
fn flood(shim: &mut Shim, arguments: Value, method: &str) -> (String, usize, u64) {
    let reply = shim.tool("notice_flood", arguments);
    let frames: Vec<_> = reply
        .before
        .iter()
        .filter(
            |frame| matches!(&frame.kind, FrameKind::Notification { method: m, .. } if m == method),
        )
        .collect();
    let bytes = frames.iter().map(|f| f.raw.len() as u64 + 1).sum();
    let result = expect_result(&reply);
    assert_ne!(result["is_error"], true, "{}", &reply.frame.raw);
    (tool_text(&reply), frames.len(), bytes)
}

fn warnings(shim: &Shim) -> Vec<StderrLine> {
    shim.stderr()
        .lines()
        .into_iter()
        .filter(|line| line.message() == Some(DROPPED))
        .collect()
}

fn field_u64(line: &StderrLine, name: &str) -> u64 {
    line.field(name)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{name} missing in {}", line.text))
}

/// Waits for the warning that brings the total to `total` and checks that
/// the warnings add up to it and came at most once per interval.
fn assert_drops_logged(shim: &Shim, total: u64) {
    shim.stderr()
        .wait_for(LOG_TIMEOUT, |line| {
            line.message() == Some(DROPPED) && line.field("total_dropped") == Some(&json!(total))
        })
        .unwrap_or_else(|| {
            let seen: Vec<_> = warnings(shim).iter().map(|l| l.text.clone()).collect();
            panic!("no warning totalling {total} drops; warnings: {seen:?}")
        });
    let lines = warnings(shim);
    let sum: u64 = lines.iter().map(|l| field_u64(l, "dropped")).sum();
    assert_eq!(sum, total, "each drop is in exactly one warning");
    let last = lines.last().unwrap();
    assert_eq!(last.field("level"), Some(&json!("warning")));
    assert!(last.field("bound").and_then(Value::as_str).is_some());
}

/// Warnings come at most once a second: no more of them than seconds
/// since `started`, plus the flush after the last drop.
fn assert_once_a_second(shim: &Shim, started: Instant) {
    let count = warnings(shim).len() as u64;
    let seconds = started.elapsed().as_secs() + 2;
    assert!(count <= seconds, "{count} warnings in {seconds} s");
}

/// 1,000 notifications of about 1 MB each: a gigabyte asked for, at most
/// the burst plus the byte rate delivered, the tool's own answer intact.
#[test]
fn megabyte_notifications_reach_the_host_within_the_byte_budget() {
    let started = Instant::now();
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let (text, received, bytes) = flood(
        &mut shim,
        json!({"kind": "notify", "count": 1_000, "bytes": 1_000_000}),
        "notification",
    );
    let elapsed = started.elapsed().as_secs() + 1;
    assert_eq!(text, "sent 1000", "the guest's work went on");
    assert!(received >= 1, "a quiet process sends the first at once");
    assert!(
        bytes <= NOTICE_BURST_BYTES + NOTICE_BYTES_PER_SECOND * elapsed,
        "{bytes} bytes in {elapsed} s"
    );
    assert!(bytes <= MAX_NOTICE_BYTES_PER_REQUEST, "{bytes}");
    assert_drops_logged(&shim, 1_000 - received as u64);
    let last = warnings(&shim).pop().unwrap();
    assert_eq!(last.field("method"), Some(&json!("notification")));
    assert!(field_u64(&last, "total_dropped_bytes") >= 1_000_000 * (1_000 - received as u64));
    assert_once_a_second(&shim, started);
    shim.assert_alive_and_silent("a megabyte flood");
    shim.shutdown();
}

/// Past 200 a second every kind is dropped, never failed: the tool that
/// reports per item gets its result (octet's hello-world under a burst).
#[test]
fn a_burst_past_the_rate_drops_and_every_tool_gets_its_result() {
    let started = Instant::now();
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let mut dropped = 0;
    for (kind, method) in [
        ("notify", "notification"),
        ("status", "status/contribution"),
        ("context", "context/contribution"),
        ("output", "$/progress"),
        ("progress", "$/progress"),
    ] {
        std::thread::sleep(Duration::from_millis(1_100));
        let (text, received, _) = flood(&mut shim, json!({"kind": kind, "count": 2_000}), method);
        assert_eq!(text, "sent 2000", "{kind}");
        assert!(
            received >= NOTICES_PER_SECOND as usize && received < 2_000,
            "{kind}: {received} of 2000"
        );
        dropped += 2_000 - received as u64;
    }
    assert_drops_logged(&shim, dropped);
    assert_once_a_second(&shim, started);
    for _ in 0..3 {
        let reply = shim.tool("notify", json!({"message": "hello"}));
        assert_eq!(tool_text(&reply), "notified", "{}", reply.frame.raw);
    }
    shim.shutdown();
}

/// Within the rate, one request still stops at 1,000: the rest is dropped
/// and the next request counts anew.
#[test]
fn one_request_stops_at_its_count_and_the_next_counts_anew() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let count = MAX_NOTICES_PER_REQUEST as usize + 100;
    let (text, received, _) = flood(
        &mut shim,
        json!({"kind": "notify", "count": count, "pace": true}),
        "notification",
    );
    assert_eq!(text, format!("sent {count}"));
    assert_eq!(received, MAX_NOTICES_PER_REQUEST as usize);
    assert_drops_logged(&shim, 100);
    let last = warnings(&shim).pop().unwrap();
    assert_eq!(last.field("bound"), Some(&json!("request_count")));
    let reply = shim.tool("notify", json!({"message": "a new request counts anew"}));
    assert_eq!(tool_text(&reply), "notified", "{}", reply.frame.raw);
    assert_eq!(reply.before.len(), 1, "its notification was sent");
    shim.shutdown();
}
