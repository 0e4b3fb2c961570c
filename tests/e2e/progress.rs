//! `$/progress` (docs/protocol.md#progress): request ids, strictly
//! increasing sequences, all before the answer; nothing at all when the host
//! did not offer `request_progress` (writing it would be fatal to the host).

use crate::support::{Shim, expect_error, expect_result, raws, tool_text};
use octet_hostsim::{ApiVersion, Frame, HOST_OPTIONAL_FEATURES};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

fn ready() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    assert!(shim.features().contains("request_progress"));
    shim
}

/// The probe with an offer lacking `request_progress`; the offered
/// `progress_decoration` cannot be negotiated without it.
fn without_progress() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let offered: Vec<&str> = HOST_OPTIONAL_FEATURES
        .iter()
        .copied()
        .filter(|feature| !feature.starts_with("request_progress"))
        .collect();
    let params = shim.offer().optional_features(&offered).to_json();
    let result = expect_result(&shim.initialize_with(params)).clone();
    let features = &result["protocol"]["features"];
    for feature in ["request_progress", "progress_decoration"] {
        assert!(
            !features
                .as_array()
                .is_some_and(|items| items.contains(&json!(feature))),
            "{feature} negotiated without request_progress on offer: {result}"
        );
    }
    shim
}

/// Checks that `frames` are exactly `count` status events for `id`,
/// sequenced 1..=count.
fn assert_steps(frames: &[&Frame], id: u64, count: u64) {
    let sequences: Vec<u64> = frames
        .iter()
        .map(|frame| {
            assert_eq!(frame.method(), Some("$/progress"), "{}", frame.raw);
            assert_eq!(frame.params()["request_id"], id, "{}", frame.raw);
            frame.params()["sequence"].as_u64().unwrap_or(0)
        })
        .collect();
    assert_eq!(sequences, (1..=count).collect::<Vec<_>>(), "request {id}");
    for (i, frame) in frames.iter().enumerate() {
        let step = i as u64 + 1;
        assert_eq!(
            frame.params()["event"],
            json!({"type": "status", "message": "step", "current": step, "total": count}),
            "{}",
            frame.raw
        );
    }
}

#[test]
fn progress_precedes_the_result_with_increasing_sequences() {
    let mut shim = ready();
    let reply = shim.tool("progress", json!({"count": 5}));
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(tool_text(&reply), "done");
    let frames: Vec<&Frame> = reply.before.iter().collect();
    assert_steps(&frames, id, 5);
    // Sequences restart per request.
    let reply = shim.tool("progress", json!({"count": 2}));
    let id = reply.frame.response_id().unwrap_or_default();
    let frames: Vec<&Frame> = reply.before.iter().collect();
    assert_steps(&frames, id, 2);
    // No progress, no frames.
    let reply = shim.tool("progress", json!({"count": 0}));
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    shim.shutdown();
}

#[test]
fn concurrent_requests_keep_separate_sequences() {
    let mut shim = ready();
    let counts = [40_u64, 30, 20, 10];
    let ids: Vec<u64> = counts
        .iter()
        .map(|count| shim.send_tool("progress", json!({"count": count})))
        .collect();
    // Reads every frame in order, so "before its answer" is checked across
    // the interleaving.
    let mut progress: HashMap<u64, Vec<Frame>> = HashMap::new();
    let mut answered: Vec<u64> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while answered.len() < ids.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = shim
            .recv(left)
            .unwrap_or_else(|error| panic!("waiting for progress calls: {error}"));
        if let Some(id) = frame.response_id() {
            answered.push(id);
            continue;
        }
        let id = frame.params()["request_id"].as_u64().unwrap_or_default();
        assert!(
            !answered.contains(&id),
            "progress after the answer: {}",
            frame.raw
        );
        progress.entry(id).or_default().push(frame);
    }
    for (id, count) in ids.iter().zip(counts) {
        let frames: Vec<&Frame> = progress
            .get(id)
            .map(|f| f.iter().collect())
            .unwrap_or_default();
        assert_steps(&frames, *id, count);
    }
    shim.shutdown();
}

#[test]
fn progress_then_failure_and_decoration() {
    let mut shim = ready();
    let reply = shim.tool("progress_then_fail", json!({"count": 2}));
    let id = reply.frame.response_id().unwrap_or_default();
    let frames: Vec<&Frame> = reply.before.iter().collect();
    assert_steps(&frames, id, 2);
    assert_eq!(expect_result(&reply)["is_error"], true);
    assert_eq!(tool_text(&reply), "failed after progress");

    let reply = shim.tool("decorate", json!({"label": "building", "detail": "step 1"}));
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(tool_text(&reply), "decorated");
    assert_eq!(
        raws(&reply.before),
        [format!(
            r#"{{"jsonrpc":"2.0","method":"$/progress","params":{{"request_id":{id},"sequence":1,"event":{{"type":"decoration","label":"building","detail":"step 1"}}}}}}"#
        )]
    );
    shim.shutdown();
}

#[test]
fn without_the_feature_nothing_is_written_and_the_guest_is_refused() {
    let mut shim = without_progress();
    for (tool, arguments) in [
        ("progress", json!({"count": 3})),
        ("decorate", json!({"label": "building"})),
    ] {
        let reply = shim.tool(tool, arguments);
        assert!(
            reply.before.is_empty(),
            "{tool}: frames written without request_progress: {:?}",
            raws(&reply.before)
        );
        // The refusal reaches the guest as -32601, which the probe passes on
        // as its own answer.
        let error = expect_error(&reply);
        assert_eq!(error.code, -32601, "{tool}: {}", reply.frame.raw);
        assert!(
            error.message.contains("request_progress"),
            "{tool}: {}",
            reply.frame.raw
        );
        // The author learns the call that declares it, in each SDK's spelling.
        for declaration in [
            "Rust `ext.uses_progress()`",
            "JavaScript `ext.usesProgress()`",
            "C `octet_uses_progress(ext)`",
            "`Extension(supported_features=...)`",
        ] {
            assert!(
                error.message.contains(declaration),
                "{tool}: no {declaration}: {}",
                reply.frame.raw
            );
        }
    }
    // No progress requested: the call still works.
    let reply = shim.tool("progress", json!({"count": 0}));
    assert_eq!(tool_text(&reply), "done");
    shim.assert_alive_and_silent("refused progress");
    shim.shutdown();
}

#[test]
fn no_progress_follows_a_cancellation() {
    // A request cancelled mid-progress: no progress frame may follow its
    // -32800 answer (docs/protocol.md#writer; the host only logs such frames,
    // so the order is checked here).
    let mut shim = ready();
    let id = shim.send_tool("progress", json!({"count": 100_000}));
    // Wait for the first progress frame, then cancel.
    let first = shim
        .recv(Duration::from_secs(30))
        .unwrap_or_else(|error| panic!("first progress frame: {error}"));
    assert_eq!(first.method(), Some("$/progress"), "{}", first.raw);
    shim.cancel(id, "user")
        .unwrap_or_else(|error| panic!("cancel: {error}"));
    let reply = shim.reply(id);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32800, "{}", reply.frame.raw);
    let mut last = first.params()["sequence"].as_u64().unwrap_or(0);
    for frame in &reply.before {
        let sequence = frame.params()["sequence"].as_u64().unwrap_or(0);
        assert!(sequence > last, "sequence went from {last} to {sequence}");
        last = sequence;
    }
    let next = shim.tool("echo", json!({"text": "after"}));
    let stray: Vec<&Value> = next
        .before
        .iter()
        .map(|frame| &frame.value)
        .filter(|value| value["params"]["request_id"] == id)
        .collect();
    assert!(stray.is_empty(), "progress after the answer: {stray:?}");
    assert_eq!(tool_text(&next), "after");
    shim.shutdown();
}
