//! What API 0.4 adds, through the real binary with the api04 guest
//! (`tests/guests/api04`, built against `octet:extension@0.4.0`): tool
//! prompt metadata (initial and dynamic catalogs, its bounds, and what
//! happens on a wire that cannot carry it) and the results of the 0.4
//! hooks (cache warming, compaction frames, provider payload and headers),
//! each frame asserted byte for byte.

use crate::api_04::shim_for;
use crate::support::{
    LOG_TIMEOUT, Shim, component, expect_error, expect_result, protocol, stderr_text,
};
use octet_hostsim::{ApiVersion, FrameKind, ManifestSpec, Reply};
use serde_json::{Value, json};
use tempfile::TempDir;

const HOOKS: [&str; 5] = [
    "cache_warming_decision",
    "compaction_strategy",
    "before_provider_request",
    "before_provider_headers",
    "after_provider_response",
];

/// The api04 guest's tools; `contributes.tools` must equal them.
pub const TOOLS: [&str; 8] = [
    "plain",
    "prompted",
    "register_late",
    "compose_context",
    "compose_call",
    "compose_store",
    "compose_store_twice",
    "compose_many",
];

pub fn manifest(api: ApiVersion) -> ManifestSpec {
    let manifest = ManifestSpec::new("api04", api)
        .filesystem("workspace")
        .tools(&TOOLS)
        .commands(&["compose"]);
    if api == ApiVersion::V0_4 {
        manifest.hooks(&HOOKS)
    } else {
        manifest
    }
}

pub fn start(api: ApiVersion) -> (Shim, TempDir) {
    shim_for(&component("api04"), manifest(api))
}

/// The `prompted` tool as the model sees it on a wire carrying metadata.
fn prompted_with_metadata() -> Value {
    json!({
        "name": "prompted",
        "description": "A tool with prompt metadata",
        "parameters": {"type": "object"},
        "prompt_snippet": "prompted: shows what prompt metadata looks like",
        "prompt_guidelines": ["Use it for tests only", "Columns:\tname\nthen value"],
    })
}

fn tool<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("no tool {name} in {result}"))
}

fn features(result: &Value) -> Vec<&str> {
    protocol(result)["features"]
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[test]
fn prompt_metadata_reaches_a_0_4_host_that_offers_it() {
    let (mut shim, _dir) = start(ApiVersion::V0_4);
    let result = shim.initialize();
    let negotiated = features(&result);
    for feature in [
        "dynamic_tools",
        "tool_prompt_metadata_v1",
        "pipeline_hooks_v1",
        "compaction_strategy",
        "cache_warming_decision",
    ] {
        assert!(negotiated.contains(&feature), "{feature}: {result}");
    }
    assert_eq!(*tool(&result, "prompted"), prompted_with_metadata());
    assert_eq!(
        *tool(&result, "plain"),
        json!({"name": "plain", "description": "A tool without prompt metadata", "parameters": {"type": "object"}})
    );
    shim.shutdown();
}

#[test]
fn dynamic_tools_keep_their_metadata_where_it_is_negotiated() {
    for (api, expected) in [
        (
            ApiVersion::V0_4,
            json!({"tools": [{"name": "late", "description": "Registered at run time", "parameters": {"type": "object"}, "prompt_snippet": "late: arrives after initialize"}]}),
        ),
        (
            ApiVersion::V0_2,
            json!({"tools": [{"name": "late", "description": "Registered at run time", "parameters": {"type": "object"}}]}),
        ),
    ] {
        let (mut shim, _dir) = start(api);
        shim.initialize();
        let id = shim.send_tool("register_late", json!({}));
        let frame = shim
            .recv(crate::support::REQUEST_TIMEOUT)
            .expect("tools/register");
        let FrameKind::Request {
            id: child,
            method,
            params,
        } = &frame.kind
        else {
            panic!("expected tools/register, got {}", frame.raw);
        };
        assert_eq!(method, "tools/register");
        assert_eq!(*params, expected, "{api:?}: {}", frame.raw);
        shim.respond(
            child,
            json!({"revision": 1, "tools": std::iter::once(&"late").chain(TOOLS.iter()).collect::<Vec<_>>()}),
        )
        .expect("acknowledge");
        assert_eq!(crate::support::tool_text(&shim.reply(id)), "revision 1");
        shim.shutdown();
    }
}

#[test]
fn a_0_2_manifest_gets_the_tools_without_metadata_and_a_warning() {
    let (mut shim, _dir) = start(ApiVersion::V0_2);
    let result = shim.initialize();
    assert!(!features(&result).contains(&"tool_prompt_metadata_v1"));
    assert_eq!(
        *tool(&result, "prompted"),
        json!({"name": "prompted", "description": "A tool with prompt metadata", "parameters": {"type": "object"}})
    );
    let record = shim
        .stderr()
        .wait_for_message(
            LOG_TIMEOUT,
            "tool prompt metadata left out: this wire cannot carry it",
        )
        .unwrap_or_else(|| panic!("no warning; stderr:\n{}", stderr_text(&shim)));
    let fields = record.record.expect("a JSON record");
    assert_eq!(fields["tools"], json!(["prompted"]));
    assert_eq!(fields["why"], "prompt metadata needs an API 0.4 manifest");
    // The tool itself works as before.
    assert_eq!(
        crate::support::tool_text(&shim.tool("prompted", json!({}))),
        "prompted"
    );
    shim.shutdown();
}

#[test]
fn a_0_4_host_that_does_not_offer_it_gets_none_either() {
    let (mut shim, _dir) = start(ApiVersion::V0_4);
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
    assert!(tool(&result, "prompted").get("prompt_snippet").is_none());
    let record = shim
        .stderr()
        .wait_for_message(
            LOG_TIMEOUT,
            "tool prompt metadata left out: this wire cannot carry it",
        )
        .expect("a warning");
    assert_eq!(
        record.record.expect("a JSON record")["why"],
        "the host did not offer tool_prompt_metadata_v1"
    );
    shim.shutdown();
}

#[test]
fn metadata_out_of_bounds_fails_the_start_with_the_bound() {
    for (mode, problem) in [
        (
            "long-snippet",
            "tool prompted: prompt_snippet has 1025 bytes; the limit is 1024",
        ),
        (
            "seventeen",
            "tool prompted has 17 prompt guidelines; the limit is 16",
        ),
        (
            "control",
            "tool prompted: prompt_snippet contains the control character U+000D (only LF and TAB are allowed)",
        ),
    ] {
        let (mut shim, _dir) = start(ApiVersion::V0_4);
        std::fs::write(shim.workspace.join(".api04-mode"), mode).expect("write the switch");
        let reply = shim.initialize_with(shim.init_params());
        let error = expect_error(&reply);
        assert_eq!(error.code, -32603, "{mode}: {}", reply.frame.raw);
        assert_eq!(
            error.message,
            format!("the extension's description is invalid: {problem}"),
            "{mode}"
        );
    }
}

// ----- the 0.4 hooks -------------------------------------------------

/// Runs `hook` with `payload` and returns the raw reply line.
fn hook(shim: &mut Shim, hook: &str, payload: Value) -> Reply {
    let context = shim.context();
    shim.call(
        "hook/run",
        json!({"hook": hook, "payload": payload, "context": context}),
    )
}

fn result_line(id: u64, result: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
}

const CONTINUE: &str = r#""disposition":{"action":"continue"},"context":[],"notifications":[]"#;

fn decision(action: &str, warm_cost: u64) -> Value {
    json!({
        "phase": "idle",
        "warm_cost_microdollars": warm_cost,
        "miss_cost_microdollars": 9000,
        "continuation_probability": 0.5,
        "expected_savings_microdollars": -120,
        "economics_available": true,
        "action": action,
    })
}

#[test]
fn cache_warming_advice_or_no_opinion() {
    let (mut shim, _dir) = start(ApiVersion::V0_4);
    shim.initialize();
    for (mode, host_action, extra) in [
        ("warm", "stop", r#","cache_warming_decision":"warm""#),
        ("stop", "warm", r#","cache_warming_decision":"stop""#),
        ("echo", "stop", r#","cache_warming_decision":"stop""#),
        ("none", "warm", ""),
    ] {
        let reply = hook(
            &mut shim,
            "cache_warming_decision",
            json!({"decision": decision(host_action, 100), "model": "m-large", "mode": mode}),
        );
        let id = reply.frame.response_id().unwrap_or_default();
        assert_eq!(
            reply.frame.raw,
            result_line(id, &format!("{{{CONTINUE}{extra}}}")),
            "{mode}"
        );
    }
    shim.shutdown();
}

#[test]
fn cache_warming_has_its_own_short_deadline() {
    let (mut shim, _dir) = start(ApiVersion::V0_4);
    shim.initialize();
    let reply = hook(
        &mut shim,
        "cache_warming_decision",
        json!({"decision": decision("warm", 100), "model": "m", "mode": "slow"}),
    );
    let error = expect_error(&reply);
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32000, "request deadline exceeded"),
        "{}",
        reply.frame.raw
    );
    let data = error.data.clone().unwrap_or_default();
    assert_eq!(data["deadline_ms"], 150, "{}", reply.frame.raw);
    assert_eq!(
        data["raise_with"],
        "deadlines.cache_warming in ~/.config/octet-wasm/policy.toml"
    );
    assert!(
        data["error"]
            .as_str()
            .is_some_and(|e| e.contains("octet waits 200 ms for cache_warming_decision")),
        "{}",
        reply.frame.raw
    );
    shim.assert_alive_and_silent_with("plain");
    shim.shutdown();
}

/// The PNG the guest sends for `bytes`: the signature and a counting
/// pattern, in base64.
fn png_base64(bytes: usize) -> String {
    use base64::Engine as _;
    let mut data = b"\x89PNG\r\n\x1a\n".to_vec();
    data.extend((0..bytes - 8).map(|i| i as u8));
    base64::engine::general_purpose::STANDARD.encode(data)
}

#[test]
fn compaction_frames_are_bounded_pngs_in_base64() {
    let (mut shim, _dir) = start(ApiVersion::V0_4);
    shim.initialize();
    let payload = |mode: &str, frames: usize, bytes: usize| json!({"model_id": "vision-1", "text": "a long conversation", "mode": mode, "frames": frames, "bytes": bytes});
    let reply = hook(&mut shim, "compaction_strategy", payload("png", 2, 16));
    let id = reply.frame.response_id().unwrap_or_default();
    let frame = png_base64(16);
    assert_eq!(
        reply.frame.raw,
        result_line(
            id,
            &format!(r#"{{{CONTINUE},"compaction_frames":["{frame}","{frame}"]}}"#)
        )
    );
    // No frames: compaction is left to the host.
    let reply = hook(&mut shim, "compaction_strategy", payload("png", 0, 0));
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(reply.frame.raw, result_line(id, &format!("{{{CONTINUE}}}")));
    for (frames, bytes, mode, problem) in [
        (
            33,
            8,
            "png",
            "compaction_strategy returned 33 frames; the limit is 32",
        ),
        (1, 8, "gif", "compaction frame 1 is not a PNG image"),
        (
            1,
            512 * 1024 + 1,
            "png",
            "compaction frame 1 has 524289 bytes; the limit is 512 KiB",
        ),
        (
            2,
            512 * 1024,
            "png",
            "the compaction frames take 1398104 bytes in base64, more than fit in one 1 MiB protocol frame",
        ),
    ] {
        let reply = hook(
            &mut shim,
            "compaction_strategy",
            payload(mode, frames, bytes),
        );
        let error = expect_error(&reply);
        assert_eq!(error.code, -32603, "{}", reply.frame.raw);
        assert!(
            error.message.contains(problem),
            "{problem:?} not in {}",
            reply.frame.raw
        );
    }
    shim.assert_alive_and_silent_with("plain");
    shim.shutdown();
}

#[test]
fn provider_pipeline_hooks_rewrite_payloads_and_headers() {
    let (mut shim, _dir) = start(ApiVersion::V0_4);
    shim.initialize();
    let model = json!({"id": "m-large", "provider": "acme", "api": "chat"});
    let reply = hook(
        &mut shim,
        "before_provider_request",
        json!({"operation_id": "op-1", "model": model, "payload": {"messages": []}, "mode": "rewrite"}),
    );
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        result_line(
            id,
            &format!(
                r#"{{{CONTINUE},"provider_payload":{{"messages":[],"temperature":0,"model":"m-large"}}}}"#
            )
        )
    );
    let reply = hook(
        &mut shim,
        "before_provider_headers",
        json!({"operation_id": "op-1", "model": model, "headers": {"accept": "application/json", "x-remove-me": "1"}, "mode": "edit"}),
    );
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(
        reply.frame.raw,
        result_line(
            id,
            &format!(
                r#"{{{CONTINUE},"provider_headers":{{"x-extension":"api04","x-seen":["accept","x-remove-me"],"x-remove-me":null}}}}"#
            )
        )
    );
    let reply = hook(
        &mut shim,
        "after_provider_response",
        json!({"operation_id": "op-1", "model": model, "status": 200, "headers": {}}),
    );
    let id = reply.frame.response_id().unwrap_or_default();
    assert_eq!(reply.frame.raw, result_line(id, &format!("{{{CONTINUE}}}")));
    for (hook_name, mode, problem) in [
        (
            "before_provider_request",
            "scalar",
            "provider_payload must be a JSON object or array",
        ),
        (
            "before_provider_request",
            "huge",
            "provider_payload has 819204 bytes; the limit is 768 KiB",
        ),
        (
            "before_provider_headers",
            "bad-name",
            r#"provider header name "bad name" is not an HTTP token (RFC 9110 §5.6.2) of 1 to 256 bytes"#,
        ),
        (
            "before_provider_headers",
            "inject",
            "value 1 of provider header x-a is not an HTTP field value (RFC 9110 §5.5): it holds the control character 0x0D (CR) at byte 1",
        ),
    ] {
        let reply = hook(
            &mut shim,
            hook_name,
            json!({"operation_id": "op-2", "model": model, "payload": {}, "headers": {"a": "b"}, "mode": mode}),
        );
        let error = expect_error(&reply);
        assert_eq!(error.code, -32603, "{}", reply.frame.raw);
        assert!(
            error.message.contains(problem),
            "{problem:?} not in {}",
            reply.frame.raw
        );
    }
    shim.assert_alive_and_silent_with("plain");
    shim.shutdown();
}

impl Shim {
    /// Calls `tool` (which answers its own name) and asserts its reply is
    /// the only frame since the previous one.
    fn assert_alive_and_silent_with(&mut self, tool: &str) {
        let reply = self.tool(tool, json!({}));
        assert!(reply.before.is_empty(), "frames before the reply");
        assert_eq!(crate::support::tool_text(&reply), tool);
    }
}
