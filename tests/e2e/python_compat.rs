//! The scenarios of octet's own Python SDK tests (API 0.1 and 0.2) against
//! the Python guest SDK, built as a component and run by the real binary:
//! handler argument shapes, return conversions and their texts,
//! negotiation, the concurrency cap, cancellation, progress sequences,
//! confirmations and input, dynamic catalogs, shutdown and EOF.
//!
//! The guest is `tests/guests/python-compat/extension.py`, an app in the
//! SDK's idiom with no pinned API version (it follows the host's, as a
//! process-based extension follows `OCTET_EXTENSION_API_VERSION`), built by
//! `scripts/build-guests-python compat` into
//! `target/components/python/compat.wasm`. It declares
//! `max_concurrent_requests=2`; tests that rely on one instance's state
//! offer a limit of 1.

use crate::support::*;
use crate::support::{ChildAnswer as Answer, serve_children as serve};
use octet_hostsim::{ApiVersion, Frame, FrameKind, ManifestSpec, Reply};
use serde_json::{Value, json};
use tempfile::TempDir;

const TOOLS: &[&str] = &[
    "shape_one",
    "shape_two",
    "shape_none",
    "shape_var",
    "convert",
    "ambient",
    "count",
    "wait",
    "hold",
    "input",
    "report",
    "swap",
    "features",
    "log",
    "break_shutdown",
];

/// A Python guest (`target/components/python/<component>.wasm`) with
/// `manifest` written beside a private copy of nothing but the manifest;
/// the returned directory must outlive the shim.
pub fn python_shim(component: &str, manifest: ManifestSpec) -> (Shim, TempDir) {
    let component = crate::support::component(&format!("python/{component}"));
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let component_arg = component.to_string_lossy().into_owned();
    let toml = manifest.to_extension_toml("octet-wasm", &["run", &component_arg]);
    std::fs::write(dir.path().join("extension.toml"), toml).expect("write the manifest");
    (Shim::start(dir.path(), &component_arg, manifest), dir)
}

fn manifest(api: ApiVersion) -> ManifestSpec {
    ManifestSpec::new("python-compat", api)
        .description("The Python SDK's test scenarios")
        .tools(TOOLS)
        .commands(&["shape", "convert", "seen"])
        .hooks(&["before_prompt", "after_response"])
        .ui(&["status", "footer"])
        .context(true)
        .tool_renderers(&["shape_one"])
        .confirmations(true)
}

/// The compat guest initialized with `optional` features offered (the
/// hostsim default when `None`) and a concurrency `limit`.
fn start(api: ApiVersion, optional: Option<&[&str]>, limit: u64) -> (Shim, TempDir) {
    let (mut shim, dir) = python_shim("compat", manifest(api));
    let mut offer = shim.offer().max_concurrent_requests(limit);
    if let Some(optional) = optional {
        offer = offer.optional_features(optional);
    }
    let params = offer.to_json();
    expect_result(&shim.initialize_with(params));
    (shim, dir)
}

fn text_of(shim: &mut Shim, tool: &str, arguments: Value) -> String {
    let reply = shim.tool(tool, arguments);
    tool_text(&reply)
}

fn json_of(shim: &mut Shim, tool: &str, arguments: Value) -> Value {
    serde_json::from_str(&text_of(shim, tool, arguments)).expect("the guest answers JSON")
}

fn request(shim: &mut Shim, method: &str, mut params: Value) -> Reply {
    params["context"] = shim.context();
    shim.call(method, params)
}

fn line(id: u64, member: &str, value: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"{member}":{value}}}"#)
}

/// Waits for the next frame that is not the reply to anything: a child
/// request or a notification.
fn next_child(shim: &mut Shim) -> Frame {
    let frame = shim.recv(REQUEST_TIMEOUT).expect("a child request");
    assert!(
        matches!(frame.kind, FrameKind::Request { .. }),
        "expected a child request, got {}",
        frame.raw
    );
    frame
}

/// Sends `wait` and returns once its handler is waiting (it reports
/// progress first).
fn start_wait(shim: &mut Shim, seconds: f64) -> u64 {
    let id = shim.send_tool("wait", json!({"seconds": seconds}));
    let frame = shim.recv(REQUEST_TIMEOUT).expect("the wait's progress");
    assert_eq!(frame.method(), Some("$/progress"), "{}", frame.raw);
    assert_eq!(frame.params()["request_id"], id);
    id
}

fn child_id(frame: &Frame) -> octet_hostsim::ChildId {
    match &frame.kind {
        FrameKind::Request { id, .. } => id.clone(),
        _ => unreachable!("next_child returns requests"),
    }
}

#[test]
fn handlers_get_the_sdks_arguments() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let context = shim.context();
    assert_eq!(
        json_of(&mut shim, "shape_one", json!({"a": 1})),
        json!({"args": {"a": 1}})
    );
    // Two parameters: the arguments and the request's whole context.
    assert_eq!(
        json_of(&mut shim, "shape_two", json!({"a": 1})),
        json!({"args": {"a": 1}, "context": context})
    );
    assert_eq!(text_of(&mut shim, "shape_none", json!({})), "no arguments");
    assert_eq!(
        json_of(&mut shim, "shape_var", json!({"a": 1})),
        json!({"count": 2, "first": {"a": 1}})
    );
    let reply = request(
        &mut shim,
        "command/execute",
        json!({"name": "shape", "arguments": ["x", "y"]}),
    );
    let text: Value =
        serde_json::from_str(expect_result(&reply)["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, json!({"arguments": ["x", "y"], "context": context}));
    let reply = request(
        &mut shim,
        "hook/run",
        json!({"hook": "before_prompt", "payload": {"prompt": "hi"}}),
    );
    let content = &expect_result(&reply)["context"][0]["content"];
    let seen: Value = serde_json::from_str(content.as_str().unwrap()).unwrap();
    assert_eq!(
        seen,
        json!({"payload": {"prompt": "hi"}, "context": context})
    );
    // Context, status and renderer handlers get their whole params object.
    let reply = request(&mut shim, "context/collect", json!({"prompt": "hi"}));
    let item = &expect_result(&reply)[0];
    assert_eq!(item["placement"], "prompt_prefix");
    let seen: Value = serde_json::from_str(item["content"].as_str().unwrap()).unwrap();
    assert_eq!(seen, json!({"prompt": "hi", "context": context}));
    let reply = request(&mut shim, "status/collect", json!({"surface": "status"}));
    let status = expect_result(&reply);
    let seen: Value = serde_json::from_str(status["text"].as_str().unwrap()).unwrap();
    assert_eq!(seen, json!({"surface": "status", "context": context}));
    assert_eq!(status["priority"], 3);
    let reply = request(
        &mut shim,
        "tool/render",
        json!({"name": "shape_one", "arguments": {"a": 1}, "output": "out", "is_error": false}),
    );
    let segment = &expect_result(&reply)["segments"][0];
    let seen: Value = serde_json::from_str(segment["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        seen,
        json!({"name": "shape_one", "arguments": {"a": 1}, "output": "out", "is_error": false,
               "context": context})
    );
    // Lifecycle handlers get the notification's params.
    shim.notify(
        "turn/started",
        json!({"session_id": "s-1", "run_id": "r-1", "turn_id": "t-1"}),
    )
    .expect("notify");
    let reply = request(
        &mut shim,
        "command/execute",
        json!({"name": "seen", "arguments": []}),
    );
    let seen: Value =
        serde_json::from_str(expect_result(&reply)["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        seen,
        json!([{"session_id": "s-1", "run_id": "r-1", "turn_id": "t-1"}])
    );
    // The ambient request: its id and one token, as the handler sees them.
    let id = shim.send_tool("ambient", json!({}));
    let reply = shim.reply(id);
    let ambient: Value = serde_json::from_str(&tool_text(&reply)).unwrap();
    assert_eq!(
        ambient,
        json!({"current_request_id": id, "request_id": id, "same_token": true,
               "token_request_id": id, "cancelled": false, "reason": null})
    );
    shim.shutdown();
}

#[test]
fn api_0_1_results_and_refusals_are_the_sdks() {
    let (mut shim, _dir) = python_shim("compat", manifest(ApiVersion::V0_1));
    let result = shim.initialize();
    assert!(result.get("protocol").is_none(), "{result}");
    for (kind, content, is_error) in [
        ("string", "plain text", false),
        ("none", "", false),
        ("number", "42", false),
        ("list", "['a', 'b']", false),
        ("dict", "via dict", true),
        ("dict_extra", "x", false),
        ("dict_list", "[{'type': 'text', 'text': 'part'}]", false),
        ("raise", "boom", true),
    ] {
        let reply = shim.tool("convert", json!({"kind": kind}));
        let metadata = if kind == "dict" {
            json!({"k": 1})
        } else {
            json!({})
        };
        assert_eq!(
            *expect_result(&reply),
            json!({"content": content, "is_error": is_error, "metadata": metadata}),
            "{kind}: {}",
            reply.frame.raw
        );
    }
    // 0.1 contexts carry no resource owner.
    let seen = json_of(&mut shim, "shape_two", json!({}));
    assert!(seen["context"].get("resource_owner").is_none(), "{seen}");
    // A 0.1 confirmation has a numeric id and no parent.
    let id = shim.send_tool("hold", json!({"prompt": "Go?"}));
    let child = next_child(&mut shim);
    assert!(child.value["id"].is_u64(), "{}", child.raw);
    assert_eq!(
        *child.params(),
        json!({"prompt": "Go?", "destructive": false, "default": false})
    );
    shim.respond(&child_id(&child), json!({"confirmed": true}))
        .expect("respond");
    assert_eq!(tool_text(&shim.reply(id)), "approved");
    // What only API 0.2 has is refused before anything is written.
    for (tool, message) in [
        ("input", "input/request requires extension API 0.2"),
        (
            "report",
            "API 0.2 feature is not negotiated: request_progress",
        ),
    ] {
        let reply = shim.tool(tool, json!({}));
        assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
        assert_eq!(
            reply.frame.raw,
            line(
                reply.frame.response_id().unwrap(),
                "error",
                &format!(r#"{{"code":-32601,"message":"{message}"}}"#)
            )
        );
    }
    shim.shutdown();
}

#[test]
fn api_0_2_results_conversions_and_texts_are_the_sdks() {
    let offered = ["request_progress", "dynamic_tools"];
    let (mut shim, _dir) = start(ApiVersion::V0_2, Some(&offered), 1);
    for (kind, text) in [
        ("string", "plain text"),
        ("number", "42"),
        ("list", "['a', 'b']"),
        ("dict_list", "part"),
    ] {
        let reply = shim.tool("convert", json!({"kind": kind}));
        assert_eq!(
            *expect_result(&reply),
            json!({"content": [{"type": "text", "text": text}], "is_error": false, "metadata": {}}),
            "{kind}"
        );
    }
    let reply = shim.tool("convert", json!({"kind": "parts"}));
    assert_eq!(
        *expect_result(&reply),
        json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
               "is_error": false, "metadata": {"k": 1}})
    );
    let reply = shim.tool("convert", json!({"kind": "raise"}));
    assert_eq!(
        reply.frame.raw,
        line(
            reply.frame.response_id().unwrap(),
            "result",
            r#"{"content":[{"type":"text","text":"boom"}],"is_error":true,"metadata":{}}"#
        )
    );
    // What the SDK refuses: -32603 with its text, no data.
    for (kind, message) in [
        ("none", "API 0.2 tool content must not be empty"),
        ("empty", "API 0.2 tool content must not be empty"),
        ("too_many", "API 0.2 tool content exceeds 256 parts"),
        (
            "media_only",
            "API 0.2 tool content requires an explicit text part",
        ),
        ("media", "media tool content requires artifacts negotiation"),
        ("unknown_part", "unknown text content fields: ['extra']"),
        (
            "dict_extra",
            "unknown API 0.2 tool result fields: ['extra']",
        ),
        ("bad_is_error", "tool is_error must be a boolean"),
        (
            "structured",
            "structured_content requires a declared output_schema",
        ),
    ] {
        let reply = shim.tool("convert", json!({"kind": kind}));
        assert_eq!(
            reply.frame.raw,
            line(
                reply.frame.response_id().unwrap(),
                "error",
                &format!(r#"{{"code":-32603,"message":"{message}"}}"#)
            ),
            "{kind}"
        );
    }
    // Explicit errors are answered as raised.
    let reply = shim.tool("convert", json!({"kind": "rpc"}));
    assert_eq!(
        reply.frame.raw,
        line(
            reply.frame.response_id().unwrap(),
            "error",
            r#"{"code":-32042,"message":"custom failure","data":{"why":"asked"}}"#
        )
    );
    let reply = shim.tool("convert", json!({"kind": "cancelled"}));
    assert_eq!(
        reply.frame.raw,
        line(
            reply.frame.response_id().unwrap(),
            "error",
            r#"{"code":-32800,"message":"request cancelled","data":{"reason":"custom"}}"#
        )
    );
    shim.shutdown();
}

#[test]
fn other_replies_and_wire_texts_are_the_sdks() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let command = |shim: &mut Shim, kind: &str| {
        request(
            shim,
            "command/execute",
            json!({"name": "convert", "arguments": [kind]}),
        )
    };
    let reply = command(&mut shim, "none");
    let id = reply.frame.response_id().unwrap();
    assert_eq!(
        reply.frame.raw,
        line(
            id,
            "result",
            r#"{"text":"","notifications":[],"context":[]}"#
        )
    );
    assert_eq!(expect_result(&command(&mut shim, "number"))["text"], "7");
    let reply = command(&mut shim, "dict");
    assert_eq!(
        reply.frame.raw,
        line(
            reply.frame.response_id().unwrap(),
            "result",
            concat!(
                r#"{"text":"5","notifications":[{"level":"info","title":null,"message":"untitled"},"#,
                r#"{"level":"warning","title":"T","message":"titled"}],"#,
                r#""context":[{"label":"l","content":"c","placement":"prompt_suffix"}]}"#
            )
        )
    );
    // A failed handler: -32603 `internal error` without data; the reason
    // is in a log record.
    let records = shim.stderr().records().len();
    let reply = command(&mut shim, "raise");
    assert_eq!(
        reply.frame.raw,
        line(
            reply.frame.response_id().unwrap(),
            "error",
            r#"{"code":-32603,"message":"internal error"}"#
        )
    );
    let record = shim.wait_new_record(records, "a failed command");
    assert_eq!(
        record.message(),
        Some("command handler failed"),
        "{}",
        record.text
    );
    assert_eq!(record.field("error"), Some(&json!("command broke")));
    assert_eq!(record.field("command"), Some(&json!("convert")));
    for (method, params, message) in [
        (
            "hook/run",
            json!({"hook": "before_prompt", "payload": {"prompt": "not an object"}}),
            "hook handler must return an object",
        ),
        (
            "context/collect",
            json!({"prompt": "not a list"}),
            "context handler must return an array",
        ),
        (
            "status/collect",
            json!({"surface": "footer"}),
            "status handler must return an object or null",
        ),
    ] {
        let reply = request(&mut shim, method, params);
        assert_eq!(
            reply.frame.raw,
            line(
                reply.frame.response_id().unwrap(),
                "error",
                &format!(r#"{{"code":-32603,"message":"{message}"}}"#)
            ),
            "{method}"
        );
    }
    let render = |shim: &mut Shim, output: &str| {
        let reply = request(
            shim,
            "tool/render",
            json!({"name": "shape_one", "arguments": {}, "output": output, "is_error": false}),
        );
        expect_result(&reply)["segments"].clone()
    };
    assert_eq!(
        render(&mut shim, "plain"),
        json!([{"text": "plain text", "style_role": null}])
    );
    // A list is not a segments object: the SDK shows its text.
    assert_eq!(
        render(&mut shim, "list"),
        json!([{"text": "[{'text': 'a'}]", "style_role": null}])
    );
    let reply = request(
        &mut shim,
        "hook/run",
        json!({"hook": "after_response", "payload": {"response": "r"}}),
    );
    assert_eq!(
        *expect_result(&reply),
        json!({"disposition": {"action": "continue"}, "context": [], "notifications": []})
    );
    let reply = shim.call("not/a/method", json!({}));
    assert_eq!(
        reply.frame.raw,
        line(
            reply.frame.response_id().unwrap(),
            "error",
            r#"{"code":-32601,"message":"unknown method: not/a/method"}"#
        )
    );
    let reply = shim.call("menu/collect", json!({"context": shim.context()}));
    assert_eq!(expect_error(&reply).message, "unknown method: menu/collect");
    shim.shutdown();
}

#[test]
fn negotiation_is_the_sdks() {
    let (mut shim, _dir) = python_shim("compat", manifest(ApiVersion::V0_2));
    let offered = [
        "request_progress",
        "artifacts",
        "lifecycle_events",
        "policy_intents",
        "dynamic_tools",
        "future_optional_feature",
    ];
    let params = shim
        .offer()
        .optional_features(&offered)
        .max_concurrent_requests(12)
        .to_json();
    let result = expect_result(&shim.initialize_with(params)).clone();
    let protocol = protocol(&result);
    assert_eq!(
        protocol["features"],
        json!([
            "request_cancellation",
            "content_parts",
            "request_progress",
            "artifacts",
            "lifecycle_events",
            "policy_intents",
            "dynamic_tools"
        ]),
        "{result}"
    );
    // The SDK's cap (2) under the host's 12.
    assert_eq!(protocol["limits"], json!({"max_concurrent_requests": 2}));
    assert_eq!(protocol["lifecycle_events"], json!(["turn/started"]));
    let features = json_of(&mut shim, "features", json!({}));
    assert_eq!(features["negotiated_concurrency"], 2);
    assert_eq!(features["api_version"], "0.2");
    assert_eq!(
        features["negotiated_features"],
        json!([
            "artifacts",
            "content_parts",
            "dynamic_tools",
            "lifecycle_events",
            "policy_intents",
            "request_cancellation",
            "request_progress"
        ])
    );
    assert_eq!(
        features["workspace"],
        json!(shim.workspace.to_string_lossy())
    );
    assert_eq!(features["host"]["model"], "m-large");
    shim.shutdown();

    // A required feature nobody implements refuses the host.
    let (mut shim, _dir) = python_shim("compat", manifest(ApiVersion::V0_2));
    let mut params = shim.offer().to_json();
    params["protocol"]["required_features"] =
        json!(["request_cancellation", "content_parts", "telepathy"]);
    let reply = shim.initialize_with(params);
    let error = expect_error(&reply);
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32000, "required API 0.2 features are unsupported")
    );
    assert_eq!(
        error.data,
        Some(json!({"unsupported_features": ["telepathy"]}))
    );
}

#[test]
fn concurrent_calls_run_up_to_the_negotiated_limit() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 12);
    // Two calls are inside their handlers at once: both ask the user.
    let first = shim.send_tool("hold", json!({"prompt": "first"}));
    let first_child = next_child(&mut shim);
    let second = shim.send_tool("hold", json!({"prompt": "second"}));
    let second_child = next_child(&mut shim);
    assert_eq!(first_child.params()["parent_request_id"], first);
    assert_eq!(second_child.params()["parent_request_id"], second);
    // A third waits for a free slot: its answer follows the first's.
    let third = shim.send_tool("shape_none", json!({}));
    shim.respond(&child_id(&first_child), json!({"confirmed": true}))
        .expect("respond");
    let responses = shim.responses(&[first, third], REQUEST_TIMEOUT);
    assert_eq!(responses.order, vec![first, third]);
    shim.respond(&child_id(&second_child), json!({"confirmed": false}))
        .expect("respond");
    assert_eq!(tool_text(&shim.reply(second)), "denied");
    shim.shutdown();
}

#[test]
fn with_a_limit_of_one_calls_wait_and_a_queued_cancel_never_runs() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let held = shim.send_tool("hold", json!({}));
    let child = next_child(&mut shim);
    let queued = shim.send_tool("count", json!({}));
    shim.cancel(queued, "superseded").expect("cancel");
    let reply = shim.reply(queued);
    assert_eq!(
        reply.frame.raw,
        line(
            queued,
            "error",
            r#"{"code":-32800,"message":"request cancelled","data":{"reason":"superseded"}}"#
        )
    );
    let waiting = shim.send_tool("count", json!({}));
    shim.respond(&child_id(&child), json!({"confirmed": true}))
        .expect("respond");
    let responses = shim.responses(&[held, waiting], REQUEST_TIMEOUT);
    assert_eq!(responses.order, vec![held, waiting]);
    // The cancelled call never reached its handler.
    assert_eq!(
        responses.outcome(waiting).as_ref().unwrap()["content"][0]["text"],
        "1"
    );
    shim.shutdown();
}

#[test]
fn a_running_handler_observes_cancellation_and_keeps_its_instance() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let id = start_wait(&mut shim, 30.0);
    shim.cancel(id, "user").expect("cancel");
    let reply = shim.reply(id);
    assert_eq!(
        reply.frame.raw,
        line(
            id,
            "error",
            r#"{"code":-32800,"message":"request cancelled","data":{"reason":"user"}}"#
        )
    );
    // The handler saw it (+100) and raised; the same instance counts on.
    assert_eq!(text_of(&mut shim, "count", json!({})), "101");
    // A result that won the race stays the only answer.
    let id = shim.send_tool("count", json!({}));
    assert_eq!(tool_text(&shim.reply(id)), "102");
    shim.cancel(id, "late").expect("cancel");
    let reply = shim.tool("shape_none", json!({}));
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    shim.shutdown();
}

#[test]
fn progress_sequences_are_monotonic_per_request() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 12);
    let ids = [
        shim.send_tool("report", json!({"decorate": true})),
        shim.send_tool("report", json!({"decorate": true})),
    ];
    let responses = shim.responses(&ids, REQUEST_TIMEOUT);
    for id in ids {
        let frames: Vec<&Value> = responses
            .others
            .iter()
            .filter(|frame| frame.method() == Some("$/progress"))
            .map(|frame| frame.params())
            .filter(|params| params["request_id"] == id)
            .collect();
        assert_eq!(
            frames,
            vec![
                &json!({"request_id": id, "sequence": 1, "event": {"type": "status",
                        "message": format!("start {id}"), "current": 1, "total": 2}}),
                &json!({"request_id": id, "sequence": 2, "event": {"type": "output",
                        "stream": "stderr", "encoding": "utf8", "data": id.to_string()}}),
                &json!({"request_id": id, "sequence": 3, "event": {"type": "decoration",
                        "label": "Reporting", "detail": "detail"}}),
            ]
        );
        assert_eq!(
            responses.outcome(id).as_ref().unwrap()["content"][0]["text"],
            "[1, 2, 3]"
        );
    }
    // Without `progress_decoration` offered the SDK refuses decorations.
    shim.shutdown();
    let (mut shim, _dir) = start(ApiVersion::V0_2, Some(&["request_progress"]), 1);
    let reply = shim.tool("report", json!({"decorate": true}));
    assert_eq!(
        expect_error(&reply).message,
        "API 0.2 feature is not negotiated: progress_decoration"
    );
    shim.shutdown();
}

#[test]
fn confirmations_and_input_are_parent_correlated() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let id = shim.send_tool(
        "hold",
        json!({"prompt": "Publish?", "detail": "3 files", "destructive": true}),
    );
    let child = next_child(&mut shim);
    assert_eq!(child.method(), Some("confirmation/request"));
    assert!(child.value["id"].is_string(), "{}", child.raw);
    assert_eq!(
        *child.params(),
        json!({"parent_request_id": id, "prompt": "Publish?", "detail": "3 files",
               "destructive": true, "default": false})
    );
    shim.respond(&child_id(&child), json!({"confirmed": false}))
        .expect("respond");
    assert_eq!(tool_text(&shim.reply(id)), "denied");

    let secret = "correct horse battery staple";
    for (answer, expected) in [
        (json!({"value": null}), Ok("none".to_owned())),
        (
            json!({"value": secret}),
            Ok(format!("got {} characters", secret.len())),
        ),
        (
            json!({"value": "x", "unexpected": true}),
            Err("invalid input response"),
        ),
        (
            json!({"value": "v".repeat(256 * 1024 + 1)}),
            Err("input response exceeds the 256 KiB bound"),
        ),
    ] {
        let id = shim.send_tool("input", json!({"prompt": "Password:", "secret": true}));
        let child = next_child(&mut shim);
        assert_eq!(
            *child.params(),
            json!({"parent_request_id": id, "prompt": "Password:", "secret": true})
        );
        shim.respond(&child_id(&child), answer).expect("respond");
        let reply = shim.reply(id);
        match expected {
            Ok(text) => assert_eq!(tool_text(&reply), text),
            Err(message) => {
                assert_eq!(
                    reply.frame.raw,
                    line(
                        id,
                        "error",
                        &format!(r#"{{"code":-32603,"message":"{message}"}}"#)
                    )
                );
            }
        }
    }
    assert!(!stderr_text(&shim).contains(secret));

    // Cancelling the parent cancels its pending child with the reason.
    let id = shim.send_tool("input", json!({}));
    let child = next_child(&mut shim);
    shim.cancel(id, "user").expect("cancel");
    let mut cancelled_child = None;
    let mut answered = false;
    while cancelled_child.is_none() || !answered {
        let frame = shim.recv(REQUEST_TIMEOUT).expect("a frame");
        if frame.response_id() == Some(id) {
            assert_eq!(expect_error_frame(&frame), -32800, "{}", frame.raw);
            answered = true;
        } else if frame.method() == Some("$/cancelRequest") {
            cancelled_child = Some(frame.params().clone());
        }
    }
    assert_eq!(
        cancelled_child.unwrap(),
        json!({"id": child.value["id"], "reason": "user"})
    );
    shim.shutdown();
}

fn expect_error_frame(frame: &Frame) -> i64 {
    match frame.outcome() {
        Some(Err(error)) => error.code,
        _ => panic!("expected an error, got {}", frame.raw),
    }
}

#[test]
fn dynamic_catalogs_commit_only_what_the_host_accepts() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let call = |shim: &mut Shim, revision: u64| {
        let mut params = shim.tool_params("shape_one", json!({"v": 1}));
        params["catalog_revision"] = json!(revision);
        let id = shim.send_request("tool/call", params);
        shim.reply(id)
    };
    // The host refuses: nothing changes locally.
    let id = shim.send_tool("swap", json!({}));
    let (reply, children) = serve(&mut shim, id, |_| Answer::Error(-32602, "catalog rejected"));
    assert_eq!(children[0].method(), Some("tools/register"));
    assert!(children[0].params().get("parent_request_id").is_none());
    assert_eq!(
        tool_text(&reply),
        "rejected -32602: catalog rejected; revision 0"
    );
    assert_eq!(tool_text(&call(&mut shim, 0)), r#"{"args": {"v": 1}}"#);
    let reply = call(&mut shim, 1);
    assert_eq!(
        expect_error(&reply).message,
        "unknown or retired tool catalog revision: 1"
    );
    // Accepted: revision 1 has the new handler, revision 0 keeps the old.
    let id = shim.send_tool("swap", json!({}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"revision": 1, "tools": TOOLS}))
    });
    assert_eq!(
        children[0].params()["tools"],
        json!([{"name": "shape_one", "description": "Replaced", "parameters": {"type": "object"}}])
    );
    let mut names = TOOLS.to_vec();
    names.sort_unstable();
    assert_eq!(
        tool_text(&reply),
        format!("revision 1: {}", names.join(","))
    );
    assert_eq!(tool_text(&call(&mut shim, 1)), r#"replaced: {"v": 1}"#);
    assert_eq!(tool_text(&call(&mut shim, 0)), r#"{"args": {"v": 1}}"#);
    shim.shutdown();

    // Without `dynamic_tools` the SDK refuses before anything is written.
    let (mut shim, _dir) = start(ApiVersion::V0_2, Some(&["request_progress"]), 1);
    let reply = shim.tool("swap", json!({}));
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    assert_eq!(
        tool_text(&reply),
        "rejected -32601: API 0.2 feature is not negotiated: dynamic_tools; revision 0"
    );
    let reply = call(&mut shim, 0);
    assert_eq!(
        expect_error(&reply).message,
        "tool/call catalog_revision requires negotiated dynamic_tools"
    );
    shim.shutdown();
}

#[test]
fn shutdown_cancels_the_rest_then_runs_the_handler_with_params() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let call = start_wait(&mut shim, 30.0);
    let records = shim.stderr().records().len();
    let id = shim.send_request("shutdown", json!({"drain_timeout_ms": 0}));
    let responses = shim.responses(&[call, id], SHUTDOWN_ACK + HOST_GRACE);
    assert_eq!(responses.order, vec![call, id]);
    assert_eq!(
        responses.frame(call).raw,
        line(
            call,
            "error",
            r#"{"code":-32800,"message":"request cancelled","data":{"reason":"shutdown"}}"#
        )
    );
    assert_eq!(responses.frame(id).raw, line(id, "result", "{}"));
    let record = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "shutdown handler ran")
        .unwrap_or_else(|| {
            panic!(
                "no shutdown record after {records}:\n{}",
                stderr_text(&shim)
            )
        });
    assert_eq!(record.field("params"), Some(&json!({})));
    assert_eq!(record.field("context"), Some(&json!({})));
    assert_eq!(shim.exit_status(EXIT_AFTER_SHUTDOWN).code(), Some(0));

    // A failing shutdown handler: -32603 `shutdown failed`, no data.
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    assert_eq!(text_of(&mut shim, "break_shutdown", json!({})), "armed");
    let id = shim.send_request("shutdown", json!({}));
    let reply = shim.reply(id);
    assert_eq!(
        reply.frame.raw,
        line(
            id,
            "error",
            r#"{"code":-32603,"message":"shutdown failed"}"#
        )
    );
    let record = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "shutdown handler failed")
        .expect("the reason is logged");
    assert_eq!(record.field("error"), Some(&json!("shutdown broke")));
    assert_eq!(shim.exit_status(EXIT_AFTER_SHUTDOWN).code(), Some(0));
}

#[test]
fn stdin_eof_drains_in_flight_handlers() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    let id = start_wait(&mut shim, 0.2);
    shim.close_stdin();
    let reply = shim.reply(id);
    assert_eq!(tool_text(&reply), "waited");
    assert_eq!(shim.exit_status(EXIT_AFTER_EOF).code(), Some(0));
}

#[test]
fn ext_log_writes_structured_records() {
    let (mut shim, _dir) = start(ApiVersion::V0_2, None, 1);
    assert_eq!(text_of(&mut shim, "log", json!({})), "logged");
    let error = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "error record")
        .expect("the error record");
    assert_eq!(error.level(), Some("error"));
    assert_eq!(error.field("n"), Some(&json!(4)));
    assert_eq!(error.field("source"), Some(&json!("guest")));
    assert!(
        error
            .field("odd")
            .and_then(Value::as_str)
            .is_some_and(|odd| odd.starts_with("<object")),
        "{}",
        error.text
    );
    let records = shim.stderr().records();
    let mine: Vec<(&str, &Value)> = records
        .iter()
        .filter(|r| r.get("source") == Some(&json!("guest")))
        .filter_map(|r| Some((r.get("message")?.as_str()?, r.get("n")?)))
        .collect();
    assert_eq!(
        mine,
        vec![
            ("info record", &json!(2)),
            ("warning record", &json!(3)),
            ("error record", &json!(4))
        ]
    );
    shim.shutdown();
}
