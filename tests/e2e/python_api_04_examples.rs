//! octet's API 0.4 examples written in Python (`examples/<name>/python`,
//! built by `scripts/build-guests-python native-hello text-stats
//! cache-warming` against `octet:extension@0.4.0`), their transcripts
//! through the real binary: the expectations of the Rust ports'
//! (`api_04_examples.rs`), byte for byte where octet's documentation gives
//! the frames (docs/api-0.4.md#v04-examples).
//!
//! The Python apps narrow `supported_features` to what octet's examples
//! negotiate, so their answers are the Rust ports' exactly.

use crate::api_04_examples::{cancelled_line, progress_line, result_line, text_result};
use crate::support::{
    EXIT_AFTER_EOF, EXIT_AFTER_SHUTDOWN, HOST_GRACE, REQUEST_TIMEOUT, SHUTDOWN_ACK, Shim,
    expect_error, expect_result, raws, repo_root, tool_text,
};
use octet_hostsim::{ApiVersion, Frame, ManifestSpec};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `examples/<name>/python/`, whatever `OCTET_WASM_LANG` says.
fn python_example(name: &str) -> PathBuf {
    let dir = repo_root().join("examples").join(name).join("python");
    for file in ["extension.toml".to_owned(), format!("{name}.wasm")] {
        assert!(
            dir.join(&file).is_file(),
            "{} is missing: run scripts/build-guests-python {name} first",
            dir.join(&file).display()
        );
    }
    dir
}

// ----- native-hello ----------------------------------------------------

fn native_hello() -> Shim {
    let manifest = ManifestSpec::new("native-hello", ApiVersion::V0_4)
        .description("Return a local greeting (octet's native-hello example, sandboxed)")
        .tools(&["hello"]);
    Shim::start(
        &python_example("native-hello"),
        "native-hello.wasm",
        manifest,
    )
}

fn ready(mut shim: Shim) -> Shim {
    shim.initialize();
    shim
}

fn assert_greets(shim: &mut Shim, name: &str) {
    let reply = shim.tool("hello", json!({"name": name}));
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    assert_eq!(tool_text(&reply), format!("Hello, {name}!"));
}

#[test]
fn python_native_hello_negotiates_exactly_and_greets() {
    let mut shim = native_hello();
    let reply = shim.initialize_with(shim.init_params());
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        result_line(
            id,
            concat!(
                r#"{"api_version":"0.4","tools":[{"name":"hello","description":"Return a local greeting","#,
                r#""parameters":{"type":"object","properties":{"name":{"type":"string","maxLength":256},"#,
                r#""delay_ms":{"type":"integer","minimum":0,"maximum":5000,"default":0}},"required":["name"],"#,
                r#""additionalProperties":false}}],"commands":[],"protocol":{"version":"0.4","#,
                r#""features":["request_cancellation","content_parts"],"limits":{"max_concurrent_requests":1}}}"#
            )
        )
    );
    let reply = shim.tool("hello", json!({"name": "world"}));
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        result_line(id, &text_result("Hello, world!"))
    );
    shim.shutdown();
}

#[test]
fn python_native_hello_round_trips_every_name() {
    let mut shim = ready(native_hello());
    let emoji = "😀".repeat(256);
    for name in ["🦀 crab", "Καλημέρα", "nul\u{0}inside", emoji.as_str()] {
        let reply = shim.tool("hello", json!({"name": name}));
        assert_eq!(
            *expect_result(&reply),
            json!({"content": [{"type": "text", "text": format!("Hello, {name}!")}], "is_error": false, "metadata": {}}),
            "{}",
            reply.frame.raw
        );
    }
    shim.shutdown();
}

#[test]
fn python_native_hello_refuses_bad_arguments_as_invalid_params() {
    let mut shim = ready(native_hello());
    for arguments in [
        json!({}),
        json!({"name": 5}),
        json!({"name": null}),
        json!({"name": "x", "extra": 1}),
        json!({"name": "x".repeat(257)}),
        json!({"name": "x", "delay_ms": -1}),
        json!({"name": "x", "delay_ms": 5001}),
        json!({"name": "x", "delay_ms": true}),
        json!({"name": "x", "delay_ms": 1.5}),
        json!(["world"]),
    ] {
        let reply = shim.tool("hello", arguments.clone());
        assert_eq!(
            expect_error(&reply).code,
            -32602,
            "{arguments}: {}",
            reply.frame.raw
        );
    }
    let mut params = shim.tool_params("hello", json!({"name": "x"}));
    params["catalog_revision"] = json!(0);
    let reply = shim.call("tool/call", params);
    assert_eq!(expect_error(&reply).code, -32602, "{}", reply.frame.raw);
    assert_greets(&mut shim, "still here");
    shim.shutdown();
}

#[test]
fn python_native_hello_answers_what_it_does_not_serve_with_method_not_found() {
    let mut shim = ready(native_hello());
    let reply = shim.tool("goodbye", json!({}));
    assert_eq!(
        (
            expect_error(&reply).code,
            expect_error(&reply).message.as_str()
        ),
        (-32601, "unknown tool: goodbye")
    );
    let context = shim.context();
    for (method, params) in [
        (
            "hook/run",
            json!({"hook": "before_prompt", "payload": {"prompt": "p"}, "context": context}),
        ),
        (
            "command/execute",
            json!({"name": "hello", "arguments": [], "context": context}),
        ),
        (
            "status/collect",
            json!({"surface": "status", "context": context}),
        ),
        ("menu/collect", json!({"context": context})),
        (
            "tool/render",
            json!({"name": "hello", "arguments": {}, "output": "x", "is_error": false, "context": context}),
        ),
        (
            "context/collect",
            json!({"prompt": null, "context": context}),
        ),
    ] {
        let reply = shim.call(method, params);
        assert_eq!(
            expect_error(&reply).code,
            -32601,
            "{method}: {}",
            reply.frame.raw
        );
    }
    shim.shutdown();
}

#[test]
fn python_native_hello_is_cancelled_during_its_delay_and_ignores_late_cancels() {
    let mut shim = ready(native_hello());
    let id = shim.send_tool("hello", json!({"name": "x", "delay_ms": 5000}));
    std::thread::sleep(Duration::from_millis(200));
    let cancelled = Instant::now();
    shim.cancel(id, "user").expect("cancel");
    let reply = shim.reply(id);
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    assert_eq!(reply.frame.raw, cancelled_line(id, "user"));
    assert!(cancelled.elapsed() < HOST_GRACE, "answered after the grace");
    shim.cancel(id, "user").expect("cancel again");
    let done = shim.tool("hello", json!({"name": "quick"}));
    let done_id = done.frame.response_id().unwrap_or_default();
    shim.cancel(done_id, "user").expect("late cancel");
    assert_greets(&mut shim, "after the cancels");
    shim.shutdown();
}

#[test]
fn python_native_hello_shutdown_during_a_call_cancels_it_first() {
    let mut shim = ready(native_hello());
    let call = shim.send_tool("hello", json!({"name": "x", "delay_ms": 5000}));
    std::thread::sleep(Duration::from_millis(200));
    let shutdown = shim.send_request("shutdown", json!({}));
    let responses = shim.responses(&[call, shutdown], SHUTDOWN_ACK);
    assert!(responses.others.is_empty(), "{:?}", raws(&responses.others));
    assert_eq!(responses.order, [call, shutdown]);
    assert_eq!(responses.frame(call).raw, cancelled_line(call, "shutdown"));
    assert_eq!(responses.frame(shutdown).raw, result_line(shutdown, "{}"));
    assert_eq!(shim.exit_status(EXIT_AFTER_SHUTDOWN).code(), Some(0));
}

#[test]
fn python_native_hello_stdin_eof_during_a_call_settles_it_and_exits_zero() {
    let mut shim = ready(native_hello());
    let call = shim.send_tool("hello", json!({"name": "x", "delay_ms": 5000}));
    std::thread::sleep(Duration::from_millis(200));
    shim.close_stdin();
    let reply = shim.reply(call);
    assert_eq!(expect_error(&reply).code, -32800, "{}", reply.frame.raw);
    assert_eq!(shim.exit_status(EXIT_AFTER_EOF).code(), Some(0));
}

#[test]
fn python_native_hello_tolerates_crlf_frames() {
    let mut shim = ready(native_hello());
    let id = 900;
    let params = shim.tool_params("hello", json!({"name": "crlf"}));
    let line = json!({"jsonrpc": "2.0", "id": id, "method": "tool/call", "params": params});
    shim.with_checker(|checker| checker.host_sent_request(id, "tool/call", &params));
    shim.raw(format!("{line}\r\n").as_bytes());
    let reply = shim.reply(id);
    assert_eq!(
        reply.frame.raw,
        result_line(id, &text_result("Hello, crlf!"))
    );
    shim.shutdown();
}

// ----- text-stats ------------------------------------------------------

fn text_stats() -> Shim {
    let manifest = ManifestSpec::new("text-stats", ApiVersion::V0_4)
        .description("Count characters, words, lines and UTF-8 bytes in supplied text (octet's typescript-hello example, sandboxed)")
        .tools(&["text_stats"]);
    Shim::start(&python_example("text-stats"), "text-stats.wasm", manifest)
}

#[test]
fn python_text_stats_counts_with_one_progress_report() {
    let mut shim = text_stats();
    let result = shim.initialize();
    let protocol = &result["protocol"];
    assert_eq!(
        protocol["features"],
        json!(["request_cancellation", "content_parts", "request_progress"])
    );
    assert_eq!(protocol["limits"], json!({"max_concurrent_requests": 2}));
    assert_eq!(
        result["tools"],
        json!([{
            "name": "text_stats",
            "description": "Count characters, words, lines and UTF-8 bytes in supplied text locally",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "maxLength": 65536},
                    "delayMs": {"type": "integer", "minimum": 0, "maximum": 2000},
                },
                "required": ["text"],
                "additionalProperties": false,
            },
        }])
    );
    let reply = shim.tool("text_stats", json!({"text": "hello world\n🦀"}));
    let id = reply.frame.response_id().unwrap_or_default();
    let before: Vec<&str> = reply
        .before
        .iter()
        .map(|f: &Frame| f.raw.as_str())
        .collect();
    assert_eq!(before, [progress_line(id)]);
    assert_eq!(
        reply.frame.raw,
        result_line(
            id,
            &text_result("characters=13 words=3 lines=2 utf8_bytes=16")
        )
    );
    for (text, counts) in [
        ("", "characters=0 words=0 lines=0 utf8_bytes=0"),
        ("   ", "characters=3 words=0 lines=1 utf8_bytes=3"),
        (
            "a\r\nb\rc\nd\n",
            "characters=9 words=4 lines=5 utf8_bytes=9",
        ),
        (
            "\u{feff}x\u{3000}y",
            "characters=4 words=2 lines=1 utf8_bytes=8",
        ),
    ] {
        let reply = shim.tool("text_stats", json!({"text": text}));
        assert_eq!(tool_text(&reply), counts, "{text:?}");
    }
    for bad in [
        json!({"text": "x", "delayMs": 2001}),
        json!({"text": 3}),
        json!({"text": "x", "extra": true}),
    ] {
        let reply = shim.tool("text_stats", bad.clone());
        assert_eq!(
            expect_error(&reply).code,
            -32602,
            "{bad}: {}",
            reply.frame.raw
        );
    }
    shim.shutdown();
}

#[test]
fn python_text_stats_without_progress_offered_reports_none() {
    let mut shim = text_stats();
    let offered: Vec<String> = octet_hostsim::v0_4_optional_features(&[], true)
        .into_iter()
        .filter(|f| f != "request_progress")
        .collect();
    let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
    let params = shim.offer().optional_features(&offered).to_json();
    let result = expect_result(&shim.initialize_with(params)).clone();
    assert_eq!(
        result["protocol"]["features"],
        json!(["request_cancellation", "content_parts"])
    );
    let reply = shim.tool("text_stats", json!({"text": "a b"}));
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    assert_eq!(
        tool_text(&reply),
        "characters=3 words=2 lines=1 utf8_bytes=3"
    );
    shim.shutdown();
}

#[test]
fn python_text_stats_serves_two_calls_at_once_and_cancels_in_the_delay() {
    let mut shim = ready(text_stats());
    let slow = shim.send_tool("text_stats", json!({"text": "slow", "delayMs": 2000}));
    let quick = shim.send_tool("text_stats", json!({"text": "quick"}));
    let reply = shim.reply(quick);
    assert_eq!(
        tool_text(&reply),
        "characters=5 words=1 lines=1 utf8_bytes=5"
    );
    shim.cancel(slow, "user").expect("cancel");
    let frames = shim
        .wait_response(slow, REQUEST_TIMEOUT)
        .expect("the slow call's answer");
    assert_eq!(frames.frame.raw, cancelled_line(slow, "user"));
    shim.shutdown();
}

// ----- cache-warming ---------------------------------------------------

#[test]
fn python_cache_warming_stops_expensive_warming_and_is_silent_otherwise() {
    let manifest = ManifestSpec::new("cache-warming", ApiVersion::V0_4)
        .description("Stop warming the prompt cache when it costs more than 5,000 microdollars (octet's cache-warming example, sandboxed)")
        .hooks(&["cache_warming_decision"]);
    let mut shim = Shim::start(
        &python_example("cache-warming"),
        "cache-warming.wasm",
        manifest,
    );
    let result = shim.initialize();
    assert_eq!(result["tools"], json!([]));
    // The app narrows its features to the required two; the shim selects
    // the declared hook's own.
    assert_eq!(
        result["protocol"]["features"],
        json!([
            "request_cancellation",
            "content_parts",
            "cache_warming_decision"
        ])
    );
    let context = shim.context();
    for (cost, extra) in [
        (5001, r#","cache_warming_decision":"stop""#),
        (5000, ""),
        (0, ""),
    ] {
        let payload = json!({
            "decision": {
                "phase": "streaming",
                "warm_cost_microdollars": cost,
                "miss_cost_microdollars": 12000,
                "continuation_probability": 0.8,
                "expected_savings_microdollars": 4000,
                "economics_available": true,
                "action": "warm",
            },
            "model": {"id": "m-large", "provider": "acme"},
        });
        let reply = shim.call(
            "hook/run",
            json!({"hook": "cache_warming_decision", "payload": payload, "context": context}),
        );
        let id = reply.frame.response_id().unwrap_or_default();
        assert_eq!(
            reply.frame.raw,
            result_line(
                id,
                &format!(
                    r#"{{"disposition":{{"action":"continue"}},"context":[],"notifications":[]{extra}}}"#
                )
            ),
            "cost {cost}"
        );
    }
    shim.shutdown();
}

#[test]
fn python_example_manifests_are_the_rust_ports() {
    for name in ["native-hello", "text-stats", "cache-warming"] {
        let read = |dir: PathBuf| -> Value {
            let text = std::fs::read_to_string(dir.join("extension.toml")).expect("read");
            toml::from_str::<toml::Table>(&text)
                .map(|t| serde_json::to_value(t).unwrap_or_default())
                .expect("parse the manifest")
        };
        let python = read(python_example(name));
        let rust = read(repo_root().join("examples").join(name));
        assert_eq!(python, rust, "{name}");
        assert_eq!(python["api_version"], "0.4");
    }
}
