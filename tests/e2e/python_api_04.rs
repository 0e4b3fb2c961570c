//! octet's Python 0.4 recipe, `hello-tools` (docs/api-0.4.md#v04-examples),
//! written exactly as octet's Python SDK README has it
//! (`examples/hello-tools/python/extension.py`, built unchanged by
//! `scripts/build-guests-python hello-tools` beside its manifest), through
//! the real binary.
//!
//! The Rust port's transcript is in `api_04_examples.rs`. The Python SDK
//! answers differently where octet's Python SDK does: it selects every
//! offered feature it supports (not only the required two), drops
//! `lifecycle_events` without a lifecycle handler, and caps the limit at
//! the recipe's `max_concurrent_requests=1`.

use crate::support::{Shim, expect_error, expect_result, repo_root};
use octet_wasm::hostsim::{ApiVersion, ManifestSpec, REQUIRED_FEATURES};
use serde_json::{Value, json};
use std::path::PathBuf;

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
    // is a 0.4 feature the SDK does not support; the limit is above 1.
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
