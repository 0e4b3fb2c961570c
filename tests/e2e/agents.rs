//! Child agent sessions (docs/services.md#agents) behind the guest's `agents`
//! import. hostsim plays a host that binds the service (it offers
//! `agent_sessions` and `agent_model_selection_v1`): each test checks the
//! exact frames the shim writes and what the guest receives, that every
//! bound is enforced locally (at the limit the request goes out, one past
//! it nothing is written and the error names the bound), and that the
//! host's refusals reach the guest unchanged.

use crate::support::*;
use crate::support::{ChildAnswer as Answer, serve_children as serve};
use octet_hostsim::{ApiVersion, Frame, FrameKind, InitializeParams, Reply};
use serde_json::{Value, json};

const AGENT_FEATURES: [&str; 2] = ["agent_sessions", "agent_model_selection_v1"];

/// The probe after `initialize`, offered the usual features plus `extra`.
fn offered(extra: &[&str]) -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let mut features: Vec<&str> = octet_hostsim::HOST_OPTIONAL_FEATURES.to_vec();
    features.extend(extra);
    let params = InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace)
        .optional_features(&features)
        .to_json();
    expect_result(&shim.initialize_with(params));
    shim
}

fn call(shim: &mut Shim, tool: &str, arguments: Value, answer: Answer) -> (Reply, Vec<Frame>) {
    let id = shim.send_tool(tool, arguments);
    let mut answer = Some(answer);
    serve(shim, id, move |_| answer.take().unwrap_or(Answer::Ignore))
}

fn error_of(reply: &Reply) -> (i64, String) {
    let error = expect_error(reply);
    (error.code, error.message.clone())
}

fn parsed(reply: &Reply) -> Value {
    serde_json::from_str(&tool_text(reply))
        .unwrap_or_else(|err| panic!("not JSON ({err}): {}", reply.frame.raw))
}

/// A typical spawn (the fields of docs/services.md#agent-spawn) as probe
/// arguments.
fn example_spawn() -> Value {
    json!({
        "task_name": "audit-deps",
        "message": "List outdated dependencies in Cargo.toml.",
        "idempotency_key": "31:audit-deps",
        "policy": {
            "tools": ["read", "search"], "max_concurrent_children": 2, "max_turns": 12,
            "max_output_bytes": 4096, "timeout_ms": 600000,
        },
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

fn expected_snapshot() -> Value {
    let snapshot = example_snapshot();
    json!({
        "principal": "scan-tools:3fa1c2", "resource_owner": "5d41a9c07e2b",
        "persistence_error": null,
        "agents": [
            {"agent_id": "agent-7", "agent_path": "/root/audit-deps",
             "status": {"state": "completed", "output": "serde 1.0.190 → 1.0.215", "error": null},
             "active": false, "details": snapshot["agents"][0]},
            {"agent_id": "agent-8", "agent_path": null,
             "status": {"state": "limit_reached", "output": null, "error": null},
             "active": false, "details": snapshot["agents"][1]},
        ],
    })
}

// ----- negotiation ---------------------------------------------------------------

#[test]
fn agents_need_the_bound_service_and_the_guests_declaration() {
    // The usual offer (no child-session service bound): not negotiated, and
    // every operation is refused without a frame.
    let mut shim = offered(&[]);
    assert!(!shim.features().contains("agent_sessions"));
    for (tool, arguments) in [
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
    ] {
        let (reply, children) = call(&mut shim, tool, arguments, Answer::Ignore);
        assert!(children.is_empty(), "{tool}");
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32601, "{tool}");
        assert!(message.contains("`agent_sessions`"), "{tool}: {message}");
    }
    shim.shutdown();

    // Model selection alone is never negotiated (it requires agent_sessions).
    let mut shim = offered(&["agent_model_selection_v1"]);
    assert!(!shim.features().contains("agent_model_selection_v1"));
    shim.shutdown();

    // agent_sessions without model selection: list-models and an explicit
    // model are refused locally, naming the feature.
    let mut shim = offered(&["agent_sessions"]);
    assert!(shim.features().contains("agent_sessions"));
    assert!(!shim.features().contains("agent_model_selection_v1"));
    let (reply, children) = call(&mut shim, "agent_models", json!({}), Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("`agent_model_selection_v1`"), "{message}");
    let mut arguments = example_spawn();
    arguments["policy"]["model_selection"] = json!({"model": "m"});
    let (reply, children) = call(&mut shim, "agent_spawn", arguments, Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("`agent_model_selection_v1`"), "{message}");
    // ... and the example spawn goes out.
    let (reply, children) = call(
        &mut shim,
        "agent_spawn",
        example_spawn(),
        Answer::Result(example_result()),
    );
    assert_eq!(children.len(), 1);
    assert_eq!(parsed(&reply)["agent_id"], "agent-7");
    shim.shutdown();

    // Both offered: both negotiated, in the host's order.
    let shim = offered(&AGENT_FEATURES);
    let features = shim.features();
    assert!(AGENT_FEATURES.iter().all(|f| features.contains(*f)));
    drop(shim);
}

// ----- spawn -----------------------------------------------------------------------

#[test]
fn spawn_writes_the_exact_frame_and_returns_the_hosts_answer() {
    let mut shim = offered(&AGENT_FEATURES);
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
    assert_eq!(
        parsed(&reply),
        json!({
            "agent_id": "agent-7", "agent_path": "/root/audit-deps",
            "status": {"state": "running", "output": null, "error": null},
            "details": example_result(),
        })
    );

    // Optional members and model selection travel when given.
    let mut arguments = example_spawn();
    arguments["profile"] = json!("reviewer");
    arguments["fingerprint"] = json!("0123456789abcdef".repeat(4));
    arguments["policy"]["max_tokens"] = json!(32000);
    arguments["policy"]["max_cost_microdollars"] = json!(2500000);
    arguments["policy"]["model_selection"] =
        json!({"provider": "anthropic", "model": "claude", "reasoning": "high"});
    let (_, children) = call(
        &mut shim,
        "agent_spawn",
        arguments,
        Answer::Result(example_result()),
    );
    let params = children[0].params();
    assert_eq!(params["profile"], "reviewer");
    assert_eq!(params["fingerprint"], "0123456789abcdef".repeat(4));
    assert_eq!(params["policy"]["max_tokens"], 32000);
    assert_eq!(params["policy"]["max_cost_microdollars"], 2500000);
    assert_eq!(
        params["policy"]["model_selection"],
        json!({"provider": "anthropic", "model": "claude", "reasoning": "high"})
    );
    assert!(params.get("resource_owner").is_none());

    // Idempotency: the same key and input go out identically (the host
    // returns the original child); a conflicting reuse is the host's -32002.
    let (first, second) = {
        let (_, a) = call(
            &mut shim,
            "agent_spawn",
            example_spawn(),
            Answer::Result(example_result()),
        );
        let (reply, b) = call(
            &mut shim,
            "agent_spawn",
            example_spawn(),
            Answer::Result(example_result()),
        );
        assert_eq!(parsed(&reply)["agent_id"], "agent-7");
        (a[0].clone(), b[0].clone())
    };
    assert_ne!(
        first.value["id"], second.value["id"],
        "child ids are never reused"
    );
    let without_parent = |frame: &Frame| {
        let mut params = frame.params().clone();
        params.as_object_mut().unwrap().remove("parent_request_id");
        params
    };
    assert_eq!(without_parent(&first), without_parent(&second));
    let mut changed = example_spawn();
    changed["message"] = json!("Something else.");
    let (reply, children) = call(
        &mut shim,
        "agent_spawn",
        changed,
        Answer::Error(
            -32002,
            "spawn idempotency_key was reused with different input",
        ),
    );
    assert_eq!(children.len(), 1);
    assert_eq!(
        error_of(&reply),
        (
            -32002,
            "spawn idempotency_key was reused with different input".to_owned()
        )
    );
    shim.shutdown();
}

#[test]
fn spawn_bounds_at_the_limit_and_one_past() {
    let mut shim = offered(&AGENT_FEATURES);
    // (field path, value at the limit, value one past it, what the error names)
    let cases: Vec<(&[&str], Value, Value, &str)> = vec![
        (
            &["task_name"],
            json!("a".repeat(48)),
            json!("a".repeat(49)),
            "task_name",
        ),
        (&["task_name"], json!("a"), json!(""), "task_name"),
        (&["task_name"], json!("z0_-"), json!("Audit"), "[a-z0-9_-]"),
        (
            &["profile"],
            json!("p".repeat(48)),
            json!("p".repeat(49)),
            "profile",
        ),
        (
            &["fingerprint"],
            json!("f".repeat(64)),
            json!("f".repeat(65)),
            "fingerprint",
        ),
        (
            &["fingerprint"],
            json!("0".repeat(64)),
            json!("F".repeat(64)),
            "64 lowercase hex",
        ),
        (
            &["message"],
            json!("m".repeat(128 * 1024)),
            json!("m".repeat(128 * 1024 + 1)),
            "128 KiB",
        ),
        (&["message"], json!("m"), json!(""), "must not be empty"),
        (
            &["idempotency_key"],
            json!("k".repeat(256)),
            json!("k".repeat(257)),
            "idempotency_key",
        ),
        (&["idempotency_key"], json!("k"), json!("   "), "not blank"),
        (
            &["policy", "tools"],
            json!(["read", "search", "edit", "write", "bash"]),
            json!([]),
            "tools",
        ),
        (
            &["policy", "tools"],
            json!(["bash"]),
            json!(["edit", "edit"]),
            "twice",
        ),
        (
            &["policy", "max_concurrent_children"],
            json!(8),
            json!(9),
            "max_concurrent_children",
        ),
        (
            &["policy", "max_concurrent_children"],
            json!(1),
            json!(0),
            "max_concurrent_children",
        ),
        (
            &["policy", "max_turns"],
            json!(256),
            json!(257),
            "max_turns",
        ),
        (&["policy", "max_turns"], json!(1), json!(0), "max_turns"),
        (
            &["policy", "max_tokens"],
            json!(64000),
            json!(64001),
            "max_tokens",
        ),
        (
            &["policy", "max_tokens"],
            json!(1000),
            json!(999),
            "max_tokens",
        ),
        (
            &["policy", "max_cost_microdollars"],
            json!(50_000_000),
            json!(50_000_001),
            "max_cost_microdollars",
        ),
        (
            &["policy", "max_cost_microdollars"],
            json!(1),
            json!(0),
            "max_cost_microdollars",
        ),
        (
            &["policy", "max_output_bytes"],
            json!(16384),
            json!(16385),
            "max_output_bytes",
        ),
        (
            &["policy", "max_output_bytes"],
            json!(512),
            json!(511),
            "max_output_bytes",
        ),
        (
            &["policy", "timeout_ms"],
            json!(86_400_000),
            json!(86_400_001),
            "timeout_ms",
        ),
        (
            &["policy", "timeout_ms"],
            json!(5000),
            json!(4999),
            "timeout_ms",
        ),
        (
            &["policy", "model_selection"],
            json!({"model": "m".repeat(256)}),
            json!({"model": "m".repeat(257)}),
            "model_selection.model",
        ),
        (
            &["policy", "model_selection"],
            json!({"reasoning": "high"}),
            json!({"reasoning": "hi\u{1}gh"}),
            "model_selection.reasoning",
        ),
        (
            &["policy", "model_selection"],
            json!({"provider": "p", "model": "m"}),
            json!({"provider": "p"}),
            "needs an explicit model_selection.model",
        ),
    ];
    for (path, at, past, needle) in cases {
        let with = |value: &Value| {
            let mut arguments = example_spawn();
            let mut slot = &mut arguments;
            for key in path {
                slot = &mut slot[*key];
            }
            *slot = value.clone();
            arguments
        };
        let (reply, children) = call(
            &mut shim,
            "agent_spawn",
            with(&at),
            Answer::Result(example_result()),
        );
        assert_eq!(children.len(), 1, "{path:?} at {at}: {}", reply.frame.raw);
        let mut sent = children[0].params().clone();
        for key in path {
            sent = sent[*key].clone();
        }
        assert_eq!(sent, at, "{path:?}");
        assert_eq!(parsed(&reply)["agent_id"], "agent-7");
        let (reply, children) = call(&mut shim, "agent_spawn", with(&past), Answer::Ignore);
        assert!(children.is_empty(), "{path:?} past: {}", children[0].raw);
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602, "{path:?}: {message}");
        assert!(message.contains(needle), "{path:?}: {message}");
    }
    shim.shutdown();
}

// ----- the other operations ----------------------------------------------------------

#[test]
fn steer_follow_up_interrupt_list_and_wait() {
    let mut shim = offered(&AGENT_FEATURES);
    // agent/message at 128 KiB, then one past it.
    let big = "s".repeat(128 * 1024);
    let id = shim.send_tool("agent_send", json!({"target": "agent-7", "message": big}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"delivered_to": "agent-7", "delivery": "steering"}))
    });
    assert_eq!(children[0].method(), Some("agent/message"));
    assert_eq!(
        *children[0].params(),
        json!({"parent_request_id": id, "target": "agent-7", "message": big})
    );
    assert_eq!(
        parsed(&reply),
        json!({"delivered_to": "agent-7", "delivery": "steering"})
    );
    for (tool, arguments, needle) in [
        (
            "agent_send",
            json!({"target": "agent-7", "message": format!("{big}s")}),
            "128 KiB",
        ),
        (
            "agent_send",
            json!({"target": "agent-7", "message": ""}),
            "must not be empty",
        ),
        (
            "agent_send",
            json!({"target": " ", "message": "m"}),
            "target",
        ),
        (
            "agent_follow_up",
            json!({"target": "agent-7", "message": format!("{big}s")}),
            "128 KiB",
        ),
        (
            "agent_follow_up",
            json!({"target": "", "message": "m"}),
            "target",
        ),
        ("agent_interrupt", json!({"target": ""}), "target"),
    ] {
        let (reply, children) = call(&mut shim, tool, arguments, Answer::Ignore);
        assert!(children.is_empty(), "{tool}");
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602, "{tool}");
        assert!(message.contains(needle), "{tool}: {message}");
    }
    // queued steering
    let (reply, _) = call(
        &mut shim,
        "agent_send",
        json!({"target": "/root/audit-deps", "message": "focus on serde"}),
        Answer::Result(json!({"delivered_to": "agent-7", "delivery": "queued"})),
    );
    assert_eq!(parsed(&reply)["delivery"], "queued");
    // An unknown delivery is an invalid host answer.
    let (reply, _) = call(
        &mut shim,
        "agent_send",
        json!({"target": "agent-7", "message": "m"}),
        Answer::Result(json!({"delivered_to": "agent-7", "delivery": "teleport"})),
    );
    assert_eq!(expect_result(&reply)["is_error"], true);
    assert!(tool_text(&reply).contains("invalid agent/message response"));

    // agent/follow_up at 128 KiB: follow_up and new_run.
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
            parsed(&reply),
            json!({"agent_id": "agent-7", "agent_path": "/root/audit-deps", "delivery": delivery})
        );
    }

    // agent/interrupt
    let id = shim.send_tool("agent_interrupt", json!({"target": "agent-7"}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(
            json!({"agent_id": "agent-7", "agent_path": "/root/audit-deps",
            "previous_status": {"state": "running"}, "interrupt_requested": true}),
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
        parsed(&reply),
        json!({"agent_id": "agent-7", "agent_path": "/root/audit-deps",
            "previous_status": {"state": "running"}, "interrupt_requested": true})
    );

    // agent/list: unknown states and fields are kept, not rejected.
    let id = shim.send_tool("agent_list", json!({}));
    let (reply, children) = serve(&mut shim, id, |_| Answer::Result(example_snapshot()));
    assert_eq!(
        children[0].raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"agent/list","params":{{"parent_request_id":{id}}}}}"#,
            children[0].value["id"]
        )
    );
    assert_eq!(parsed(&reply), expected_snapshot());

    // agent/wait: no timeout → none sent (the host's 30,000 default); 1 and
    // 60,000 go out; 0 and 60,001 are refused locally.
    let id = shim.send_tool("agent_wait", json!({}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"timed_out": false, "snapshot": example_snapshot()}))
    });
    assert_eq!(*children[0].params(), json!({"parent_request_id": id}));
    assert_eq!(
        parsed(&reply),
        json!({"timed_out": false, "snapshot": expected_snapshot()})
    );
    for timeout in [1, 60_000] {
        let id = shim.send_tool("agent_wait", json!({"timeout_ms": timeout}));
        let (reply, children) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"timed_out": true, "snapshot": example_snapshot()}))
        });
        assert_eq!(
            *children[0].params(),
            json!({"parent_request_id": id, "timeout_ms": timeout})
        );
        assert_eq!(parsed(&reply)["timed_out"], true);
    }
    for timeout in [0, 60_001] {
        let (reply, children) = call(
            &mut shim,
            "agent_wait",
            json!({"timeout_ms": timeout}),
            Answer::Ignore,
        );
        assert!(children.is_empty(), "{timeout}");
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602);
        assert!(message.contains("1 to 60000 ms"), "{message}");
    }
    shim.shutdown();
}

#[test]
fn list_models_bounds_and_result() {
    let mut shim = offered(&AGENT_FEATURES);
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
            r#"{{"jsonrpc":"2.0","id":{},"method":"agent/models","params":{{"parent_request_id":{id}}}}}"#,
            children[0].value["id"]
        )
    );
    assert_eq!(parsed(&reply), models);
    for (query, limit) in [("q".repeat(128), 1), (String::new(), 100)] {
        let id = shim.send_tool("agent_models", json!({"query": query, "limit": limit}));
        let (_, children) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"models": [], "truncated": false}))
        });
        assert_eq!(
            *children[0].params(),
            json!({"parent_request_id": id, "query": query, "limit": limit})
        );
    }
    for (arguments, needle) in [
        (json!({"query": "q".repeat(129)}), "128 bytes"),
        (json!({"query": "a\nb"}), "control characters"),
        (json!({"limit": 0}), "1 to 100"),
        (json!({"limit": 101}), "1 to 100"),
    ] {
        let (reply, children) = call(&mut shim, "agent_models", arguments.clone(), Answer::Ignore);
        assert!(children.is_empty(), "{arguments}");
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602, "{arguments}");
        assert!(message.contains(needle), "{arguments}: {message}");
    }
    // Only the root owner may list: the host's -32002 reaches the guest.
    let (reply, _) = call(
        &mut shim,
        "agent_models",
        json!({}),
        Answer::Error(-32002, "invalid model discovery bounds"),
    );
    assert_eq!(
        error_of(&reply),
        (-32002, "invalid model discovery bounds".to_owned())
    );
    shim.shutdown();
}

// ----- the host's refusals ------------------------------------------------------------

#[test]
fn host_errors_reach_the_guest_unchanged() {
    let mut shim = offered(&AGENT_FEATURES);
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
            -32002,
            "extension child total limit reached (32)",
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
            -32800,
            "parent request is no longer active",
        ),
    ] {
        let (reply, children) = call(&mut shim, tool, arguments, Answer::Error(code, message));
        assert_eq!(children.len(), 1, "{tool}");
        assert_eq!(error_of(&reply), (code, message.to_owned()), "{tool}");
    }
    // A malformed answer is a failure naming the method.
    for (tool, arguments, answer, method) in [
        (
            "agent_spawn",
            example_spawn(),
            json!({"agent_id": "agent-7", "status": {"state": "running"}}),
            "agent/spawn",
        ),
        (
            "agent_spawn",
            example_spawn(),
            json!({"agent_id": "a", "agent_path": "p", "status": {}}),
            "agent/spawn",
        ),
        ("agent_list", json!({}), json!({"agents": []}), "agent/list"),
        (
            "agent_wait",
            json!({}),
            json!({"snapshot": example_snapshot()}),
            "agent/wait",
        ),
        (
            "agent_interrupt",
            json!({"target": "a"}),
            json!({"agent_id": "a", "agent_path": "p"}),
            "agent/interrupt",
        ),
        (
            "agent_models",
            json!({}),
            json!({"models": [{"model": "m"}], "truncated": false}),
            "agent/models",
        ),
    ] {
        let (reply, _) = call(&mut shim, tool, arguments, Answer::Result(answer));
        assert_eq!(expect_result(&reply)["is_error"], true, "{tool}");
        assert!(
            tool_text(&reply).contains(&format!("invalid {method} response")),
            "{tool}: {}",
            reply.frame.raw
        );
    }
    shim.shutdown();
}

#[test]
fn cancelling_the_parent_cancels_the_pending_child() {
    let mut shim = offered(&AGENT_FEATURES);
    let id = shim.send_tool("agent_wait", json!({"timeout_ms": 60000}));
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
    // The child's cancellation may follow the parent's answer (the host
    // cancels unresolved children of a settled parent itself).
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
    assert_eq!(reply.value["error"]["code"], -32800, "{}", reply.raw);
    // The host abandoning a child (its parent settled) cancels the call.
    let id = shim.send_tool("agent_list", json!({}));
    let child = loop {
        let frame = shim.recv(REQUEST_TIMEOUT).expect("the agent/list request");
        if let FrameKind::Request { id: child, .. } = &frame.kind {
            break child.clone();
        }
    };
    shim.cancel_child(&child, "parent settled")
        .expect("cancel child");
    let reply = shim.reply(id);
    assert_eq!(error_of(&reply).0, -32800, "{}", reply.frame.raw);
    shim.shutdown();
}
