//! The Python guest SDK's child-agent helpers end to end: the Python test
//! guest (`tests/guests/python-agents/extension.py`, in the idiom of octet's
//! Python SDK, built by `scripts/build-guests-python agents` into
//! `target/components/python/agents.wasm`) run by the real binary, with
//! hostsim playing a host that binds the child-session service. Each test
//! checks the exact frames the shim writes for `spawn_agent`,
//! `send_agent_message`, `follow_up_agent`, `list_agents`, `wait_agents`,
//! `interrupt_agent` and `list_agent_models`, what the helper returned to
//! the guest, and where each refusal comes from: the SDK's own checks
//! (nothing reaches the shim), the shim's bounds (nothing is written) and
//! the host's answers (unchanged to the guest). `tests/e2e/agents.rs` is
//! the same service under the Rust probe.
//!
//! The component is 18 MB of CPython: `scripts/test` compiles it first
//! (`octet-wasm compile target/components/python/agents.wasm`) so
//! initialize stays fast.

use crate::python_compat::python_shim;
use crate::support::*;
use crate::support::{ChildAnswer as Answer, serve_children as serve};
use octet_hostsim::{ApiVersion, Frame, FrameKind, HOST_OPTIONAL_FEATURES, ManifestSpec, Reply};
use serde_json::{Value, json};
use tempfile::TempDir;

const TOOLS: [&str; 7] = [
    "agent_spawn",
    "agent_send",
    "agent_follow_up",
    "agent_list",
    "agent_wait",
    "agent_interrupt",
    "agent_models",
];

const AGENT_FEATURES: [&str; 2] = ["agent_sessions", "agent_model_selection_v1"];

/// The agents guest after `initialize`, offered the usual features plus
/// `extra`; the returned directory must outlive the shim.
fn offered(extra: &[&str]) -> (Shim, TempDir) {
    let manifest = ManifestSpec::new("python-agents", ApiVersion::V0_2)
        .description("The Python SDK's child-agent helpers")
        .tools(&TOOLS);
    let (mut shim, dir) = python_shim("agents", manifest);
    let mut features: Vec<&str> = HOST_OPTIONAL_FEATURES.to_vec();
    features.extend(extra);
    let params = shim.offer().optional_features(&features).to_json();
    expect_result(&shim.initialize_with(params));
    (shim, dir)
}

/// Calls `tool`, answering its first child request with `answer`.
fn call(shim: &mut Shim, tool: &str, arguments: Value, answer: Answer) -> (Reply, Vec<Frame>) {
    let id = shim.send_tool(tool, arguments);
    let mut answer = Some(answer);
    serve(shim, id, move |_| answer.take().unwrap_or(Answer::Ignore))
}

/// `arguments` with `"catch": true`: the guest answers the exception it
/// caught as `"<class> <code>: <text>"`.
fn caught(mut arguments: Value) -> Value {
    arguments["catch"] = json!(true);
    arguments
}

fn error_of(reply: &Reply) -> (i64, String) {
    let error = expect_error(reply);
    (error.code, error.message.clone())
}

/// What the helper returned, as the guest wrote it (JSON text).
fn returned(reply: &Reply) -> Value {
    let result = expect_result(reply);
    assert_eq!(result["is_error"], false, "{}", reply.frame.raw);
    serde_json::from_str(&tool_text(reply))
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", reply.frame.raw))
}

/// A refusal of the SDK's own: a `ValueError`, which the model reads as the
/// tool's failure.
fn sdk_refusal(reply: &Reply) -> String {
    assert_eq!(
        expect_result(reply)["is_error"],
        true,
        "{}",
        reply.frame.raw
    );
    tool_text(reply)
}

/// A typical spawn (the fields of docs/services.md#agent-spawn) as
/// `spawn_agent` keyword arguments.
fn example_spawn() -> Value {
    json!({
        "task_name": "audit-deps",
        "message": "List outdated dependencies in Cargo.toml.",
        "idempotency_key": "31:audit-deps",
        "tools": ["read", "search"], "max_depth": 1, "max_concurrent_children": 2,
        "max_turns": 12, "max_output_bytes": 4096, "timeout_ms": 600000,
    })
}

fn example_result() -> Value {
    json!({
        "agent_id": "agent-7", "agent_path": "/root/audit-deps", "task_name": "audit-deps",
        "idempotency_key": "31:audit-deps", "status": {"state": "running"},
        "policy": {"tools": ["read", "search"], "max_depth": 1, "max_concurrent_children": 2,
            "max_turns": 12, "max_tokens": null, "max_cost_microdollars": null,
            "max_output_bytes": 4096, "timeout_ms": 600000, "model_selection": null,
            "resolved_model": null},
        "created_at_ms": 1767225600000_u64, "started_at_ms": 1767225600012_u64,
        "completed_at_ms": null, "deadline_at_ms": 1767226200012_u64,
        "principal": "scan-tools:3fa1c2", "resource_owner": "5d41a9c07e2b",
    })
}

fn example_snapshot() -> Value {
    json!({
        "principal": "scan-tools:3fa1c2", "resource_owner": "5d41a9c07e2b",
        "persistence_error": null,
        "agents": [
            {"agent_id": "agent-7", "agent_path": "/root/audit-deps",
             "status": {"state": "completed", "output": "serde 1.0.190 → 1.0.215"}, "turn_count": 3},
            {"agent_id": "agent-8", "status": {"state": "limit_reached", "turn_limit": 4}},
        ],
    })
}

/// What `list_agents` returns for [`example_snapshot`]: each record is the
/// host's complete record; a null `persistence_error` is left out.
fn returned_snapshot() -> Value {
    let snapshot = example_snapshot();
    json!({
        "agents": snapshot["agents"],
        "principal": "scan-tools:3fa1c2", "resource_owner": "5d41a9c07e2b",
    })
}

// ----- negotiation ---------------------------------------------------------------

#[test]
fn python_agents_need_the_bound_service_and_the_guests_declaration() {
    // The usual offer (no child-session service bound): not negotiated;
    // every helper raises the SDK's RpcError before anything is written.
    let (mut shim, _dir) = offered(&[]);
    let features = shim.features();
    assert!(!features.contains("agent_sessions"), "{features:?}");
    // Least privilege: only what the guest names is negotiated.
    assert!(!features.contains("artifacts"), "{features:?}");
    let cases = [
        ("agent_spawn", example_spawn()),
        ("agent_send", json!({"target": "agent-7", "message": "m"})),
        (
            "agent_follow_up",
            json!({"target": "agent-7", "message": "m"}),
        ),
        ("agent_list", json!({})),
        ("agent_wait", json!({})),
        ("agent_interrupt", json!({"target": "agent-7"})),
        ("agent_models", json!({})),
    ];
    for (tool, arguments) in &cases {
        let (reply, children) = call(&mut shim, tool, caught(arguments.clone()), Answer::Ignore);
        assert!(children.is_empty(), "{tool}: {:?}", raws(&children));
        assert_eq!(
            tool_text(&reply),
            "RpcError -32601: API 0.2 feature is not negotiated: agent_sessions",
            "{tool}"
        );
        // Uncaught, the refusal is the tool call's error.
        let (reply, children) = call(&mut shim, tool, arguments.clone(), Answer::Ignore);
        assert!(children.is_empty(), "{tool}");
        assert_eq!(
            error_of(&reply),
            (
                -32601,
                "API 0.2 feature is not negotiated: agent_sessions".to_owned()
            ),
            "{tool}"
        );
    }
    shim.shutdown();

    // Model selection alone is never negotiated (it requires agent_sessions).
    let (mut shim, _dir) = offered(&["agent_model_selection_v1"]);
    assert!(!shim.features().contains("agent_model_selection_v1"));
    shim.shutdown();

    // agent_sessions without model selection: list_agent_models and an
    // explicit model are refused, naming the feature; a plain spawn goes out.
    let (mut shim, _dir) = offered(&["agent_sessions"]);
    assert!(shim.features().contains("agent_sessions"));
    assert!(!shim.features().contains("agent_model_selection_v1"));
    let mut with_model = example_spawn();
    with_model["model_selection"] = json!({"model": "m"});
    for (tool, arguments) in [("agent_models", json!({})), ("agent_spawn", with_model)] {
        let (reply, children) = call(&mut shim, tool, caught(arguments), Answer::Ignore);
        assert!(children.is_empty(), "{tool}");
        assert_eq!(
            tool_text(&reply),
            "RpcError -32601: API 0.2 feature is not negotiated: agent_model_selection_v1",
            "{tool}"
        );
    }
    let (reply, children) = call(
        &mut shim,
        "agent_spawn",
        example_spawn(),
        Answer::Result(example_result()),
    );
    assert_eq!(children.len(), 1);
    assert!(
        children[0].params()["policy"]
            .get("model_selection")
            .is_none()
    );
    assert_eq!(returned(&reply), example_result());
    shim.shutdown();

    // Both offered and both named by the guest: both negotiated.
    let (mut shim, _dir) = offered(&AGENT_FEATURES);
    let features = shim.features();
    assert!(
        AGENT_FEATURES.iter().all(|f| features.contains(*f)),
        "{features:?}"
    );
    shim.shutdown();
}

// ----- spawn -----------------------------------------------------------------------

#[test]
fn python_spawn_writes_the_exact_frame_and_returns_the_hosts_result() {
    let (mut shim, _dir) = offered(&AGENT_FEATURES);
    let id = shim.send_tool("agent_spawn", example_spawn());
    let (reply, children) = serve(&mut shim, id, |_| Answer::Result(example_result()));
    assert_eq!(children.len(), 1);
    assert_eq!(
        children[0].raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"agent/spawn","params":{{"parent_request_id":{id},"task_name":"audit-deps","message":"List outdated dependencies in Cargo.toml.","idempotency_key":"31:audit-deps","policy":{{"tools":["read","search"],"max_depth":1,"max_concurrent_children":2,"max_turns":12,"max_tokens":null,"max_cost_microdollars":null,"max_output_bytes":4096,"timeout_ms":600000}}}}}}"#,
            children[0].value["id"]
        )
    );
    assert!(
        children[0].value["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("wasm:")),
        "{}",
        children[0].raw
    );
    // spawn_agent returns the host's complete result.
    assert_eq!(returned(&reply), example_result());

    // Optional members and model selection travel when given; omitted
    // ceilings go out as null (inherit the parent's).
    let mut arguments = example_spawn();
    arguments["profile"] = json!("reviewer");
    arguments["fingerprint"] = json!("0123456789abcdef".repeat(4));
    arguments["max_tokens"] = json!(32000);
    arguments["max_cost_microdollars"] = json!(2500000);
    arguments["model_selection"] =
        json!({"provider": "anthropic", "model": "claude", "reasoning": "high"});
    arguments.as_object_mut().unwrap().remove("max_turns");
    let id = shim.send_tool("agent_spawn", arguments);
    let (_, children) = serve(&mut shim, id, |_| Answer::Result(example_result()));
    assert_eq!(
        *children[0].params(),
        json!({
            "parent_request_id": id, "task_name": "audit-deps", "profile": "reviewer",
            "fingerprint": "0123456789abcdef".repeat(4),
            "message": "List outdated dependencies in Cargo.toml.",
            "idempotency_key": "31:audit-deps",
            "policy": {"tools": ["read", "search"], "max_depth": 1, "max_concurrent_children": 2,
                "max_turns": null, "max_tokens": 32000, "max_cost_microdollars": 2500000,
                "max_output_bytes": 4096, "timeout_ms": 600000,
                "model_selection": {"provider": "anthropic", "model": "claude", "reasoning": "high"}},
        })
    );

    // An explicit parent_request_id must name the request being served.
    let mut arguments = example_spawn();
    arguments["parent_request_id"] = json!(1);
    let (reply, children) = call(&mut shim, "agent_spawn", arguments, Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32602);
    assert!(
        message.starts_with("parent_request_id 1 is not the request this handler serves"),
        "{message}"
    );

    // Idempotency: the same key and input go out identically; a
    // conflicting reuse is the host's -32002, caught or not.
    let (_, first) = call(
        &mut shim,
        "agent_spawn",
        example_spawn(),
        Answer::Result(example_result()),
    );
    let (_, second) = call(
        &mut shim,
        "agent_spawn",
        example_spawn(),
        Answer::Result(example_result()),
    );
    assert_ne!(first[0].value["id"], second[0].value["id"]);
    let without_parent = |frame: &Frame| {
        let mut params = frame.params().clone();
        params.as_object_mut().unwrap().remove("parent_request_id");
        params
    };
    assert_eq!(without_parent(&first[0]), without_parent(&second[0]));
    let conflict = "spawn idempotency_key was reused with different input";
    let mut changed = example_spawn();
    changed["message"] = json!("Something else.");
    let (reply, children) = call(
        &mut shim,
        "agent_spawn",
        changed.clone(),
        Answer::Error(-32002, conflict),
    );
    assert_eq!(children.len(), 1);
    assert_eq!(error_of(&reply), (-32002, conflict.to_owned()));
    let (reply, _) = call(
        &mut shim,
        "agent_spawn",
        caught(changed),
        Answer::Error(-32002, conflict),
    );
    assert_eq!(tool_text(&reply), format!("RpcError -32002: {conflict}"));
    shim.shutdown();
}

#[test]
fn python_spawn_is_bounded_by_the_sdk_and_by_the_shim() {
    let (mut shim, _dir) = offered(&AGENT_FEATURES);
    let with = |key: &str, value: Value| {
        let mut arguments = example_spawn();
        arguments[key] = value;
        arguments
    };
    // The SDK's own checks and texts: a ValueError, nothing written.
    for (arguments, text) in [
        (
            with("task_name", json!(" ")),
            "agent task_name must be non-empty",
        ),
        (
            with("message", json!("")),
            "agent message must be non-empty",
        ),
        (
            with("idempotency_key", json!("  ")),
            "agent idempotency_key must be non-empty",
        ),
        (
            with("tools", json!(["edit", "edit"])),
            "agent tools must be a duplicate-free subset of read, search, edit, write, and bash",
        ),
        (
            with("tools", json!(["read", "web"])),
            "agent tools must be a duplicate-free subset of read, search, edit, write, and bash",
        ),
        (
            with("max_depth", json!(2)),
            "agent max_depth must be an integer between 1 and 1",
        ),
        (
            with("max_concurrent_children", json!(9)),
            "agent max_concurrent_children must be an integer between 1 and 8",
        ),
        (
            with("max_output_bytes", json!(511)),
            "agent max_output_bytes must be an integer between 512 and 16384",
        ),
        (
            with("max_turns", json!(257)),
            "agent max_turns must be null or an integer between 1 and 256",
        ),
        (
            with("max_tokens", json!(999)),
            "agent max_tokens must be null or an integer between 1000 and 64000",
        ),
        (
            with("max_cost_microdollars", json!(50_000_001)),
            "agent max_cost_microdollars must be null or an integer between 1 and 50000000",
        ),
        (
            with("timeout_ms", json!(4999)),
            "agent timeout_ms must be null or an integer between 5000 and 86400000",
        ),
        (
            with("profile", json!("Reviewer")),
            "agent profile must be a bounded lowercase stable identifier",
        ),
        (
            with("fingerprint", json!("F".repeat(64))),
            "agent fingerprint must be a lowercase SHA-256 digest",
        ),
        (
            with("model_selection", json!({"model": "m", "temperature": 1})),
            "agent model_selection must be an object of provider, model and reasoning",
        ),
    ] {
        let (reply, children) = call(&mut shim, "agent_spawn", arguments, Answer::Ignore);
        assert!(children.is_empty(), "{text}: {:?}", raws(&children));
        assert_eq!(sdk_refusal(&reply), text);
    }
    // What the SDK lets through and the shim bounds: -32602 naming the
    // bound, nothing written; at the bound the request goes out.
    let message = "m".repeat(128 * 1024);
    for (at, past, text) in [
        (
            with("task_name", json!("a".repeat(48))),
            with("task_name", json!("a".repeat(49))),
            format!(
                "agent task_name {:?} must be 1 to 48 characters of [a-z0-9_-]",
                "a".repeat(49)
            ),
        ),
        (
            with("task_name", json!("z0_-")),
            with("task_name", json!("Audit")),
            "agent task_name \"Audit\" must be 1 to 48 characters of [a-z0-9_-]".to_owned(),
        ),
        (
            with("message", json!(message)),
            with("message", json!(format!("{message}m"))),
            "the agent spawn message is 131073 bytes; the limit is 131072 bytes (128 KiB)"
                .to_owned(),
        ),
        (
            with("idempotency_key", json!("k".repeat(256))),
            with("idempotency_key", json!("k".repeat(257))),
            "agent idempotency_key must be 1 to 256 bytes and not blank, got 257 bytes".to_owned(),
        ),
        (
            with("model_selection", json!({"model": "m".repeat(256)})),
            with("model_selection", json!({"model": "m".repeat(257)})),
            "model_selection.model must be 1 to 256 bytes without control characters".to_owned(),
        ),
        (
            with("model_selection", json!({"provider": "p", "model": "m"})),
            with("model_selection", json!({"provider": "p"})),
            "model_selection.provider needs an explicit model_selection.model".to_owned(),
        ),
    ] {
        let (reply, children) = call(
            &mut shim,
            "agent_spawn",
            at.clone(),
            Answer::Result(example_result()),
        );
        assert_eq!(children.len(), 1, "{text}: {}", reply.frame.raw);
        assert_eq!(returned(&reply)["agent_id"], "agent-7");
        let (reply, children) = call(&mut shim, "agent_spawn", past.clone(), Answer::Ignore);
        assert!(children.is_empty(), "{text}: {:?}", raws(&children));
        assert_eq!(error_of(&reply), (-32602, text.clone()));
        // The guest sees the shim's refusal as the SDK's RpcError.
        let (reply, _) = call(&mut shim, "agent_spawn", caught(past), Answer::Ignore);
        assert_eq!(tool_text(&reply), format!("RpcError -32602: {text}"));
    }
    shim.shutdown();
}

// ----- the other helpers -------------------------------------------------------------

#[test]
fn python_steer_follow_up_and_interrupt() {
    let (mut shim, _dir) = offered(&AGENT_FEATURES);
    // send_agent_message at 128 KiB: agent/message, the host's answer.
    let big = "s".repeat(128 * 1024);
    let id = shim.send_tool("agent_send", json!({"target": "agent-7", "message": big}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"delivered_to": "agent-7", "delivery": "steering"}))
    });
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].method(), Some("agent/message"));
    assert_eq!(
        *children[0].params(),
        json!({"parent_request_id": id, "target": "agent-7", "message": big})
    );
    assert_eq!(
        returned(&reply),
        json!({"delivered_to": "agent-7", "delivery": "steering"})
    );
    let (reply, _) = call(
        &mut shim,
        "agent_send",
        json!({"target": "/root/audit-deps", "message": "focus on serde"}),
        Answer::Result(json!({"delivered_to": "agent-7", "delivery": "queued"})),
    );
    assert_eq!(
        returned(&reply),
        json!({"delivered_to": "agent-7", "delivery": "queued"})
    );

    // follow_up_agent at 128 KiB: both deliveries.
    for delivery in ["follow_up", "new_run"] {
        let id = shim.send_tool(
            "agent_follow_up",
            json!({"target": "agent-7", "message": big}),
        );
        let (reply, children) = serve(&mut shim, id, |_| {
            Answer::Result(
                json!({"agent_id": "agent-7", "agent_path": "/root/audit-deps", "delivery": delivery}),
            )
        });
        assert_eq!(children[0].method(), Some("agent/follow_up"));
        assert_eq!(
            *children[0].params(),
            json!({"parent_request_id": id, "target": "agent-7", "message": big})
        );
        assert_eq!(
            returned(&reply),
            json!({"agent_id": "agent-7", "agent_path": "/root/audit-deps", "delivery": delivery})
        );
    }

    // interrupt_agent: the exact frame; previous_status as the host sent it.
    let id = shim.send_tool("agent_interrupt", json!({"target": "agent-7"}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(
            json!({"agent_id": "agent-7", "agent_path": "/root/audit-deps",
            "previous_status": {"state": "running", "turn": 2}, "interrupt_requested": true}),
        )
    });
    assert_eq!(
        children[0].raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"agent/interrupt","params":{{"parent_request_id":{id},"target":"agent-7"}}}}"#,
            children[0].value["id"]
        )
    );
    assert_eq!(
        returned(&reply),
        json!({"agent_id": "agent-7", "agent_path": "/root/audit-deps",
            "previous_status": {"state": "running", "turn": 2}, "interrupt_requested": true})
    );

    // The SDK's checks (ValueError), then the shim's bounds (-32602).
    for (tool, arguments, text) in [
        (
            "agent_send",
            json!({"target": " ", "message": "m"}),
            "agent target must be non-empty",
        ),
        (
            "agent_send",
            json!({"target": "agent-7", "message": ""}),
            "agent message must be non-empty",
        ),
        (
            "agent_follow_up",
            json!({"target": "", "message": "m"}),
            "agent target must be non-empty",
        ),
        (
            "agent_interrupt",
            json!({"target": "\t"}),
            "agent target must be non-empty",
        ),
    ] {
        let (reply, children) = call(&mut shim, tool, arguments, Answer::Ignore);
        assert!(children.is_empty(), "{tool}");
        assert_eq!(sdk_refusal(&reply), text, "{tool}");
    }
    for (tool, what) in [("agent_send", "steering"), ("agent_follow_up", "follow-up")] {
        let arguments = json!({"target": "agent-7", "message": format!("{big}s")});
        let (reply, children) = call(&mut shim, tool, arguments, Answer::Ignore);
        assert!(children.is_empty(), "{tool}");
        assert_eq!(
            error_of(&reply),
            (
                -32602,
                format!(
                    "the agent {what} message is 131073 bytes; the limit is 131072 bytes (128 KiB)"
                )
            )
        );
    }
    shim.shutdown();
}

#[test]
fn python_list_wait_and_models() {
    let (mut shim, _dir) = offered(&AGENT_FEATURES);
    // list_agents: the exact frame; unknown states and members are kept.
    let id = shim.send_tool("agent_list", json!({}));
    let (reply, children) = serve(&mut shim, id, |_| Answer::Result(example_snapshot()));
    assert_eq!(
        children[0].raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"agent/list","params":{{"parent_request_id":{id}}}}}"#,
            children[0].value["id"]
        )
    );
    assert_eq!(returned(&reply), returned_snapshot());
    // A persistence diagnostic reaches the guest as the host wrote it.
    let mut snapshot = example_snapshot();
    snapshot["persistence_error"] = json!({"code": "disk_full", "path": "agents.json"});
    let (reply, _) = call(&mut shim, "agent_list", json!({}), Answer::Result(snapshot));
    let mut expected = returned_snapshot();
    expected["persistence_error"] = json!({"code": "disk_full", "path": "agents.json"});
    assert_eq!(returned(&reply), expected);

    // wait_agents: the SDK's default is 30,000 ms, sent; 1 and 60,000 go
    // out; 0 and 60,001 are the SDK's refusals.
    for (arguments, timeout) in [
        (json!({}), 30_000),
        (json!({"timeout_ms": 1}), 1),
        (json!({"timeout_ms": 60_000}), 60_000),
    ] {
        let id = shim.send_tool("agent_wait", arguments);
        let (reply, children) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"timed_out": timeout == 1, "snapshot": example_snapshot()}))
        });
        assert_eq!(
            children[0].raw,
            format!(
                r#"{{"jsonrpc":"2.0","id":{},"method":"agent/wait","params":{{"parent_request_id":{id},"timeout_ms":{timeout}}}}}"#,
                children[0].value["id"]
            )
        );
        assert_eq!(
            returned(&reply),
            json!({"timed_out": timeout == 1, "snapshot": returned_snapshot()})
        );
    }
    for timeout in [json!(0), json!(60_001), json!(true), json!("10")] {
        let (reply, children) = call(
            &mut shim,
            "agent_wait",
            json!({"timeout_ms": timeout}),
            Answer::Ignore,
        );
        assert!(children.is_empty(), "{timeout}");
        assert_eq!(
            sdk_refusal(&reply),
            "agent timeout_ms must be between 1 and 60000"
        );
    }

    // list_agent_models: the SDK's default limit (50) is sent; the models
    // come back rebuilt, a null display_name left out.
    let models = json!({"models": [
        {"model": "claude", "provider": "anthropic", "display_name": "Claude",
         "reasoning": ["off", "high"], "context_window": 200000, "max_output_tokens": 64000},
        {"model": "local", "provider": "ollama", "display_name": null,
         "reasoning": [], "context_window": 8192, "max_output_tokens": 2048},
    ], "truncated": true});
    let id = shim.send_tool("agent_models", json!({}));
    let answer = models.clone();
    let (reply, children) = serve(&mut shim, id, move |_| Answer::Result(answer.clone()));
    assert_eq!(
        children[0].raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"agent/models","params":{{"parent_request_id":{id},"limit":50}}}}"#,
            children[0].value["id"]
        )
    );
    let mut expected = models;
    expected["models"][1]
        .as_object_mut()
        .unwrap()
        .remove("display_name");
    assert_eq!(returned(&reply), expected);
    for (query, limit) in [("q".repeat(128), 1), (String::new(), 100)] {
        let id = shim.send_tool("agent_models", json!({"query": query, "limit": limit}));
        let (reply, children) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"models": [], "truncated": false}))
        });
        assert_eq!(
            *children[0].params(),
            json!({"parent_request_id": id, "query": query, "limit": limit})
        );
        assert_eq!(returned(&reply), json!({"models": [], "truncated": false}));
    }
    for (arguments, text) in [
        (
            json!({"query": "q".repeat(129)}),
            "agent model query must be at most 128 UTF-8 bytes",
        ),
        (
            json!({"limit": 0}),
            "agent model limit must be between 1 and 100",
        ),
        (
            json!({"limit": 101}),
            "agent model limit must be between 1 and 100",
        ),
    ] {
        let (reply, children) = call(&mut shim, "agent_models", arguments, Answer::Ignore);
        assert!(children.is_empty(), "{text}");
        assert_eq!(sdk_refusal(&reply), text);
    }
    // A control character passes the SDK; the shim refuses it.
    let (reply, children) = call(
        &mut shim,
        "agent_models",
        json!({"query": "a\nb"}),
        Answer::Ignore,
    );
    assert!(children.is_empty());
    assert_eq!(
        error_of(&reply),
        (
            -32602,
            "the model query must be at most 128 bytes without control characters, got 3 bytes"
                .to_owned()
        )
    );
    shim.shutdown();
}

// ----- the host's refusals ------------------------------------------------------------

#[test]
fn python_host_refusals_reach_the_guest_unchanged() {
    let (mut shim, _dir) = offered(&AGENT_FEATURES);
    for (tool, arguments, code, message) in [
        (
            "agent_spawn",
            example_spawn(),
            -32002,
            "agent session service is not bound to this host-owned resource owner",
        ),
        (
            "agent_spawn",
            example_spawn(),
            -32002,
            "extension child concurrency limit reached (2)",
        ),
        (
            "agent_spawn",
            example_spawn(),
            -32602,
            "invalid agent spawn policy: tools",
        ),
        (
            "agent_list",
            json!({}),
            -32000,
            "extension child worker limit 8 exceeded",
        ),
        (
            "agent_wait",
            json!({"timeout_ms": 10}),
            -32000,
            "extension child worker limit 8 exceeded",
        ),
        (
            "agent_send",
            json!({"target": "agent-9", "message": "m"}),
            -32002,
            "unknown agent target",
        ),
        (
            "agent_follow_up",
            json!({"target": "agent-7", "message": "m"}),
            -32002,
            "follow-up queue is full",
        ),
        (
            "agent_interrupt",
            json!({"target": "agent-7"}),
            -32002,
            "unknown agent target",
        ),
        (
            "agent_models",
            json!({}),
            -32002,
            "invalid model discovery bounds",
        ),
    ] {
        // Uncaught: the tool call's error, code and message unchanged.
        let (reply, children) = call(
            &mut shim,
            tool,
            arguments.clone(),
            Answer::Error(code, message),
        );
        assert_eq!(children.len(), 1, "{tool}");
        assert_eq!(error_of(&reply), (code, message.to_owned()), "{tool}");
        // Caught: the SDK's RpcError with the host's code and message.
        let (reply, children) = call(
            &mut shim,
            tool,
            caught(arguments),
            Answer::Error(code, message),
        );
        assert_eq!(children.len(), 1, "{tool}");
        assert_eq!(
            tool_text(&reply),
            format!("RpcError {code}: {message}"),
            "{tool}"
        );
    }
    // A malformed answer is the shim's failure naming the method, an
    // RpcError -32603 in the guest.
    for (tool, arguments, answer, why) in [
        (
            "agent_spawn",
            example_spawn(),
            json!({"agent_id": "agent-7", "status": {"state": "running"}}),
            "invalid agent/spawn response: agent_path must be a string",
        ),
        (
            "agent_send",
            json!({"target": "agent-7", "message": "m"}),
            json!({"delivered_to": "agent-7", "delivery": "teleport"}),
            "invalid agent/message response: delivery must be steering or queued",
        ),
        (
            "agent_follow_up",
            json!({"target": "agent-7", "message": "m"}),
            json!({"agent_id": "agent-7", "agent_path": "p", "delivery": "later"}),
            "invalid agent/follow_up response: delivery must be follow_up or new_run",
        ),
        (
            "agent_list",
            json!({}),
            json!({"agents": []}),
            "invalid agent/list response: principal must be a string",
        ),
        (
            "agent_wait",
            json!({}),
            json!({"snapshot": example_snapshot()}),
            "invalid agent/wait response: timed_out must be a boolean",
        ),
        (
            "agent_interrupt",
            json!({"target": "a"}),
            json!({"agent_id": "a", "agent_path": "p"}),
            "invalid agent/interrupt response",
        ),
        (
            "agent_models",
            json!({}),
            json!({"models": [{"model": "m"}], "truncated": false}),
            "invalid agent/models response",
        ),
    ] {
        let (reply, _) = call(&mut shim, tool, caught(arguments), Answer::Result(answer));
        let text = tool_text(&reply);
        assert!(
            text.starts_with(&format!("RpcError -32603: {why}")),
            "{tool}: {}",
            reply.frame.raw
        );
    }
    shim.shutdown();
}

#[test]
fn python_cancelling_the_parent_cancels_the_pending_child() {
    let (mut shim, _dir) = offered(&AGENT_FEATURES);
    let id = shim.send_tool("agent_wait", json!({"timeout_ms": 60000, "catch": true}));
    let child = loop {
        let frame = shim.recv(REQUEST_TIMEOUT).expect("the agent/wait request");
        if let FrameKind::Request {
            id: child, method, ..
        } = &frame.kind
        {
            assert_eq!(method, "agent/wait");
            break child.clone();
        }
    };
    shim.cancel(id, "user").expect("cancel");
    let mut cancelled_child = false;
    let reply = loop {
        let frame = shim.recv(REQUEST_TIMEOUT).expect("frames after the cancel");
        match &frame.kind {
            FrameKind::Notification { method, params } if method == "$/cancelRequest" => {
                assert_eq!(params["id"], child.to_json(), "{}", frame.raw);
                cancelled_child = true;
            }
            FrameKind::Response { id: got, .. } if *got == id => break frame,
            _ => {}
        }
    };
    // The child's cancellation may follow the parent's answer.
    let until = std::time::Instant::now() + LOG_TIMEOUT;
    while !cancelled_child && std::time::Instant::now() < until {
        let Ok(frame) = shim.recv(std::time::Duration::from_millis(200)) else {
            continue;
        };
        if let FrameKind::Notification { method, params } = &frame.kind
            && method == "$/cancelRequest"
        {
            assert_eq!(params["id"], child.to_json(), "{}", frame.raw);
            cancelled_child = true;
        }
    }
    assert!(cancelled_child, "no $/cancelRequest for the child");
    // A cancelled request is answered -32800, whatever the guest made of
    // the CancelledError it caught.
    assert_eq!(reply.value["error"]["code"], -32800, "{}", reply.raw);

    // The host abandoning the child (its parent settled) cancels the
    // helper: the guest sees CancelledError.
    let id = shim.send_tool("agent_list", json!({"catch": true}));
    let child = loop {
        let frame = shim.recv(REQUEST_TIMEOUT).expect("the agent/list request");
        if let FrameKind::Request { id: child, .. } = &frame.kind {
            break child.clone();
        }
    };
    shim.cancel_child(&child, "parent settled")
        .expect("cancel child");
    let reply = shim.reply(id);
    assert_eq!(
        tool_text(&reply),
        "CancelledError -32800: request cancelled",
        "{}",
        reply.frame.raw
    );
    shim.shutdown();
}
