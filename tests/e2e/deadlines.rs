//! The shim's own deadlines (`--deadline-ms`): it answers for a runaway
//! guest before the host gives up (render 500 ms, requests 30 s,
//! docs/protocol.md#deadline-table) and replaces the instance, so the next
//! request works.

use crate::support::{HOST_GRACE, Shim, expect_error, expect_result, probe_manifest, tool_text};
use octet_hostsim::ApiVersion;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The host's `tool/render` wait (docs/protocol.md#deadline-table, via the
/// shim's default of 400 ms).
const HOST_RENDER_WAIT: Duration = Duration::from_millis(500);
/// The shim's default grace for a cancelled guest before it is interrupted.
const CANCEL_GRACE: Duration = Duration::from_millis(250);

fn probe(extra_args: &[&str]) -> Shim {
    let mut shim = Shim::probe_with_args(probe_manifest(ApiVersion::V0_2), extra_args);
    shim.initialize();
    shim
}

fn render_params(shim: &Shim, tool: &str, output: &str) -> Value {
    json!({
        "name": tool,
        "arguments": {},
        "output": output,
        "is_error": false,
        "context": shim.context(),
    })
}

/// Renders `spin` (whose renderer never returns) and checks the deadline
/// error; returns how long the answer took.
fn render_spin(shim: &mut Shim, deadline_ms: u64) -> Duration {
    let params = render_params(shim, "spin", "");
    let started = Instant::now();
    let reply = shim.call("tool/render", params);
    let elapsed = started.elapsed();
    let error = expect_error(&reply);
    assert_eq!(error.code, -32000, "{}", reply.frame.raw);
    assert_eq!(error.message, "request deadline exceeded");
    let data = error.data.clone().unwrap_or(Value::Null);
    assert_eq!(data["deadline_ms"], deadline_ms, "{}", reply.frame.raw);
    // Who can change it is the user, in the policy file: never a flag the
    // extension's own manifest controls.
    assert_eq!(
        data["raise_with"],
        "deadlines.render in ~/.config/octet-wasm/policy.toml"
    );
    elapsed
}

fn render_echo_works(shim: &mut Shim) {
    let params = render_params(shim, "echo", "hi");
    let reply = shim.call("tool/render", params);
    assert_eq!(
        *expect_result(&reply),
        json!({"segments": [{"text": "echo · hi", "style_role": "extension.probe.tool"}]}),
        "{}",
        reply.frame.raw
    );
}

#[test]
fn a_runaway_renderer_is_answered_before_the_host_gives_up() {
    let mut shim = probe(&["--deadline-ms", "render=200"]);
    for _ in 0..2 {
        let elapsed = render_spin(&mut shim, 200);
        assert!(
            elapsed < HOST_RENDER_WAIT,
            "render answered after {elapsed:?}; the host waits {HOST_RENDER_WAIT:?}"
        );
        // Renders share the primary instance: the interrupted one holds it
        // for the 250 ms cancel grace, longer than this 200 ms render
        // deadline, so a render sent right away would expire in the queue.
        std::thread::sleep(CANCEL_GRACE * 2);
        render_echo_works(&mut shim);
    }
    shim.shutdown();
}

#[test]
fn the_default_render_deadline_is_400_ms() {
    let mut shim = probe(&[]);
    let elapsed = render_spin(&mut shim, 400);
    assert!(
        elapsed < HOST_RENDER_WAIT + HOST_GRACE,
        "render answered after {elapsed:?}"
    );
    render_echo_works(&mut shim);
    shim.shutdown();
}

#[test]
fn a_tool_past_its_deadline_is_an_error_result_naming_it() {
    let mut shim = probe(&["--deadline-ms", "request=1000"]);
    for (tool, arguments) in [("spin", json!({})), ("sleep", json!({"ms": 5_000}))] {
        let started = Instant::now();
        let reply = shim.tool(tool, arguments);
        let elapsed = started.elapsed();
        let result = expect_result(&reply);
        // A tool failure the model can read, not a JSON-RPC error
        // (docs/protocol.md#tool-results).
        assert_eq!(result["is_error"], true, "{tool}: {}", reply.frame.raw);
        let text = tool_text(&reply);
        assert!(
            text.contains("deadline of 1000 ms")
                && text.contains(
                    "up to 29000 ms with `deadlines.request in ~/.config/octet-wasm/policy.toml`"
                ),
            "{tool}: {text}"
        );
        assert!(
            elapsed >= Duration::from_millis(900)
                && elapsed < Duration::from_millis(1_000) + HOST_GRACE,
            "{tool}: answered after {elapsed:?}"
        );
        shim.assert_alive_and_silent("a tool deadline");
    }
    shim.shutdown();
}

#[test]
fn the_deadline_leaves_other_calls_alone() {
    let mut shim = probe(&["--deadline-ms", "request=1000"]);
    let slow = shim.send_tool("spin", json!({}));
    let quick = shim.send_tool("sleep_then_echo", json!({"ms": 200, "text": "in time"}));
    let responses = shim.responses(&[slow, quick], Duration::from_secs(10));
    assert_eq!(responses.order, [quick, slow]);
    let quick = responses
        .outcome(quick)
        .as_ref()
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(quick["is_error"], false);
    let slow = responses
        .outcome(slow)
        .as_ref()
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(slow["is_error"], true);
    shim.shutdown();
}
