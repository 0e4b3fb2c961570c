//! Every row of `hello-world.md` (API 0.1) through the real binary.

use crate::support::{EXIT_AFTER_EOF, Shim, expect_result, raws, tool_text};
use serde_json::{Value, json};

const INITIALIZE_RESULT: &str = r#"{"api_version":"0.1","tools":[{"name":"hello_world","description":"Greet someone from an executable extension","parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}}],"commands":[{"name":"hello","description":"Show a greeting notification","usage":"/hello [name]"}]}"#;

fn ready() -> Shim {
    let mut shim = Shim::hello_world();
    shim.initialize();
    shim
}

#[test]
fn initialize_result_is_byte_exact() {
    let mut shim = Shim::hello_world();
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    assert!(
        reply.before.is_empty(),
        "frames before initialize: {:?}",
        raws(&reply.before)
    );
    assert_eq!(
        reply.frame.raw,
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{INITIALIZE_RESULT}}}"#)
    );
}

#[test]
fn tool_call_notifies_then_greets() {
    let mut shim = ready();
    let reply = shim.tool("hello_world", json!({"name": "Ada"}));
    assert_eq!(
        raws(&reply.before),
        [
            r#"{"jsonrpc":"2.0","method":"notification","params":{"level":"success","message":"hello_world greeted Ada"}}"#
        ]
    );
    // API 0.1 always sends content, is_error and metadata
    // (docs/protocol.md#tool-results).
    assert_eq!(
        *expect_result(&reply),
        json!({"content": "Hello, Ada!", "is_error": false, "metadata": {}}),
        "{}",
        reply.frame.raw
    );
}

#[test]
fn tool_call_defaults_the_name() {
    let mut shim = ready();
    let reply = shim.tool("hello_world", json!({}));
    assert_eq!(tool_text(&reply), "Hello, tinkerer!");
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], false, "{}", reply.frame.raw);
    for frame in &reply.before {
        assert_eq!(
            frame.method(),
            Some("notification"),
            "unexpected frame {}",
            frame.raw
        );
    }
}

#[test]
fn command_greets_with_and_without_arguments() {
    let mut shim = ready();
    let context = shim.context();
    let reply = shim.call(
        "command/execute",
        json!({"name": "hello", "arguments": ["Ada"], "context": context}),
    );
    assert_eq!(
        expect_result(&reply)["text"],
        "Hello, Ada!",
        "{}",
        reply.frame.raw
    );
    let reply = shim.call(
        "command/execute",
        json!({"name": "hello", "arguments": [], "context": context}),
    );
    assert_eq!(
        expect_result(&reply)["text"],
        "Hello, tinkerer!",
        "{}",
        reply.frame.raw
    );
}

#[test]
fn hooks_continue() {
    let mut shim = ready();
    let context = shim.context();
    for (hook, payload) in [
        ("before_prompt", json!({"prompt": "hi"})),
        ("after_response", json!({"response": "hello"})),
    ] {
        let reply = shim.call(
            "hook/run",
            json!({"hook": hook, "payload": payload, "context": context}),
        );
        assert_eq!(
            reply.frame.raw,
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"disposition":{{"action":"continue"}},"context":[],"notifications":[]}}}}"#,
                reply.frame.response_id().unwrap_or_default()
            ),
            "hook {hook}"
        );
    }
}

/// The reply line for request `id` with `result` (compact JSON).
fn line(id: u64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

#[test]
fn context_collect() {
    let mut shim = ready();
    let context = shim.context();
    let reply = shim.call(
        "context/collect",
        json!({"prompt": "hi", "context": context}),
    );
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        line(
            id,
            r#"[{"label":"hello-world","content":"The hello-world extension is active.","placement":"system_suffix"}]"#
        )
    );
}

#[test]
fn status_collect() {
    let mut shim = ready();
    let context = shim.context();
    let reply = shim.call(
        "status/collect",
        json!({"surface": "status", "context": context}),
    );
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        line(
            id,
            r#"{"surface":"status","text":"hello","style_role":"extension.hello_world.status","priority":0}"#
        )
    );
}

#[test]
fn tool_render() {
    let mut shim = ready();
    let context = shim.context();
    let render = |output: &str| json!({"name": "hello_world", "arguments": {"name": "Ada"}, "output": output, "is_error": false, "context": context});
    let reply = shim.call("tool/render", render("Hello, Ada!"));
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        line(
            id,
            r#"{"segments":[{"text":"hello_world · Hello, Ada!","style_role":"extension.hello_world.tool"}]}"#
        )
    );
    let reply = shim.call("tool/render", render(""));
    let segments = &expect_result(&reply)["segments"];
    let text: String = segments
        .as_array()
        .map(|parts| parts.iter().filter_map(|s| s["text"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        text.ends_with("waiting"),
        "render without output: {}",
        reply.frame.raw
    );
}

#[test]
fn shutdown_answers_and_exits_zero() {
    let mut shim = ready();
    shim.tool("hello_world", json!({"name": "Ada"}));
    shim.shutdown();
}

#[test]
fn stdin_eof_exits_zero() {
    let mut shim = ready();
    shim.close_stdin();
    let status = shim.exit_status(EXIT_AFTER_EOF);
    assert_eq!(status.code(), Some(0), "exit status after stdin EOF");
    let rest = shim
        .read_to_eof(std::time::Duration::from_secs(5))
        .unwrap_or_else(|error| panic!("after EOF: {error}"));
    let rest: Vec<Value> = rest.into_iter().map(|frame| frame.value).collect();
    assert!(rest.is_empty(), "frames after stdin EOF: {rest:?}");
}

#[path = "eof_races.rs"]
mod eof_races;
