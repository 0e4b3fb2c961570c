//! The Python guest SDK's API 0.2 services end to end: the Python test guest
//! (`tests/guests/python-services/extension.py`, in the idiom of octet's
//! Python SDK, built by
//! `scripts/build-guests-python` into `target/components/python/services.wasm`)
//! run by the real binary, with hostsim playing the host. Each test checks
//! the frames the shim writes for the SDK's calls (artifacts inline, dynamic
//! tool registration and dispatch of the registered tool, secrets, policy,
//! presentation) and what the handler received, host errors included.
//!
//! The component is 18 MB of CPython: `scripts/test` compiles it first
//! (`octet-wasm compile target/components/python/services.wasm`) so
//! initialize stays fast.

use crate::python_compat::python_shim;
use crate::support::*;
use crate::support::{ChildAnswer as Answer, serve_children as serve};
use base64::Engine as _;
use octet_hostsim::{ApiVersion, HOST_OPTIONAL_FEATURES, InitializeParams, ManifestSpec};
use serde_json::{Value, json};
use tempfile::TempDir;

/// The guest's described tools (catalog revision 0); `lint`, `counted`
/// (module-level handlers) and `adopted` (a handler made at run time) are
/// dynamic.
const TOOLS: [&str; 8] = [
    "artifact", "unlock", "lock", "adopt", "secret", "policy", "present", "catch",
];

/// The Python services guest with a generated manifest; the returned
/// directory holds its `extension.toml` and must outlive the shim.
fn start() -> (Shim, TempDir) {
    let manifest = ManifestSpec::new("python-services", ApiVersion::V0_2)
        .description("The Python SDK's service wrappers")
        .tools(&TOOLS);
    python_shim("services", manifest)
}

/// Initializes with the secrets broker (`secrets`, `approvals` offered,
/// `tracker.api_key` declared) and presentation, or with only `offered`.
fn initialize(shim: &mut Shim, offered: Option<&[&str]>) -> Value {
    let mut features: Vec<&str> = HOST_OPTIONAL_FEATURES.to_vec();
    features.extend(["secrets", "approvals"]);
    let mut params = InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace)
        .optional_features(offered.unwrap_or(&features))
        .to_json();
    if offered.is_none() {
        params["capabilities"]["secrets"] = json!(["tracker.api_key"]);
        params["contributes"]["presentation"] = json!(true);
    }
    expect_result(&shim.initialize_with(params)).clone()
}

fn tool_call(shim: &mut Shim, name: &str, arguments: Value, revision: Option<u64>) -> u64 {
    let mut params = shim.tool_params(name, arguments);
    if let Some(revision) = revision {
        params["catalog_revision"] = json!(revision);
    }
    shim.send_request("tool/call", params)
}

fn catalog(extra: &[&str]) -> Value {
    let mut names: Vec<&str> = TOOLS.to_vec();
    names.extend_from_slice(extra);
    json!(names)
}

/// How the guest reports a catalog: the shim hands over the names sorted.
fn reported(revision: u64, extra: &[&str]) -> String {
    let mut names: Vec<&str> = TOOLS.to_vec();
    names.extend_from_slice(extra);
    names.sort_unstable();
    format!("revision {revision}: {}", names.join(","))
}

#[test]
fn python_guest_reaches_every_service() {
    let (mut shim, _dir) = start();
    let result = initialize(&mut shim, None);
    let features = protocol(&result)["features"].clone();
    for feature in [
        "artifacts",
        "dynamic_tools",
        "secrets",
        "policy_intents",
        "approvals",
    ] {
        assert!(
            features.as_array().unwrap().contains(&json!(feature)),
            "{feature} not negotiated: {result}"
        );
    }

    // ----- artifacts: published inline, referenced by an image part.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/png", "size": 1024}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"artifact_id": "artifact_py1"}))
    });
    assert_eq!(children.len(), 1, "{:?}", raws(&children));
    let publish = &children[0];
    assert_eq!(
        publish.method(),
        Some("artifact/publish"),
        "{}",
        publish.raw
    );
    let params = publish.params();
    assert_eq!(params["parent_request_id"], id);
    assert_eq!(params["mime_type"], "image/png");
    assert_eq!(params["size"], 1024);
    assert_eq!(params["data"]["encoding"], "base64");
    let data = base64::engine::general_purpose::STANDARD
        .decode(params["data"]["data"].as_str().unwrap())
        .expect("base64");
    assert_eq!(data.len(), 1024);
    assert!(data.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(data[8..].iter().all(|b| *b == 0));
    assert_eq!(
        expect_result(&reply)["content"],
        json!([
            {"type": "text", "text": "id: artifact_py1"},
            {"type": "image", "artifact_id": "artifact_py1", "mime_type": "image/png", "alt": "python"},
        ])
    );
    // Audio parts reference artifacts the same way.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "audio/flac", "size": 16}),
        None,
    );
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"artifact_id": "artifact_py2"}))
    });
    assert_eq!(
        expect_result(&reply)["content"][1],
        json!({"type": "audio", "artifact_id": "artifact_py2", "mime_type": "audio/flac"})
    );

    // ----- dynamic tools: `lint` is not described, registered by name with
    // the definition given to @ext.dynamic_tool, then served by call-tool.
    let call = tool_call(&mut shim, "lint", json!({}), Some(0));
    assert_eq!(expect_error(&shim.reply(call)).code, -32601);
    let id = tool_call(
        &mut shim,
        "unlock",
        json!({"names": ["lint", "counted"]}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |frame| {
        assert_eq!(frame.method(), Some("tools/register"), "{}", frame.raw);
        Answer::Result(json!({"revision": 1, "tools": catalog(&["lint", "counted"])}))
    });
    assert_eq!(
        *children[0].params(),
        json!({"tools": [
            {"name": "lint", "description": "Lint (dynamic)", "parameters": {"type": "object"}},
            {"name": "counted", "description": "A dynamic tool with an output schema",
             "parameters": {"type": "object"},
             "output_schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
        ]}),
        "{}",
        children[0].raw
    );
    assert_eq!(tool_text(&reply), reported(1, &["lint", "counted"]));
    let call = tool_call(&mut shim, "lint", json!({"path": "src"}), Some(1));
    let reply = shim.reply(call);
    assert_eq!(tool_text(&reply), "lint ok: src");
    assert_eq!(expect_result(&reply)["metadata"], json!({"request": call}));
    let call = tool_call(&mut shim, "counted", json!({}), Some(1));
    let reply = shim.reply(call);
    assert_eq!(expect_result(&reply)["structured_content"], json!({"n": 1}));
    let id = tool_call(&mut shim, "lock", json!({"names": ["lint"]}), None);
    let (reply, children) = serve(&mut shim, id, |frame| {
        assert_eq!(frame.method(), Some("tools/unregister"), "{}", frame.raw);
        assert_eq!(*frame.params(), json!({"names": ["lint"]}));
        Answer::Result(json!({"revision": 2, "tools": catalog(&["counted"])}))
    });
    assert_eq!(children.len(), 1);
    assert_eq!(tool_text(&reply), reported(2, &["counted"]));
    let call = tool_call(&mut shim, "lint", json!({}), Some(2));
    assert_eq!(expect_error(&shim.reply(call)).code, -32601);
    let call = tool_call(&mut shim, "lint", json!({"path": "old"}), Some(1));
    assert_eq!(tool_text(&shim.reply(call)), "lint ok: old");
    // The SDK's own form: a definition with the handler, made at run time.
    let id = tool_call(&mut shim, "adopt", json!({"prefix": "kept"}), None);
    let (reply, children) = serve(&mut shim, id, |frame| {
        assert_eq!(frame.method(), Some("tools/register"), "{}", frame.raw);
        Answer::Result(json!({"revision": 3, "tools": catalog(&["counted", "adopted"])}))
    });
    assert_eq!(
        *children[0].params(),
        json!({"tools": [{"name": "adopted", "description": "A tool registered with its handler",
                          "parameters": {"type": "object"}}]})
    );
    assert_eq!(tool_text(&reply), reported(3, &["counted", "adopted"]));
    let call = tool_call(&mut shim, "adopted", json!({"x": 7}), Some(3));
    assert_eq!(tool_text(&shim.reply(call)), "kept: 7");

    // ----- secrets: brokered for the declared name; the broker's error
    // reaches the handler as RpcError, and uncaught is answered as is.
    let id = tool_call(
        &mut shim,
        "secret",
        json!({"name": "tracker.api_key"}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"value": "hunter2-hunter2"}))
    });
    assert_eq!(
        *children[0].params(),
        json!({"parent_request_id": id, "name": "tracker.api_key"})
    );
    assert_eq!(children[0].method(), Some("secret/get"));
    assert_eq!(tool_text(&reply), "secret of 15 bytes");
    let id = tool_call(
        &mut shim,
        "secret",
        json!({"name": "tracker.api_key"}),
        None,
    );
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Error(-32004, "secret is unavailable")
    });
    let error = expect_error(&reply);
    assert_eq!(
        (error.code, error.message.as_str()),
        (-32004, "secret is unavailable")
    );
    let id = tool_call(
        &mut shim,
        "catch",
        json!({"service": "secret", "name": "tracker.api_key"}),
        None,
    );
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Error(-32004, "secret is unavailable")
    });
    assert_eq!(tool_text(&reply), "RpcError -32004: secret is unavailable");
    // An undeclared name never leaves the shim: -32602 naming it.
    let id = tool_call(
        &mut shim,
        "catch",
        json!({"service": "secret", "name": "undeclared"}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty(), "{:?}", raws(&children));
    let text = tool_text(&reply);
    assert!(
        text.starts_with("RpcError -32602: secret \"undeclared\" is not declared"),
        "{text}"
    );
    assert!(!stderr_text(&shim).contains("hunter2"));

    // ----- policy: the intent goes out in the wire's shape; an approval
    // token comes back and is redeemed with the identical intent.
    let token = "ab".repeat(32);
    let intent = json!({
        "target": {"label": "Open issue"}, "data_classes": ["user_text"], "destructive": true,
    });
    let id = tool_call(&mut shim, "policy", intent.clone(), None);
    let answer_token = token.clone();
    let (reply, children) = serve(&mut shim, id, |frame| {
        assert_eq!(frame.method(), Some("policy/evaluate"), "{}", frame.raw);
        Answer::Result(json!({"decision": "ask", "approval_token": answer_token}))
    });
    assert_eq!(
        *children[0].params(),
        json!({"parent_request_id": id, "intent": {
            "kind": "external_side_effect", "operation": "issues.create",
            "target": {"label": "Open issue"}, "data_classes": ["user_text"],
            "adapter_hints": {"destructive": true},
        }})
    );
    assert_eq!(tool_text(&reply), format!("decision: ask, token: {token}"));
    let mut redeem = intent;
    redeem["token"] = json!(token);
    let id = tool_call(&mut shim, "policy", redeem, None);
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"decision": "allow", "approval_token": null}))
    });
    assert_eq!(children[0].params()["approval_token"], json!(token));
    assert_eq!(tool_text(&reply), "decision: allow, token: none");

    // ----- presentation: parented by the request, or for the call's owner.
    let snapshot = json!({"revision": 1, "status": {"state": "running", "label": "py"}});
    let id = tool_call(&mut shim, "present", json!({"snapshot": snapshot}), None);
    let (reply, _) = serve(&mut shim, id, |_| Answer::Ignore);
    assert_eq!(tool_text(&reply), "presented");
    assert_eq!(
        reply.before[0].value,
        json!({"jsonrpc": "2.0", "method": "presentation/update",
               "params": {"snapshot": snapshot, "parent_request_id": id}})
    );
    let id = tool_call(
        &mut shim,
        "present",
        json!({"snapshot": {"revision": 2}, "owner": true}),
        None,
    );
    let (reply, _) = serve(&mut shim, id, |_| Answer::Ignore);
    assert_eq!(tool_text(&reply), "presented");
    assert_eq!(
        *reply.before[0].params(),
        json!({"snapshot": {"revision": 2}, "resource_owner": {
            "session_id": "session-1", "extension_instance_id": "instance-1", "process_generation": 1}})
    );
    // The SDK keeps revisions increasing itself: a ValueError, which the
    // model reads as the tool's failure; nothing is written.
    let id = tool_call(
        &mut shim,
        "present",
        json!({"snapshot": {"revision": 2}}),
        None,
    );
    let (reply, _) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    assert_eq!(
        expect_result(&reply)["is_error"],
        true,
        "{}",
        reply.frame.raw
    );
    assert_eq!(
        tool_text(&reply),
        "presentation revision must increase monotonically"
    );
    shim.shutdown();
}

#[test]
fn python_services_without_negotiation_raise_rpc_errors() {
    let (mut shim, _dir) = start();
    initialize(&mut shim, Some(&["request_progress"]));
    for (service, feature) in [
        ("artifact", "artifacts"),
        ("register", "dynamic_tools"),
        ("secret", "secrets"),
    ] {
        let id = tool_call(
            &mut shim,
            "catch",
            json!({"service": service, "mime_type": "image/png"}),
            None,
        );
        let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
        assert!(children.is_empty() && reply.before.is_empty(), "{service}");
        // The SDK's own check and text, before anything reaches the shim.
        assert_eq!(
            tool_text(&reply),
            format!("RpcError -32601: API 0.2 feature is not negotiated: {feature}")
        );
    }
    // Uncaught, the refusal is the tool call's error.
    let id = tool_call(&mut shim, "unlock", json!({}), None);
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty());
    assert_eq!(expect_error(&reply).code, -32601);
    shim.shutdown();
}

#[test]
fn python_model_selection_is_negotiated_only_when_the_guest_names_it() {
    // This guest keeps the SDK's default features, which leave out
    // agent_model_selection_v1 (the agents guest names it:
    // tests/e2e/python_agents.rs).
    let (mut shim, _dir) = start();
    let mut offered: Vec<&str> = HOST_OPTIONAL_FEATURES.to_vec();
    offered.extend(["agent_sessions", "agent_model_selection_v1"]);
    let result = initialize(&mut shim, Some(&offered));
    let features = protocol(&result)["features"].as_array().unwrap().clone();
    assert!(features.contains(&json!("agent_sessions")), "{result}");
    assert!(
        !features.contains(&json!("agent_model_selection_v1")),
        "{result}"
    );
    shim.shutdown();
}
