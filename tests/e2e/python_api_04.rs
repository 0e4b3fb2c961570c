//! The Python SDK on API 0.4, through the real binary.
//!
//! octet's Python 0.4 recipe, `hello-tools` (docs/api-0.4.md#v04-examples),
//! written exactly as octet's Python SDK README has it
//! (`examples/hello-tools/python/extension.py`, built unchanged by
//! `scripts/build-guests-python hello-tools` beside its manifest, against
//! `octet:extension@0.4.0`). The Rust port's transcript is in
//! `api_04_examples.rs`. The Python SDK answers differently where octet's
//! Python SDK does: it selects every offered feature it supports (not only
//! the required two), drops `lifecycle_events` without a lifecycle handler,
//! and caps the limit at the recipe's `max_concurrent_requests=1`.
//!
//! The SDK's 0.4 surface (`tests/guests/python-api04/extension.py`, built by
//! `scripts/build-guests-python api04`): tool prompt metadata, tool
//! composition with hostsim answering for octet (another tool's value, the
//! whole outcome, a streaming call's partial results, the context, the
//! store and octet's errors, and what the SDK refuses before anything is
//! written), and the 0.4 hook results
//! (docs/api-0.4.md#v04-hook-results, #v04-composition).

use crate::api_04_composition::child;
use crate::python_compat::python_shim;
use crate::support::{REQUEST_TIMEOUT, Shim, expect_error, expect_result, repo_root, tool_text};
use octet_hostsim::{ApiVersion, CompositionCall, ManifestSpec, REQUIRED_FEATURES, Reply};
use serde_json::{Value, json};
use std::path::PathBuf;
use tempfile::TempDir;

/// The optional features the Python SDK supports and the shim backs
/// (`guest-sdk/python/src/octet_guest/values.py` `API_V02_FEATURES`, less
/// `delegation_telemetry_v1`, which only first-party subagents get), in the
/// SDK's order. `lifecycle_events` is among them but dropped here: the
/// recipe has no lifecycle handler.
const SDK_OPTIONAL: &[&str] = &[
    "request_progress",
    "progress_decoration",
    "artifacts",
    "policy_intents",
    "dynamic_tools",
    "agent_sessions",
    "approvals",
    "secrets",
];

fn recipe_dir() -> PathBuf {
    let dir = repo_root().join("examples/hello-tools/python");
    for file in ["extension.toml", "hello-tools.wasm"] {
        assert!(
            dir.join(file).is_file(),
            "{} is missing: run scripts/build-guests-python hello-tools first",
            dir.join(file).display()
        );
    }
    dir
}

fn manifest(api: ApiVersion) -> ManifestSpec {
    ManifestSpec::new("hello-tools", api)
        .description("Return a local greeting (octet's hello-tools recipe, sandboxed)")
        .tools(&["hello"])
}

fn recipe() -> Shim {
    Shim::start(
        &recipe_dir(),
        "hello-tools.wasm",
        manifest(ApiVersion::V0_4),
    )
}

/// offered ∩ the SDK's list, in the host's order after the required ones.
fn expected_features(offered: &[String]) -> Vec<String> {
    let mut features: Vec<String> = REQUIRED_FEATURES.iter().map(|f| (*f).to_owned()).collect();
    features.extend(
        offered
            .iter()
            .filter(|f| SDK_OPTIONAL.contains(&f.as_str()))
            .cloned(),
    );
    features
}

fn offered_optional(params: &Value) -> Vec<String> {
    serde_json::from_value(params["protocol"]["optional_features"].clone())
        .expect("the offer's optional features")
}

#[test]
fn python_hello_tools_answers_the_recipe() {
    let mut shim = recipe();
    let params = shim.init_params();
    let offered = offered_optional(&params);
    let result = expect_result(&shim.initialize_with(params)).clone();
    // The product's offer holds five of the SDK's features; none of the
    // 0.4 additions is among them.
    assert_eq!(
        expected_features(&offered),
        [
            "request_cancellation",
            "content_parts",
            "request_progress",
            "progress_decoration",
            "artifacts",
            "policy_intents",
            "dynamic_tools",
        ]
    );
    assert_eq!(
        result,
        json!({
            "api_version": "0.4",
            "tools": [{"name": "hello", "description": "Return a local greeting", "parameters": {"type": "object"}}],
            "commands": [],
            "protocol": {
                "version": "0.4",
                "features": expected_features(&offered),
                "limits": {"max_concurrent_requests": 1},
            },
        })
    );
    for arguments in [json!({}), json!({"name": "ignored"})] {
        let reply = shim.tool("hello", arguments);
        assert!(reply.before.is_empty(), "{:?}", reply.before);
        let id = reply.frame.response_id().unwrap_or_default();
        assert_eq!(
            reply.frame.raw,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"Hello from octet."}}],"is_error":false,"metadata":{{}}}}}}"#
            )
        );
    }
    shim.shutdown();
}

#[test]
fn python_hello_tools_selects_only_what_is_offered() {
    let mut shim = recipe();
    // lifecycle_events is offered but has no handler; tool_composition_v1
    // is a 0.4 feature the recipe does not declare (only
    // `uses_composition()` or `supported_features` do); the limit is above 1.
    let params = shim
        .offer()
        .optional_features(&["tool_composition_v1", "lifecycle_events", "secrets"])
        .max_concurrent_requests(3)
        .to_json();
    let result = expect_result(&shim.initialize_with(params)).clone();
    assert_eq!(
        result["protocol"],
        json!({
            "version": "0.4",
            "features": ["request_cancellation", "content_parts", "secrets"],
            "limits": {"max_concurrent_requests": 1},
        })
    );
    let reply = shim.tool("hello", json!({}));
    assert_eq!(
        expect_result(&reply)["content"],
        json!([{"type": "text", "text": "Hello from octet."}])
    );
    shim.shutdown();
}

#[test]
fn python_hello_tools_pinned_to_0_4_refuses_a_0_2_host() {
    // The recipe pins Extension(api_version="0.4"); started under a 0.2
    // manifest, octet initializes with 0.2 and the SDK's init refuses, as
    // octet's Python SDK does; the shim answers its sentence as -32603.
    let mut shim = Shim::start(
        &recipe_dir(),
        "hello-tools.wasm",
        manifest(ApiVersion::V0_2),
    );
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32603, "{}", reply.frame.raw);
    assert!(
        error.message.ends_with(
            "error -32000: unsupported API version: host requested '0.2', SDK implements '0.4'"
        ),
        "{}",
        reply.frame.raw
    );
}

#[test]
fn python_hello_tools_manifest_is_the_recipes() {
    let text = std::fs::read_to_string(recipe_dir().join("extension.toml")).expect("read");
    let table: Value = toml::from_str::<toml::Table>(&text)
        .map(|t| serde_json::to_value(t).unwrap_or_default())
        .expect("parse the manifest");
    assert_eq!(
        (
            &table["name"],
            &table["version"],
            &table["api_version"],
            &table["contributes"]["tools"],
            &table["entrypoint"]["args"],
        ),
        (
            &json!("hello-tools"),
            &json!("0.1.0"),
            &json!("0.4"),
            &json!(["hello"]),
            &json!(["run", "hello-tools.wasm"]),
        )
    );
}

// ----- the SDK's 0.4 surface (tests/guests/python-api04) ----------------

const API04_TOOLS: &[&str] = &[
    "prompted",
    "plain",
    "compose_call",
    "compose_stream",
    "compose_context",
    "compose_store",
    "compose_bad",
];
const API04_HOOKS: &[&str] = &[
    "cache_warming_decision",
    "compaction_strategy",
    "before_provider_request",
    "before_provider_headers",
    "after_provider_response",
];

/// The api04 guest under a 0.4 manifest, initialized with the product's
/// offer for its hooks; the directory holds the manifest.
fn api04() -> (Shim, TempDir, Value) {
    let manifest = ManifestSpec::new("python-api04", ApiVersion::V0_4)
        .description("The Python SDK's API 0.4 surface")
        .tools(API04_TOOLS)
        .commands(&["compose"])
        .hooks(API04_HOOKS);
    let (mut shim, dir) = python_shim("api04", manifest);
    let result = shim.initialize();
    (shim, dir, result)
}

fn hook(shim: &mut Shim, hook: &str, payload: Value) -> Reply {
    let context = shim.context();
    shim.call(
        "hook/run",
        json!({"hook": hook, "payload": payload, "context": context}),
    )
}

const ENVELOPE: &str = r#"{"disposition":{"action":"continue"},"context":[],"notifications":[]"#;

fn hook_line(reply: &Reply, extra: &str) -> String {
    let id = reply.frame.response_id().unwrap_or_default();
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{ENVELOPE}{extra}}}}}"#)
}

#[test]
fn python_api04_sends_prompt_metadata_and_negotiates_its_features() {
    let (mut shim, _dir, result) = api04();
    let features = result["protocol"]["features"].as_array().expect("features");
    for feature in [
        "tool_prompt_metadata_v1",
        "tool_composition_v1",
        "cache_warming_decision",
        "compaction_strategy",
        "pipeline_hooks_v1",
    ] {
        assert!(features.contains(&json!(feature)), "{feature}: {result}");
    }
    let tool = |name: &str| {
        result["tools"]
            .as_array()
            .and_then(|tools| tools.iter().find(|t| t["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no tool {name} in {result}"))
    };
    assert_eq!(
        tool("prompted"),
        json!({
            "name": "prompted",
            "description": "A tool with prompt metadata",
            "parameters": {"type": "object"},
            "prompt_snippet": "prompted: shows what prompt metadata looks like",
            "prompt_guidelines": ["Use it for tests only", "Columns:\tname\nthen value"],
        })
    );
    assert_eq!(
        tool("plain"),
        json!({"name": "plain", "description": "A tool without prompt metadata", "parameters": {"type": "object"}})
    );
    assert_eq!(tool_text(&shim.tool("prompted", json!({}))), "prompted");
    shim.shutdown();
}

#[test]
fn python_api04_calls_another_tool_through_octet() {
    let (mut shim, _dir, _) = api04();
    let id = shim.send_tool(
        "compose_call",
        json!({"name": "read", "arguments": {"path": "a.txt"}}),
    );
    let (child_id, method, params) = child(&mut shim);
    assert_eq!(method, "composition/call");
    assert_eq!(
        params,
        json!({"parent_request_id": id, "name": "read", "arguments": {"path": "a.txt"}})
    );
    shim.respond(&child_id, json!({"value": {"text": "hello"}}))
        .unwrap();
    assert_eq!(tool_text(&shim.reply(id)), r#"{"text":"hello"}"#);

    // The whole outcome, and no arguments given: {}.
    let id = shim.send_tool("compose_call", json!({"name": "read", "full": true}));
    let (child_id, _, params) = child(&mut shim);
    assert_eq!(
        params,
        json!({"parent_request_id": id, "name": "read", "arguments": {}, "full_outcome": true})
    );
    let outcome =
        json!({"content": [{"type": "text", "text": "hi"}], "is_error": false, "value": "hi"});
    shim.respond(&child_id, outcome.clone()).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&tool_text(&shim.reply(id))).unwrap(),
        outcome
    );

    // octet's refusal reaches the handler, and its reply, unchanged.
    let id = shim.send_tool("compose_call", json!({"name": "gone"}));
    let (child_id, _, _) = child(&mut shim);
    shim.respond_error(&child_id, -32602, "unknown tool: gone")
        .unwrap();
    let reply = shim.reply(id);
    assert_eq!(
        (
            expect_error(&reply).code,
            expect_error(&reply).message.as_str()
        ),
        (-32602, "unknown tool: gone")
    );
    shim.shutdown();
}

#[test]
fn python_api04_streams_a_calls_partial_results() {
    let (mut shim, _dir, _) = api04();
    let id = shim.send_tool(
        "compose_stream",
        json!({"name": "grep", "arguments": {"pattern": "TODO"}}),
    );
    let frame = shim.recv(REQUEST_TIMEOUT).expect("a child request");
    assert_eq!(
        frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":"wasm:1","method":"composition/call","params":{{"parent_request_id":{id},"name":"grep","arguments":{{"pattern":"TODO"}},"updates":true}}}}"#
        )
    );
    let call = CompositionCall::from_frame(&frame).unwrap();
    shim.serve_composition_call(
        &call,
        &[json!({"line": "a.rs:1"}), json!({"line": "b.rs:7"})],
        json!({"matches": 2}),
    )
    .unwrap();
    let reply = shim.reply(id);
    assert!(reply.before.is_empty(), "{}", reply.frame.raw);
    assert_eq!(
        reply.frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{{\"updates\":[[1,{{\"line\":\"a.rs:1\"}}],[2,{{\"line\":\"b.rs:7\"}}]],\"value\":{{\"matches\":2}}}}"}}],"is_error":false,"metadata":{{}}}}}}"#
        )
    );

    // The whole outcome.
    let id = shim.send_tool("compose_stream", json!({"name": "grep", "full": true}));
    let call = CompositionCall::from_frame(&shim.recv(REQUEST_TIMEOUT).unwrap()).unwrap();
    assert!(call.full_outcome && call.updates, "{call:?}");
    shim.serve_composition_call(&call, &[json!("partial")], json!("done"))
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&tool_text(&shim.reply(id))).unwrap(),
        json!({
            "updates": [[1, "partial"]],
            "value": {"content": [{"type": "text", "text": "\"done\""}], "is_error": false, "value": "done"},
        })
    );

    // Abandoned after the first update: the guest answers, and octet is
    // told (in either order); what octet still sends for it is dropped.
    let id = shim.send_tool("compose_stream", json!({"name": "grep", "first": true}));
    let call = CompositionCall::from_frame(&shim.recv(REQUEST_TIMEOUT).unwrap()).unwrap();
    shim.composition_update(&call.id, 1, json!("only")).unwrap();
    let frames = [
        shim.recv(REQUEST_TIMEOUT).expect("a frame"),
        shim.recv(REQUEST_TIMEOUT).expect("a frame"),
    ];
    let raws: Vec<&str> = frames.iter().map(|f| f.raw.as_str()).collect();
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{{\"updates\":[[1,\"only\"]]}}"}}],"is_error":false,"metadata":{{}}}}}}"#
    );
    let abandon = format!(
        r#"{{"jsonrpc":"2.0","method":"$/cancelRequest","params":{{"id":{},"reason":"cancelled"}}}}"#,
        call.id.to_json()
    );
    assert!(
        raws.contains(&answer.as_str()) && raws.contains(&abandon.as_str()),
        "{raws:#?}"
    );
    shim.composition_update(&call.id, 2, json!("late")).unwrap();
    shim.respond(&call.id, json!({"value": "late"})).unwrap();
    assert_eq!(tool_text(&shim.tool("plain", json!({}))), "plain");
    shim.check_clean().expect("only valid frames on stdout");
    shim.shutdown();
}

#[test]
fn python_api04_reads_the_context_and_commits_the_store() {
    let (mut shim, _dir, _) = api04();
    let id = shim.send_tool("compose_context", json!({}));
    let (child_id, method, params) = child(&mut shim);
    assert_eq!(
        (method.as_str(), params),
        ("composition/context", json!({"parent_request_id": id}))
    );
    let tools =
        json!([{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]);
    shim.respond(
        &child_id,
        json!({"tools": tools, "store": {"seen": 1}, "limits": {"timeout_ms": 30000, "max_calls": 256}}),
    )
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&tool_text(&shim.reply(id))).unwrap(),
        json!({"tools": tools, "store": {"seen": 1}, "limits": {"timeout_ms": 30000, "max_calls": 256}})
    );
    crate::api_04_composition::store_round_trip(&mut shim);
    shim.shutdown();
}

#[test]
fn python_api04_refuses_before_anything_is_written() {
    let (mut shim, _dir, _) = api04();
    for (case, text) in [
        (
            "name",
            "composition call tool name 'not a name' is not an identifier",
        ),
        (
            "arguments",
            "composition call arguments have 131083 bytes; the limit is 128 KiB",
        ),
        (
            "twice",
            "composition store key 'k' appears twice in one commit",
        ),
    ] {
        let reply = shim.tool("compose_bad", json!({"case": case}));
        assert!(reply.before.is_empty(), "{case}: {}", reply.frame.raw);
        let result = expect_result(&reply);
        assert_eq!(result["is_error"], true, "{case}: {}", reply.frame.raw);
        let message = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(message.starts_with(text), "{case}: {message}");
    }
    // From a command: refused by the SDK, no frame.
    let context = shim.context();
    let reply = shim.call(
        "command/execute",
        json!({"name": "compose", "arguments": [], "context": context}),
    );
    assert!(reply.before.is_empty(), "{}", reply.frame.raw);
    assert_eq!(
        (
            expect_error(&reply).code,
            expect_error(&reply).message.as_str()
        ),
        (
            -32602,
            "composition.call is only available while serving a model tool call"
        )
    );
    shim.shutdown();
}

#[test]
fn python_api04_hooks_answer_their_0_4_members() {
    let (mut shim, _dir, _) = api04();
    let decision = |cost: u64| {
        json!({"decision": {"phase": "idle", "warm_cost_microdollars": cost,
            "miss_cost_microdollars": 9000, "continuation_probability": 0.5,
            "expected_savings_microdollars": -3, "economics_available": true, "action": "warm"},
            "model": {"id": "m"}})
    };
    let reply = hook(&mut shim, "cache_warming_decision", decision(9000));
    assert_eq!(
        reply.frame.raw,
        hook_line(&reply, r#","cache_warming_decision":"stop""#)
    );
    let reply = hook(&mut shim, "cache_warming_decision", decision(1));
    assert_eq!(reply.frame.raw, hook_line(&reply, ""));

    // Two 16-byte PNG frames, base64.
    let reply = hook(
        &mut shim,
        "compaction_strategy",
        json!({"model_id": "m", "text": "2"}),
    );
    assert_eq!(
        reply.frame.raw,
        hook_line(
            &reply,
            r#","compaction_frames":["iVBORw0KGgoAAQIDBAUGBw==","iVBORw0KGgoAAQIDBAUGBw=="]"#
        )
    );
    let reply = hook(
        &mut shim,
        "compaction_strategy",
        json!({"model_id": "m", "text": "0"}),
    );
    assert_eq!(reply.frame.raw, hook_line(&reply, ""));
    let reply = hook(
        &mut shim,
        "compaction_strategy",
        json!({"model_id": "m", "text": "gif"}),
    );
    assert_eq!(
        (
            expect_error(&reply).code,
            expect_error(&reply).message.as_str()
        ),
        (-32603, "compaction frame 1 is not a PNG image")
    );

    let request = |payload: Value| json!({"operation_id": "op-1", "model": {"id": "m", "provider": "p", "api": "chat"}, "payload": payload});
    let reply = hook(
        &mut shim,
        "before_provider_request",
        request(json!({"messages": []})),
    );
    assert_eq!(
        reply.frame.raw,
        hook_line(
            &reply,
            r#","provider_payload":{"messages":[],"temperature":0}"#
        )
    );
    let reply = hook(
        &mut shim,
        "before_provider_request",
        request(json!({"scalar": true})),
    );
    assert_eq!(expect_error(&reply).code, -32603, "{}", reply.frame.raw);

    let reply = hook(
        &mut shim,
        "before_provider_headers",
        json!({"operation_id": "op-1", "model": {"id": "m"}, "headers": {"x-secret": "s"}}),
    );
    assert_eq!(
        reply.frame.raw,
        hook_line(
            &reply,
            r#","provider_headers":{"x-trace":"on","accept":["a/b","c/d"],"x-secret":null}"#
        )
    );
    let reply = hook(
        &mut shim,
        "after_provider_response",
        json!({"operation_id": "op-1", "model": {"id": "m"}, "status": 200, "headers": {}}),
    );
    assert_eq!(reply.frame.raw, hook_line(&reply, ""));
    shim.shutdown();
}
