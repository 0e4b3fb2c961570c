//! API 0.4 in the JavaScript and C SDKs, through the real binary: each
//! example built by its SDK against `octet:extension@0.4.0` because its
//! manifest says 0.4 (`scripts/build-guests-js`, `scripts/build-guests-c`).
//!
//! - `examples/hello-tools/{js,c}`: octet's hello-tools recipe with tool
//!   prompt metadata (docs/api-0.4.md#v04-prompt-metadata). Both answer like
//!   the Rust port (`api_04_examples.rs`), plus the metadata and its
//!   feature; where the wire cannot carry the metadata (a host that does not
//!   offer the feature, a 0.2 manifest) the shim leaves it out with one
//!   warning and the tool works as before.
//! - `examples/cache-warming/{js,c}`: octet's cache-warming example, the
//!   Rust port's transcript byte for byte (docs/api-0.4.md#v04-hook-results).
//! - `examples/text-stats/js`: octet's typescript-hello example in its own
//!   language, the Rust port's transcript (counts, one progress report when
//!   progress is offered and none otherwise, two calls at once,
//!   cancellation in the delay).
//! - the SDKs' composition test guests (`guest-sdk/js/test/guest/compose`,
//!   `guest-sdk/c/tests/compose`, docs/api-0.4.md#v04-composition): context,
//!   call and store as octet sees them, refused from a command.

use crate::support::{
    LOG_TIMEOUT, REQUEST_TIMEOUT, Shim, component, expect_error, expect_result, repo_root,
    stderr_text, tool_text,
};
use octet_hostsim::{ApiVersion, ChildId, CompositionCall, FrameKind, ManifestSpec};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

const LANGS: [&str; 2] = ["js", "c"];

/// `examples/hello-tools/<lang>`, with its manifest and component.
fn example(lang: &str) -> PathBuf {
    let dir = repo_root().join("examples/hello-tools").join(lang);
    for file in ["extension.toml", "hello-tools.wasm"] {
        assert!(
            dir.join(file).is_file(),
            "{} is missing: run scripts/build-guests-{lang} hello-tools first",
            dir.join(file).display()
        );
    }
    dir
}

fn start(lang: &str, api: ApiVersion) -> Shim {
    let manifest = ManifestSpec::new("hello-tools", api)
        .description("Return a local greeting (octet's hello-tools recipe, sandboxed)")
        .tools(&["hello"]);
    Shim::start(&example(lang), "hello-tools.wasm", manifest)
}

/// The tool as the example defines it; `metadata` adds its prompt metadata.
fn hello_tool(metadata: bool) -> Value {
    let mut tool = json!({"name": "hello", "description": "Return a local greeting", "parameters": {"type": "object"}});
    if metadata {
        tool["prompt_snippet"] = json!("hello: return a local greeting");
        tool["prompt_guidelines"] = json!([
            "Call hello when the user asks to be greeted",
            "hello takes no arguments"
        ]);
    }
    tool
}

fn assert_greets(shim: &mut Shim, lang: &str) {
    let reply = shim.tool("hello", json!({}));
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"Hello from octet."}}],"is_error":false,"metadata":{{}}}}}}"#
        ),
        "{lang}"
    );
}

fn assert_warned(shim: &Shim, lang: &str, why: &str) {
    let record = shim
        .stderr()
        .wait_for_message(
            LOG_TIMEOUT,
            "tool prompt metadata left out: this wire cannot carry it",
        )
        .unwrap_or_else(|| panic!("{lang}: no warning; stderr:\n{}", stderr_text(shim)));
    let fields = record.record.expect("a JSON record");
    assert_eq!(fields["tools"], json!(["hello"]), "{lang}");
    assert_eq!(fields["why"], why, "{lang}");
}

#[test]
fn hello_tools_answers_with_prompt_metadata_in_js_and_c() {
    for lang in LANGS {
        let mut shim = start(lang, ApiVersion::V0_4);
        let result = shim.initialize();
        assert_eq!(
            result,
            json!({
                "api_version": "0.4",
                "tools": [hello_tool(true)],
                "commands": [],
                "protocol": {
                    "version": "0.4",
                    "features": ["request_cancellation", "content_parts", "tool_prompt_metadata_v1"],
                    "limits": {"max_concurrent_requests": 1},
                },
            }),
            "{lang}"
        );
        assert_greets(&mut shim, lang);
        assert_greets(&mut shim, lang);
        shim.shutdown();
    }
}

#[test]
fn hello_tools_without_the_feature_offered_leaves_the_metadata_out() {
    for lang in LANGS {
        let mut shim = start(lang, ApiVersion::V0_4);
        let mut params = shim.init_params();
        let offered: Vec<Value> = params["protocol"]["optional_features"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| f != "tool_prompt_metadata_v1")
            .collect();
        params["protocol"]["optional_features"] = Value::Array(offered);
        let result = expect_result(&shim.initialize_with(params)).clone();
        assert_eq!(result["tools"], json!([hello_tool(false)]), "{lang}");
        assert_eq!(
            result["protocol"]["features"],
            json!(["request_cancellation", "content_parts"]),
            "{lang}"
        );
        assert_warned(
            &shim,
            lang,
            "the host did not offer tool_prompt_metadata_v1",
        );
        assert_greets(&mut shim, lang);
        shim.shutdown();
    }
}

#[test]
fn hello_tools_under_a_0_2_manifest_serves_the_tool_without_metadata() {
    for lang in LANGS {
        let mut shim = start(lang, ApiVersion::V0_2);
        let result = shim.initialize();
        assert_eq!(result["api_version"], "0.2", "{lang}");
        assert_eq!(result["tools"], json!([hello_tool(false)]), "{lang}");
        assert_eq!(
            result["protocol"],
            json!({
                "version": "0.2",
                "features": ["request_cancellation", "content_parts"],
                "limits": {"max_concurrent_requests": 1},
            }),
            "{lang}"
        );
        assert_warned(&shim, lang, "prompt metadata needs an API 0.4 manifest");
        assert_greets(&mut shim, lang);
        shim.shutdown();
    }
}

/// Each SDK built the example against the package its 0.4 manifest asks
/// for, and the metadata is in the component (`inspect`, offline).
#[test]
fn hello_tools_components_are_octet_extension_0_4_0() {
    for lang in LANGS {
        let wasm = example(lang).join("hello-tools.wasm");
        let output = Command::new(crate::support::shim_binary())
            .arg("inspect")
            .arg(&wasm)
            .output()
            .expect("inspect runs");
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{lang}: {text}");
        assert!(
            text.lines()
                .any(|line| line.split_whitespace().eq(["wit", "octet:extension@0.4.0"])),
            "{lang}: {text}"
        );
        assert!(
            text.contains(r#"prompt_snippet "hello: return a local greeting""#),
            "{lang}: {text}"
        );
        assert!(
            text.contains("features     tool_prompt_metadata_v1"),
            "{lang}: {text}"
        );
    }
    // The recipe's text is the same in both languages.
    assert_eq!(tool_text_of("js"), tool_text_of("c"));
}

fn tool_text_of(lang: &str) -> String {
    let mut shim = start(lang, ApiVersion::V0_4);
    shim.initialize();
    let text = tool_text(&shim.tool("hello", json!({"name": "ignored"})));
    shim.shutdown();
    text
}

// ----- cache-warming ---------------------------------------------------

#[test]
fn cache_warming_stops_expensive_warming_in_js_and_c() {
    for lang in LANGS {
        let dir = repo_root().join("examples/cache-warming").join(lang);
        assert!(
            dir.join("cache-warming.wasm").is_file(),
            "run scripts/build-guests-{lang} cache-warming first"
        );
        let manifest = ManifestSpec::new("cache-warming", ApiVersion::V0_4)
            .description("Stop warming the prompt cache when it costs more than 5,000 microdollars (octet's cache-warming example, sandboxed)")
            .hooks(&["cache_warming_decision"]);
        let mut shim = Shim::start(&dir, "cache-warming.wasm", manifest);
        let result = shim.initialize();
        assert_eq!(result["tools"], json!([]), "{lang}");
        assert_eq!(
            result["protocol"]["features"],
            json!([
                "request_cancellation",
                "content_parts",
                "cache_warming_decision"
            ]),
            "{lang}"
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
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"disposition":{{"action":"continue"}},"context":[],"notifications":[]{extra}}}}}"#
                ),
                "{lang}: cost {cost}"
            );
        }
        shim.shutdown();
    }
}

// ----- composition --------------------------------------------------------

fn compose_guest(lang: &str) -> Shim {
    let wasm = component(&format!("{lang}/compose"));
    let manifest = ManifestSpec::new("compose", ApiVersion::V0_4)
        .description("The SDK's composition test guest")
        .tools(&["compose", "stream"])
        .commands(&["compose"]);
    Shim::start(
        wasm.parent().expect("a directory"),
        "compose.wasm",
        manifest,
    )
}

/// The next child request: its id, method and params.
fn child(shim: &mut Shim) -> (ChildId, String, Value) {
    let frame = shim.recv(REQUEST_TIMEOUT).expect("a child request");
    match frame.kind {
        FrameKind::Request { id, method, params } => (id, method, params),
        _ => panic!("expected a child request, got {}", frame.raw),
    }
}

#[test]
fn composition_reaches_octet_under_the_tool_call_in_js_and_c() {
    for lang in LANGS {
        let mut shim = compose_guest(lang);
        let result = shim.initialize();
        assert!(
            result["protocol"]["features"]
                .as_array()
                .is_some_and(|f| f.contains(&json!("tool_composition_v1"))),
            "{lang}: {result}"
        );
        let id = shim.send_tool("compose", json!({"path": "a.txt"}));
        let (child_id, method, params) = child(&mut shim);
        assert_eq!(
            (method.as_str(), &params),
            ("composition/context", &json!({"parent_request_id": id})),
            "{lang}"
        );
        shim.respond(
            &child_id,
            json!({"tools": [{"name": "read", "description": "Read", "parameters": {"type": "object"}}], "store": {"seen": 1, "stale": 2}, "limits": {"timeout_ms": 30000, "max_calls": 256}}),
        )
        .unwrap();
        let (child_id, method, params) = child(&mut shim);
        assert_eq!(
            (method.as_str(), &params),
            (
                "composition/call",
                &json!({"parent_request_id": id, "name": "read", "arguments": {"path": "a.txt"}})
            ),
            "{lang}"
        );
        shim.respond(&child_id, json!({"value": {"text": "hello"}}))
            .unwrap();
        let (child_id, method, params) = child(&mut shim);
        assert_eq!(
            (method.as_str(), &params),
            (
                "composition/store",
                &json!({"parent_request_id": id, "set": {"last": "a.txt", "count": 256}, "delete": ["stale"]})
            ),
            "{lang}"
        );
        shim.respond(&child_id, json!({})).unwrap();
        let text: Value = serde_json::from_str(&tool_text(&shim.reply(id))).expect("JSON text");
        let expected = if lang == "js" {
            json!({"tools": ["read"], "maxCalls": 256, "value": {"text": "hello"}})
        } else {
            json!({"text": "hello"})
        };
        assert_eq!(text, expected, "{lang}");
        // Only a model tool call may compose: from a command nothing is sent.
        let context = shim.context();
        let reply = shim.call(
            "command/execute",
            json!({"name": "compose", "arguments": [], "context": context}),
        );
        assert!(
            reply.before.is_empty(),
            "{lang}: nothing sent from a command"
        );
        assert_eq!(
            expect_error(&reply).code,
            -32602,
            "{lang}: {}",
            reply.frame.raw
        );
        shim.shutdown();
    }
}

#[test]
fn a_streaming_composition_call_yields_updates_then_its_value_in_js_and_c() {
    for lang in LANGS {
        let mut shim = compose_guest(lang);
        shim.initialize();
        let id = shim.send_tool("stream", json!({}));
        let frame = shim.recv(REQUEST_TIMEOUT).expect("a child request");
        let call = CompositionCall::from_frame(&frame).expect("a composition/call");
        assert!(call.updates, "{lang}: asked for updates: {}", frame.raw);
        shim.serve_composition_call(
            &call,
            &[json!({"line": "a.rs:1"}), json!({"line": "b.rs:7"})],
            json!({"matches": 2}),
        )
        .unwrap();
        let reply = shim.reply(id);
        assert!(reply.before.is_empty(), "{lang}");
        let text: Value = serde_json::from_str(&tool_text(&reply)).expect("JSON text");
        assert_eq!(
            text,
            json!({"updates": [[1, {"line": "a.rs:1"}], [2, {"line": "b.rs:7"}]], "value": {"matches": 2}}),
            "{lang}"
        );
        shim.shutdown();
    }
}

// ----- text-stats (JavaScript) -------------------------------------------

fn text_stats() -> Shim {
    let dir = repo_root().join("examples/text-stats/js");
    assert!(
        dir.join("text-stats.wasm").is_file(),
        "run scripts/build-guests-js text-stats first"
    );
    let manifest = ManifestSpec::new("text-stats", ApiVersion::V0_4)
        .description("Count characters, words, lines and UTF-8 bytes in supplied text (octet's typescript-hello example, sandboxed)")
        .tools(&["text_stats"]);
    Shim::start(&dir, "text-stats.wasm", manifest)
}

fn text_line(id: u64, text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#,
        json!({"content": [{"type": "text", "text": text}], "is_error": false, "metadata": {}})
    )
}

#[test]
fn js_text_stats_counts_with_one_progress_report() {
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
    let before: Vec<&str> = reply.before.iter().map(|f| f.raw.as_str()).collect();
    assert_eq!(
        before,
        [format!(
            r#"{{"jsonrpc":"2.0","method":"$/progress","params":{{"request_id":{id},"sequence":1,"event":{{"type":"status","message":"Counting supplied text"}}}}}}"#
        )]
    );
    assert_eq!(
        reply.frame.raw,
        text_line(id, "characters=13 words=3 lines=2 utf8_bytes=16")
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
        json!({"text": "x", "delayMs": 1.5}),
        json!({"text": 3}),
        json!({"text": "x", "extra": true}),
        json!({"text": "é".repeat(65_537)}),
    ] {
        let reply = shim.tool("text_stats", bad.clone());
        assert_eq!(expect_error(&reply).code, -32602, "{}", reply.frame.raw);
    }
    shim.shutdown();
}

#[test]
fn js_text_stats_without_progress_offered_reports_none() {
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
    assert!(reply.before.is_empty(), "{:?}", reply.before);
    assert_eq!(
        tool_text(&reply),
        "characters=3 words=2 lines=1 utf8_bytes=3"
    );
    shim.shutdown();
}

#[test]
fn js_text_stats_serves_two_calls_at_once_and_cancels_in_the_delay() {
    let mut shim = text_stats();
    shim.initialize();
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
    assert_eq!(
        frames.frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{slow},"error":{{"code":-32800,"message":"request cancelled","data":{{"reason":"user"}}}}}}"#
        )
    );
    shim.shutdown();
}
