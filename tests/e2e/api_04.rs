//! API 0.4 `initialize` through the real binary (docs/api-0.4.md): the 0.2
//! wire with "0.4" version strings, the longer offer tolerated, the answered
//! features filtered by the per-version allowed set, and the coupling rules
//! between declared hooks and features. The probe is built by the Rust SDK
//! against `octet:extension@0.4.0`; the C hello-delay against 0.2.0, to show
//! both WIT versions serve a 0.4 manifest alike.

use crate::support::{
    Shim, expect_error, expect_result, hello_delay_manifest, probe_manifest, protocol, raws,
    repo_root,
};
use octet_hostsim::{ApiVersion, ManifestSpec, V0_4_ONLY_FEATURES};
use serde_json::{Value, json};
use std::path::Path;
use tempfile::TempDir;

/// `component` under `manifest`, written to a fresh extension directory
/// (kept alive by the returned guard).
pub fn shim_for(component: &Path, manifest: ManifestSpec) -> (Shim, TempDir) {
    let dir = tempfile::tempdir().expect("create the extension directory");
    let component = component.to_string_lossy().into_owned();
    let toml = manifest.to_extension_toml("octet-wasm", &["run", &component]);
    std::fs::write(dir.path().join("extension.toml"), toml).expect("write the manifest");
    (Shim::start(dir.path(), &component, manifest), dir)
}

/// hello-delay built by the C SDK, against `octet:extension@0.2.0`.
fn hello_delay_0_2_0() -> std::path::PathBuf {
    let path = repo_root().join("examples/hello-delay/c/hello-delay.wasm");
    assert!(
        path.is_file(),
        "{} is missing: build the C examples first",
        path.display()
    );
    path
}

#[test]
fn a_0_2_0_component_and_a_0_4_0_one_serve_a_0_4_manifest_alike() {
    let manifest = || {
        let mut m = hello_delay_manifest();
        m.api_version = ApiVersion::V0_4;
        m
    };
    let rust = crate::support::component("hello-delay");
    let mut answers = Vec::new();
    for component in [hello_delay_0_2_0(), rust] {
        let (mut shim, _dir) = shim_for(&component, manifest());
        let reply = shim.initialize_with(shim.init_params());
        let result = expect_result(&reply).clone();
        assert_eq!(result["api_version"], "0.4", "{}", reply.frame.raw);
        assert_eq!(protocol(&result)["version"], "0.4");
        let reply = shim.tool("hello", json!({"name": "world"}));
        let greeting = expect_result(&reply).clone();
        answers.push((result, greeting));
        shim.shutdown();
    }
    assert_eq!(answers[0].0["tools"], answers[1].0["tools"]);
    assert_eq!(answers[0].1, answers[1].1);
    assert_eq!(
        answers[0].1["content"],
        json!([{"type": "text", "text": "Hello, world!"}])
    );
}

fn features(result: &Value) -> Vec<String> {
    protocol(result)["features"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_0_4_manifest_is_answered_in_0_4_and_served_like_0_2() {
    let mut shim = Shim::probe(ApiVersion::V0_4);
    let params = shim.init_params();
    // The offer the simulated product sends: the extra limit and bulk
    // storage the shim must tolerate without using.
    assert_eq!(
        params["protocol"]["limits"]["resource_refs_v1"],
        json!({"max_records": 256, "max_registrations_per_parent": 32})
    );
    assert!(params["protocol"]["bulk_objects_v1"].is_object());
    let reply = shim.initialize_with(params);
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    let result = expect_result(&reply);
    assert_eq!(result["api_version"], "0.4", "{result}");
    let protocol = protocol(result);
    assert_eq!(protocol["version"], "0.4", "{result}");
    assert_eq!(
        protocol["limits"],
        json!({"max_concurrent_requests": 4}),
        "{result}"
    );
    let negotiated = features(result);
    assert_eq!(negotiated[..2], ["request_cancellation", "content_parts"]);
    // The probe uses the same 0.2 features as on a 0.2 manifest, and none
    // of the 0.4 names (it declares none of them).
    for feature in ["request_progress", "artifacts", "dynamic_tools"] {
        assert!(negotiated.iter().any(|f| f == feature), "{negotiated:?}");
    }
    for feature in V0_4_ONLY_FEATURES {
        assert!(!negotiated.iter().any(|f| f == feature), "{negotiated:?}");
    }
    // Every 0.2 method works as before: a typed result, a hook, a command.
    let reply = shim.tool("echo", json!({"text": "on 0.4"}));
    assert_eq!(
        expect_result(&reply)["content"],
        json!([{"type": "text", "text": "on 0.4"}]),
        "{}",
        reply.frame.raw
    );
    let context = shim.context();
    let reply = shim.call(
        "hook/run",
        json!({"hook": "before_tool_call", "payload": {"name": "echo", "arguments": {}}, "context": context}),
    );
    assert_eq!(
        expect_result(&reply)["disposition"],
        json!({"action": "continue"})
    );
    shim.shutdown();
}

#[test]
fn the_same_component_serves_a_0_2_manifest_next_to_it() {
    for api in [ApiVersion::V0_1, ApiVersion::V0_2, ApiVersion::V0_4] {
        let mut shim = Shim::probe(api);
        let result = shim.initialize();
        assert_eq!(result["api_version"], api.as_str());
        if api.negotiates() {
            assert_eq!(protocol(&result)["version"], api.as_str());
        } else {
            assert!(result.get("protocol").is_none(), "{result}");
        }
        shim.assert_alive_and_silent("initialize");
        shim.shutdown();
    }
}

#[test]
fn a_host_without_bulk_storage_is_fine_too() {
    let mut shim = Shim::probe(ApiVersion::V0_4);
    let params = shim.offer().without_bulk_storage().to_json();
    assert!(params["protocol"].get("bulk_objects_v1").is_none());
    let result = expect_result(&shim.initialize_with(params)).clone();
    assert_eq!(protocol(&result)["version"], "0.4");
    shim.shutdown();
}

#[test]
fn a_0_4_hook_in_a_0_2_manifest_is_refused() {
    let manifest = probe_manifest(ApiVersion::V0_2).hooks(&["cache_warming_decision"]);
    let mut shim = Shim::probe_with(manifest);
    let reply = shim.initialize_with(shim.init_params());
    let error = expect_error(&reply);
    assert_eq!(error.code, -32602, "{}", reply.frame.raw);
    assert_eq!(
        error.message,
        "initialize contributes.hooks names cache_warming_decision, which exists only on API 0.4; the manifest declares 0.2"
    );
    assert_eq!(
        error.data,
        Some(json!({"hook": "cache_warming_decision", "api_version": "0.2"}))
    );
}

#[test]
fn a_declared_0_4_hook_selects_its_feature_even_without_a_handler() {
    // The probe has no cache-warming handler: the shim still selects the
    // feature (the host refuses an answer without it) and answers the hook
    // with no opinion.
    let manifest = probe_manifest(ApiVersion::V0_4).hooks(&["cache_warming_decision"]);
    let mut shim = Shim::probe_with(manifest);
    let result = shim.initialize();
    assert!(
        features(&result).contains(&"cache_warming_decision".to_owned()),
        "{result}"
    );
    let context = shim.context();
    let reply = shim.call(
        "hook/run",
        json!({"hook": "cache_warming_decision", "payload": {"decision": {"phase": "idle", "action": "warm"}, "model": "m"}, "context": context}),
    );
    assert_eq!(
        reply.frame.raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"disposition":{{"action":"continue"}},"context":[],"notifications":[]}}}}"#,
            reply.frame.response_id().unwrap_or_default()
        )
    );
    shim.shutdown();
}

#[test]
fn a_hook_whose_feature_is_not_offered_is_refused_with_the_fix() {
    let manifest = probe_manifest(ApiVersion::V0_4).hooks(&["before_provider_request"]);
    let mut shim = Shim::probe_with(manifest);
    let mut params = shim.init_params();
    // A host whose provider pipeline is off does not offer the feature.
    let offered: Vec<Value> = params["protocol"]["optional_features"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f != "pipeline_hooks_v1")
        .collect();
    params["protocol"]["optional_features"] = Value::Array(offered);
    let reply = shim.initialize_with(params);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32000, "{}", reply.frame.raw);
    assert_eq!(
        error.message,
        "hook before_provider_request needs protocol feature pipeline_hooks_v1, which the host did not offer; this octet cannot run the hook: remove it from [contributes].hooks in extension.toml"
    );
}

#[test]
fn a_hook_octet_wasm_cannot_serve_is_refused_by_name() {
    let manifest = probe_manifest(ApiVersion::V0_4).hooks(&["model_turn_start"]);
    let mut shim = Shim::probe_with(manifest);
    let reply = shim.initialize_with(shim.init_params());
    let error = expect_error(&reply);
    assert_eq!(error.code, -32000, "{}", reply.frame.raw);
    assert!(
        error.message.starts_with("octet-wasm cannot serve hook model_turn_start: it needs protocol feature session_entries"),
        "{}",
        reply.frame.raw
    );
}

#[test]
fn version_strings_that_disagree_are_refused() {
    let mut shim = Shim::probe(ApiVersion::V0_4);
    let mut params = shim.init_params();
    params["protocol"]["version"] = json!("0.2");
    let reply = shim.initialize_with(params);
    let error = expect_error(&reply);
    assert_eq!(error.code, -32000, "{}", reply.frame.raw);
    assert_eq!(
        error.message,
        "unsupported executable-extension protocol version"
    );
    // A canonical 0.3 contract has no place on the 0.4 wire.
    let mut params = shim.init_params();
    params["contract"] = json!({"version": "0.3"});
    let reply = shim.initialize_with(params);
    assert_eq!(
        expect_error(&reply).message,
        "API 0.4 initialize must not carry a contract (that is the canonical API 0.3 wire, which octet-wasm does not speak)"
    );
    // OCTET_EXTENSION_API_VERSION (0.4 here) must agree with the params.
    let mut params = shim.init_params();
    params["api_version"] = json!("0.2");
    params["protocol"]["version"] = json!("0.2");
    let reply = shim.initialize_with(params);
    assert_eq!(expect_error(&reply).code, -32000, "{}", reply.frame.raw);
    // A correct initialize still succeeds afterwards.
    let result = shim.initialize();
    assert_eq!(result["api_version"], "0.4");
    shim.shutdown();
}
