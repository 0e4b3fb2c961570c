//! The JavaScript and C SDKs' service wrappers end to end: twin test guests
//! (`guest-sdk/js/test/guest/services.js`, `guest-sdk/c/tests/services.c`,
//! built by `scripts/build-guests-js services` and `scripts/build-guests-c
//! services` into `target/components/{js,c}/services.wasm`) run by the real
//! binary with hostsim playing the host. Every test runs both guests and
//! checks the frames each SDK call writes and what the guest received, the
//! host's refusals included: the same transcript for both languages.

use crate::support::{ChildAnswer as Answer, serve_children as serve};
use crate::support::{Shim, component, expect_error, expect_result, stderr_text, tool_text};
use octet_hostsim::{ApiVersion, Frame, HOST_OPTIONAL_FEATURES, InitializeParams, ManifestSpec};
use serde_json::{Value, json};
use tempfile::TempDir;

const LANGUAGES: [&str; 2] = ["js", "c"];

const TOOLS: [&str; 15] = [
    "spawn",
    "send",
    "follow_up",
    "list",
    "wait",
    "interrupt",
    "models",
    "active",
    "secret",
    "policy",
    "ask",
    "report",
    "catalog",
    "present_for",
    "wait_for_cancel",
];

/// The guest of `lang`, initialized with every service bound: agents (with
/// model selection), secrets (`tracker.api_key` declared), approvals and
/// presentation.
fn start(lang: &str) -> (Shim, TempDir) {
    let component = component(&format!("{lang}/services"));
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let component_arg = component.to_string_lossy().into_owned();
    let manifest = ManifestSpec::new("sdk-services", ApiVersion::V0_2)
        .description("The JavaScript and C SDKs' service wrappers")
        .tools(&TOOLS)
        .notifications(true)
        .confirmations(true)
        .context(true)
        .ui(&["status"]);
    let toml = manifest.to_extension_toml("octet-wasm", &["run", &component_arg]);
    std::fs::write(dir.path().join("extension.toml"), toml).expect("write the manifest");
    let mut shim = Shim::start(dir.path(), &component_arg, manifest);
    let mut features: Vec<&str> = HOST_OPTIONAL_FEATURES.to_vec();
    features.extend([
        "secrets",
        "approvals",
        "agent_sessions",
        "agent_model_selection_v1",
    ]);
    let mut params = InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace)
        .optional_features(&features)
        .to_json();
    params["capabilities"]["secrets"] = json!(["tracker.api_key"]);
    params["contributes"]["presentation"] = json!(true);
    let result = expect_result(&shim.initialize_with(params)).clone();
    let negotiated = result["protocol"]["features"].as_array().unwrap().clone();
    for feature in [
        "request_progress",
        "progress_decoration",
        "secrets",
        "policy_intents",
        "approvals",
        "dynamic_tools",
        "agent_sessions",
        "agent_model_selection_v1",
    ] {
        assert!(
            negotiated.contains(&json!(feature)),
            "{lang}: {feature} in {result}"
        );
    }
    (shim, dir)
}

/// Calls `tool`, answering its one child request with `answer` after
/// checking it with `check`; returns the reply and that request.
fn call(
    shim: &mut Shim,
    tool: &str,
    arguments: Value,
    answer: Answer,
) -> (octet_hostsim::Reply, Vec<Frame>) {
    let id = shim.send_tool(tool, arguments);
    let mut answer = Some(answer);
    serve(shim, id, move |_| answer.take().unwrap_or(Answer::Ignore))
}

/// The guest's JSON answer.
fn parsed(lang: &str, reply: &octet_hostsim::Reply) -> Value {
    serde_json::from_str(&tool_text(reply))
        .unwrap_or_else(|err| panic!("{lang}: not JSON ({err}): {}", reply.frame.raw))
}

/// Waits until the shim's stderr holds `needle` (the guest's log records
/// arrive on their own schedule).
fn wait_for_stderr(shim: &Shim, lang: &str, needle: &str) {
    let deadline = std::time::Instant::now() + crate::support::LOG_TIMEOUT;
    while !stderr_text(shim).contains(needle) {
        assert!(
            std::time::Instant::now() < deadline,
            "{lang}: no {needle} in stderr:\n{}",
            stderr_text(shim)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn only_child<'a>(lang: &str, children: &'a [Frame], method: &str) -> &'a Value {
    assert_eq!(children.len(), 1, "{lang}: {children:?}");
    assert_eq!(
        children[0].method(),
        Some(method),
        "{lang}: {}",
        children[0].raw
    );
    children[0].params()
}

#[test]
fn agents_calls_carry_the_sdk_defaults_and_return_the_hosts_answers() {
    for lang in LANGUAGES {
        let (mut shim, _dir) = start(lang);
        let details = json!({"agent_id": "agent-7", "agent_path": "/root/audit", "status": {"state": "running"},
            "principal": "scan:1", "resource_owner": "s1", "created_at_ms": 1767225600000_u64});
        let id = shim.send_tool(
            "spawn",
            json!({"task_name": "audit", "message": "List outdated dependencies.", "idempotency_key": "31:audit",
                "tools": "read,search", "max_turns": 12, "timeout_ms": 600000, "model": "small", "profile": "deps"}),
        );
        let answer = details.clone();
        let (reply, children) = serve(&mut shim, id, move |_| Answer::Result(answer.clone()));
        let params = only_child(lang, &children, "agent/spawn");
        assert_eq!(params["parent_request_id"], id);
        assert_eq!(params["task_name"], "audit", "{lang}");
        assert_eq!(params["profile"], "deps", "{lang}");
        assert_eq!(params["idempotency_key"], "31:audit", "{lang}");
        let policy = &params["policy"];
        assert_eq!(policy["tools"], json!(["read", "search"]), "{lang}");
        assert_eq!(
            policy["max_concurrent_children"], 1,
            "{lang}: the SDK default"
        );
        assert_eq!(policy["max_output_bytes"], 4096, "{lang}: the SDK default");
        assert_eq!(policy["max_turns"], 12, "{lang}");
        assert_eq!(policy["timeout_ms"], 600000, "{lang}");
        assert_eq!(policy["max_tokens"], Value::Null, "{lang}: inherited");
        assert_eq!(
            policy["model_selection"]["model"], "small",
            "{lang}: {policy}"
        );
        assert_eq!(
            parsed(lang, &reply),
            json!({"agent_id": "agent-7", "agent_path": "/root/audit",
                "status": {"state": "running", "output": null, "error": null}, "details": details}),
            "{lang}"
        );

        let (reply, children) = call(
            &mut shim,
            "send",
            json!({"target": "agent-7", "message": "focus"}),
            Answer::Result(json!({"delivered_to": "agent-7", "delivery": "queued"})),
        );
        let params = only_child(lang, &children, "agent/message");
        assert_eq!(
            (params["target"].clone(), params["message"].clone()),
            (json!("agent-7"), json!("focus"))
        );
        assert_eq!(
            parsed(lang, &reply),
            json!({"delivered_to": "agent-7", "delivery": "queued"}),
            "{lang}"
        );

        let (reply, children) = call(
            &mut shim,
            "follow_up",
            json!({"target": "/root/audit", "message": "more"}),
            Answer::Result(
                json!({"agent_id": "agent-7", "agent_path": "/root/audit", "delivery": "new_run"}),
            ),
        );
        assert_eq!(
            only_child(lang, &children, "agent/follow_up")["target"],
            "/root/audit"
        );
        assert_eq!(
            parsed(lang, &reply),
            json!({"agent_id": "agent-7", "agent_path": "/root/audit", "delivery": "new_run"}),
            "{lang}"
        );

        let record = json!({"agent_id": "agent-8", "status": {"state": "failed", "error": "boom"}, "turn_count": 3});
        let snapshot = json!({"principal": "scan:1", "resource_owner": "s1",
            "persistence_error": {"code": "disk"}, "agents": [record]});
        let expected = json!({"principal": "scan:1", "resource_owner": "s1", "persistence_error": {"code": "disk"},
            "agents": [{"agent_id": "agent-8", "agent_path": null,
                "status": {"state": "failed", "output": null, "error": "boom"}, "details": record}]});
        let (reply, children) = call(
            &mut shim,
            "list",
            json!({}),
            Answer::Result(snapshot.clone()),
        );
        only_child(lang, &children, "agent/list");
        assert_eq!(parsed(lang, &reply), expected, "{lang}");

        let (reply, children) = call(
            &mut shim,
            "wait",
            json!({"timeout_ms": 20000}),
            Answer::Result(json!({"timed_out": true, "snapshot": snapshot})),
        );
        assert_eq!(
            only_child(lang, &children, "agent/wait")["timeout_ms"],
            20000
        );
        assert_eq!(
            parsed(lang, &reply),
            json!({"timed_out": true, "snapshot": expected}),
            "{lang}"
        );
        // No timeout: none is sent (the host's default).
        let (_, children) = call(
            &mut shim,
            "wait",
            json!({}),
            Answer::Result(
                json!({"timed_out": false, "snapshot": {"principal": "p", "resource_owner": "s", "agents": []}}),
            ),
        );
        assert!(
            only_child(lang, &children, "agent/wait")
                .get("timeout_ms")
                .is_none(),
            "{lang}"
        );

        let (reply, children) = call(
            &mut shim,
            "interrupt",
            json!({"target": "agent-7"}),
            Answer::Result(json!({"agent_id": "agent-7", "agent_path": "/root/audit",
                "previous_status": {"state": "running"}, "interrupt_requested": true})),
        );
        only_child(lang, &children, "agent/interrupt");
        assert_eq!(
            parsed(lang, &reply),
            json!({"agent_id": "agent-7", "agent_path": "/root/audit",
                "previous_status": {"state": "running"}, "interrupt_requested": true}),
            "{lang}"
        );

        let models = json!({"models": [{"model": "m", "provider": "p", "display_name": null,
            "reasoning": ["low", "high"], "context_window": 200000, "max_output_tokens": 64000}], "truncated": true});
        let (reply, children) = call(
            &mut shim,
            "models",
            json!({"query": "m", "limit": 5}),
            Answer::Result(models.clone()),
        );
        let params = only_child(lang, &children, "agent/models");
        assert_eq!(
            (params["query"].clone(), params["limit"].clone()),
            (json!("m"), json!(5)),
            "{lang}"
        );
        assert_eq!(parsed(lang, &reply), models, "{lang}");

        for (state, active) in [
            ("pending", true),
            ("running", true),
            ("completed", false),
            ("shiny_new", false),
        ] {
            let reply = shim.tool("active", json!({"state": state}));
            assert_eq!(
                parsed(lang, &reply),
                json!({"active": active}),
                "{lang}: {state}"
            );
        }

        // The host's refusal reaches the guest with its code.
        let (reply, _) = call(
            &mut shim,
            "send",
            json!({"target": "agent-9", "message": "x"}),
            Answer::Error(-32002, "unknown agent"),
        );
        assert_eq!(
            expect_error(&reply).code,
            -32002,
            "{lang}: {}",
            reply.frame.raw
        );
        shim.shutdown();
    }
}

#[test]
fn secrets_policy_and_questions() {
    for lang in LANGUAGES {
        let (mut shim, _dir) = start(lang);
        let (reply, children) = call(
            &mut shim,
            "secret",
            json!({"name": "tracker.api_key"}),
            Answer::Result(json!({"value": "s3cret-value"})),
        );
        assert_eq!(
            only_child(lang, &children, "secret/get")["name"],
            "tracker.api_key"
        );
        assert_eq!(parsed(lang, &reply), json!({"bytes": 12}), "{lang}");
        assert!(
            !reply.frame.raw.contains("s3cret"),
            "{lang}: the value stays in the guest"
        );
        let (reply, children) = call(
            &mut shim,
            "secret",
            json!({"name": "other.key"}),
            Answer::Ignore,
        );
        assert!(
            children.is_empty(),
            "{lang}: an undeclared name is refused locally"
        );
        expect_error(&reply);
        let (reply, _) = call(
            &mut shim,
            "secret",
            json!({"name": "tracker.api_key"}),
            Answer::Error(-32004, "secret is unavailable"),
        );
        assert_eq!(expect_error(&reply).code, -32004, "{lang}");

        let intent = json!({"kind": "external_side_effect", "operation": "issues.create",
            "target": {"label": "Open issue"}, "data_classes": "user_text,repo", "destructive": true});
        let token = "a".repeat(64);
        let answer = json!({"decision": "ask", "approval_token": token});
        let (reply, children) = call(&mut shim, "policy", intent.clone(), Answer::Result(answer));
        let sent = &only_child(lang, &children, "policy/evaluate")["intent"];
        assert_eq!(sent["kind"], "external_side_effect", "{lang}");
        assert_eq!(sent["operation"], "issues.create");
        assert_eq!(sent["target"], json!({"label": "Open issue"}));
        assert_eq!(sent["data_classes"], json!(["user_text", "repo"]));
        assert_eq!(
            sent["adapter_hints"],
            json!({"destructive": true}),
            "{lang}: {sent}"
        );
        assert_eq!(
            parsed(lang, &reply),
            json!({"decision": "ask", "approval_token": token}),
            "{lang}"
        );
        let mut redeem = intent.clone();
        redeem["token"] = json!(token);
        let (reply, children) = call(
            &mut shim,
            "policy",
            redeem,
            Answer::Result(json!({"decision": "allow"})),
        );
        assert_eq!(
            only_child(lang, &children, "policy/evaluate")["approval_token"],
            token,
            "{lang}"
        );
        assert_eq!(
            parsed(lang, &reply),
            json!({"decision": "allow", "approval_token": null}),
            "{lang}"
        );

        let id = shim.send_tool(
            "ask",
            json!({"prompt": "Delete 3 files?", "detail": "in /tmp",
            "input_prompt": "Name?", "secret": true}),
        );
        let (reply, children) = serve(&mut shim, id, |frame| match frame.method() {
            Some("confirmation/request") => Answer::Result(json!({"confirmed": true})),
            Some("input/request") => Answer::Result(json!({"value": "Ada"})),
            other => panic!("unexpected {other:?}"),
        });
        assert_eq!(children.len(), 2, "{lang}");
        let confirm = children[0].params();
        assert_eq!(
            (
                confirm["prompt"].clone(),
                confirm["detail"].clone(),
                confirm["destructive"].clone(),
                confirm["default"].clone()
            ),
            (
                json!("Delete 3 files?"),
                json!("in /tmp"),
                json!(true),
                json!(true)
            ),
            "{lang}"
        );
        assert_eq!(
            (
                children[1].params()["prompt"].clone(),
                children[1].params()["secret"].clone()
            ),
            (json!("Name?"), json!(true)),
            "{lang}"
        );
        assert_eq!(
            parsed(lang, &reply),
            json!({"confirmed": true, "input": "Ada"}),
            "{lang}"
        );
        shim.shutdown();
    }
}

#[test]
fn progress_notifications_contributions_and_logs() {
    for lang in LANGUAGES {
        let (mut shim, _dir) = start(lang);
        let reply = shim.tool("report", json!({}));
        assert_eq!(tool_text(&reply), "reported", "{lang}: {}", reply.frame.raw);
        let id = reply.frame.response_id().unwrap();
        let frames: Vec<(Option<&str>, &Value)> = reply
            .before
            .iter()
            .map(|frame| (frame.method(), frame.params()))
            .collect();
        let progress: Vec<&Value> = frames
            .iter()
            .filter(|(method, _)| *method == Some("$/progress"))
            .map(|(_, params)| {
                assert_eq!(params["request_id"], id, "{lang}");
                &params["event"]
            })
            .collect();
        assert_eq!(
            progress,
            [
                &json!({"type": "status", "message": "indexing"}),
                &json!({"type": "status", "message": "indexing", "current": 3, "total": 10, "unit": "files"}),
                &json!({"type": "output", "stream": "stderr", "encoding": "utf8", "data": "é\n"}),
                &json!({"type": "decoration", "label": "Building", "detail": "step 1"}),
            ],
            "{lang}"
        );
        let find = |method: &str| {
            frames
                .iter()
                .find(|(m, _)| *m == Some(method))
                .map(|(_, params)| (*params).clone())
                .unwrap_or_else(|| panic!("{lang}: no {method} in {:?}", reply.before))
        };
        assert_eq!(
            find("notification"),
            json!({"level": "warning", "title": "Disk", "message": "almost full"}),
            "{lang}"
        );
        let context = find("context/contribution");
        assert_eq!(
            (
                context["label"].clone(),
                context["content"].clone(),
                context["placement"].clone()
            ),
            (json!("branch"), json!("main"), json!("system_prefix")),
            "{lang}: {context}"
        );
        let status = find("status/contribution");
        assert_eq!(status["surface"], "status", "{lang}: {status}");
        assert_eq!(status["text"], "indexed");
        assert_eq!(status["priority"], 3);
        wait_for_stderr(&shim, lang, r#""message":"reported""#);
        wait_for_stderr(&shim, lang, r#""n":2"#);
        shim.shutdown();
    }
}

#[test]
fn catalog_presentation_and_cancellation() {
    for lang in LANGUAGES {
        let (mut shim, _dir) = start(lang);
        // The host keeps every tool but the two removed (unsorted, as a
        // host may answer).
        let kept: Vec<&str> = TOOLS
            .iter()
            .rev()
            .copied()
            .filter(|name| !["report", "ask"].contains(name))
            .collect();
        let (reply, children) = call(
            &mut shim,
            "catalog",
            json!({"names": "report,ask"}),
            Answer::Result(json!({"revision": 1, "tools": kept})),
        );
        assert_eq!(
            only_child(lang, &children, "tools/unregister")["names"],
            json!(["report", "ask"])
        );
        let mut sorted = kept.clone();
        sorted.sort_unstable();
        let mut answer = parsed(lang, &reply);
        // The committed catalog's names, in whatever order the shim keeps.
        answer["current"]["tools"]
            .as_array_mut()
            .unwrap()
            .sort_by_key(|name| name.as_str().unwrap_or_default().to_owned());
        assert_eq!(
            answer,
            json!({"unregistered": {"revision": 1, "tools": sorted},
                "current": {"revision": 1, "tools": sorted}}),
            "{lang}"
        );
        // A removed tool is no longer served.
        let reply = shim.tool("report", json!({}));
        assert_eq!(expect_error(&reply).code, -32601, "{lang}");

        let reply = shim.tool("present_for", json!({"revision": 4}));
        assert_eq!(
            tool_text(&reply),
            "presented",
            "{lang}: {}",
            reply.frame.raw
        );
        let update = reply
            .before
            .iter()
            .find(|f| f.method() == Some("presentation/update"))
            .unwrap_or_else(|| panic!("{lang}: no snapshot"));
        let params = update.params();
        assert_eq!(params["snapshot"], json!({"revision": 4}), "{lang}");
        assert!(
            params.get("parent_request_id").is_none(),
            "{lang}: the owner, not the request: {params}"
        );
        assert_eq!(
            params["resource_owner"]["session_id"], "session-1",
            "{lang}: {params}"
        );

        // Cancelled once the guest is waiting (a cancellation that wins the
        // race is answered without calling the guest at all).
        let id = shim.send_tool("wait_for_cancel", json!({}));
        wait_for_stderr(&shim, lang, "waiting for the cancellation");
        shim.cancel(id, "user").unwrap();
        let reply = shim.reply(id);
        assert_eq!(
            expect_error(&reply).code,
            -32800,
            "{lang}: {}",
            reply.frame.raw
        );
        wait_for_stderr(&shim, lang, "cancelled: user");
        shim.shutdown();
    }
}
