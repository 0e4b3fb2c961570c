//! Four apps written for octet's Python SDK, each an unchanged
//! `extension.py` (`tests/guests/python-seed-*`, built by
//! `scripts/build-guests-python`), answering as the SDK's documented
//! behaviour says, frame by frame: an API 0.1 app with every contribution
//! point, an API 0.2 app with lifecycle handlers and a shutdown handler
//! taking params, one reporting progress from four concurrent calls, and one
//! publishing artifacts and changing its tool catalog at run time.
//!
//! Where the shim's bytes cannot follow the SDK's (a status item's member
//! order, a context item's default placement), the frame is compared as JSON
//! and the guest SDK's README lists the difference.

use crate::python_compat::python_shim;
use crate::support::*;
use crate::support::{ChildAnswer as Answer, serve_children as serve};
use base64::Engine as _;
use octet_hostsim::{ApiVersion, ManifestSpec};
use serde_json::{Value, json};

fn line(id: u64, member: &str, value: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"{member}":{value}}}"#)
}

fn request(shim: &mut Shim, method: &str, mut params: Value) -> octet_hostsim::Reply {
    params["context"] = shim.context();
    shim.call(method, params)
}

fn raw_result(reply: &octet_hostsim::Reply) -> String {
    let id = reply.frame.response_id().unwrap_or_default();
    reply
        .frame
        .raw
        .strip_prefix(&format!(r#"{{"jsonrpc":"2.0","id":{id},"result":"#))
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or_else(|| panic!("not a result: {}", reply.frame.raw))
        .to_owned()
}

// ----- seed-hello: API 0.1, every contribution point -------------------

fn hello() -> (Shim, tempfile::TempDir) {
    let spec = ManifestSpec::new("seed-hello", ApiVersion::V0_1)
        .description(
            "An API 0.1 extension in the Python SDK's idiom, using every contribution point",
        )
        .tools(&["hello_world", "whoami", "explode"])
        .commands(&["hello", "checkpoint"])
        .hooks(&[
            "before_prompt",
            "after_response",
            "before_tool_call",
            "after_tool_call",
        ])
        .ui(&["status", "footer"])
        .context(true)
        .tool_renderers(&["hello_world"])
        .notifications(true)
        .confirmations(true);
    python_shim("seed-hello", spec)
}

#[test]
fn seed_hello_answers_every_request_type_like_the_sdk() {
    let (mut shim, _dir) = hello();
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    assert_eq!(
        raw_result(&reply),
        concat!(
            r#"{"api_version":"0.1","tools":[{"name":"hello_world","description":"Greet someone from an executable extension","#,
            r#""parameters":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}},"#,
            r#"{"name":"whoami","description":"Report the request and its context","parameters":{"type":"object"}},"#,
            r#"{"name":"explode","description":"Fail, to show what the model reads","parameters":{"type":"object"}}],"#,
            r#""commands":[{"name":"hello","description":"Show a greeting notification","usage":"/hello [name]"},"#,
            r#"{"name":"checkpoint","description":"Confirm, then report what was greeted"}]}"#
        )
    );

    // tool/call: the notification, then the result; the log record.
    let reply = shim.tool("hello_world", json!({"name": "Ada"}));
    assert_eq!(
        raws(&reply.before),
        [
            r#"{"jsonrpc":"2.0","method":"notification","params":{"level":"success","message":"hello_world greeted Ada"}}"#
        ]
    );
    assert_eq!(
        raw_result(&reply),
        r#"{"content":"Hello, Ada!","is_error":false,"metadata":{}}"#
    );
    let greeted = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "greeted")
        .expect("ext.log.info record");
    assert_eq!(greeted.field("name"), Some(&json!("Ada")));
    assert_eq!(
        greeted.field("request_id"),
        Some(&json!(reply.frame.response_id()))
    );
    let id = shim.send_tool("whoami", json!({}));
    assert_eq!(
        tool_text(&shim.reply(id)),
        format!(
            "request {id} in {} for m-large; context keys ['execution_scope', 'host', 'workspace']",
            shim.workspace.display()
        )
    );
    let reply = shim.tool("explode", json!({"what": "x"}));
    assert_eq!(
        raw_result(&reply),
        r#"{"content":"exploded on x","is_error":true,"metadata":{}}"#
    );

    // command/execute, with a command notification's "title": null kept.
    let reply = request(
        &mut shim,
        "command/execute",
        json!({"name": "hello", "arguments": []}),
    );
    assert_eq!(
        raw_result(&reply),
        r#"{"text":"Hello, tinkerer!","notifications":[{"level":"info","title":null,"message":"greeted tinkerer"}],"context":[]}"#
    );
    // A confirmation from a command (API 0.1: numeric id, no parent).
    for (confirmed, expected) in [
        (
            true,
            r#"{"text":"Checkpoint of 1 greetings.","notifications":[],"context":[{"label":"checkpoint","content":"Ada","placement":"prompt_prefix"}]}"#,
        ),
        (
            false,
            r#"{"text":"Checkpoint skipped.","notifications":[],"context":[]}"#,
        ),
    ] {
        let mut params = json!({"name": "checkpoint", "arguments": []});
        params["context"] = shim.context();
        let id = shim.send_request("command/execute", params);
        let (reply, children) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"confirmed": confirmed}))
        });
        assert_eq!(children.len(), 1);
        assert!(children[0].value["id"].is_u64(), "{}", children[0].raw);
        assert_eq!(children[0].method(), Some("confirmation/request"));
        assert_eq!(
            *children[0].params(),
            json!({"prompt": "Write a checkpoint?", "detail": "1 greetings",
                   "destructive": false, "default": false})
        );
        assert_eq!(raw_result(&reply), expected);
    }

    // hook/run: deny, defaults, context, and a failing hook.
    let hook = |shim: &mut Shim, hook: &str, payload: Value| {
        request(shim, "hook/run", json!({"hook": hook, "payload": payload}))
    };
    let continued = r#"{"disposition":{"action":"continue"},"context":[],"notifications":[]}"#;
    let reply = hook(
        &mut shim,
        "before_prompt",
        json!({"prompt": "a forbidden word"}),
    );
    assert_eq!(
        raw_result(&reply),
        r#"{"disposition":{"action":"deny","reason":"that word is forbidden"},"context":[],"notifications":[]}"#
    );
    let reply = hook(&mut shim, "before_prompt", json!({"prompt": "hi"}));
    assert_eq!(raw_result(&reply), continued);
    let reply = hook(&mut shim, "after_response", json!({"response": "r"}));
    assert_eq!(raw_result(&reply), continued);
    let reply = hook(
        &mut shim,
        "before_tool_call",
        json!({"name": "hello_world", "arguments": {}}),
    );
    // The SDK passes the handler's item (no placement) through; the WIT's
    // context item names the host's default placement.
    assert_eq!(
        *expect_result(&reply),
        json!({"disposition": {"action": "continue"},
               "context": [{"label": "tool", "content": "calling hello_world", "placement": "prompt_suffix"}],
               "notifications": []})
    );
    let reply = hook(
        &mut shim,
        "after_tool_call",
        json!({"name": "x", "arguments": {}, "output": "o", "is_error": false}),
    );
    let id = reply.frame.response_id().unwrap();
    assert_eq!(
        reply.frame.raw,
        line(id, "error", r#"{"code":-32603,"message":"internal error"}"#)
    );
    let failed = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "hook handler failed")
        .expect("the hook's failure is logged");
    assert_eq!(
        failed.field("error"),
        Some(&json!("after_tool_call is broken"))
    );

    // context/collect, status/collect (two surfaces), tool/render.
    let reply = request(&mut shim, "context/collect", json!({"prompt": "hi"}));
    assert_eq!(
        raw_result(&reply),
        r#"[{"label":"hello-world","content":"The prompt was 'hi'.","placement":"system_suffix"}]"#
    );
    let reply = request(&mut shim, "status/collect", json!({"surface": "status"}));
    assert_eq!(
        *expect_result(&reply),
        json!({"surface": "status", "text": "1 greeted", "priority": 0,
               "style_role": "extension.hello_world.status"})
    );
    let reply = request(&mut shim, "status/collect", json!({"surface": "footer"}));
    assert_eq!(raw_result(&reply), "null");
    let render = |shim: &mut Shim, output: &str| {
        request(
            shim,
            "tool/render",
            json!({"name": "hello_world", "arguments": {"name": "Ada"}, "output": output, "is_error": false}),
        )
    };
    assert_eq!(
        raw_result(&render(&mut shim, "Hello, Ada!")),
        r#"{"segments":[{"text":"hello_world · Hello, Ada!","style_role":"extension.hello_world.tool"}]}"#
    );
    assert_eq!(
        raw_result(&render(&mut shim, "")),
        r#"{"segments":[{"text":"hello_world · waiting","style_role":"extension.hello_world.tool"}]}"#
    );

    // shutdown: {}, and the handler got the params and their context.
    shim.shutdown();
    let record = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "shutting down")
        .expect("the shutdown handler's record");
    assert_eq!(record.field("params"), Some(&json!({})));
    assert_eq!(record.field("context"), Some(&json!({})));
    assert_eq!(record.field("greeted"), Some(&json!(1)));
}

// ----- seed-lifecycle: API 0.2 lifecycle and shutdown ------------------

#[test]
fn seed_lifecycle_negotiates_its_features_and_tracks_turns() {
    let spec = ManifestSpec::new("seed-lifecycle", ApiVersion::V0_2)
        .version("0.2.0")
        .description("Tracks active turns from lifecycle events (the SDK's caffeinate idiom)")
        .commands(&["turns"])
        .ui(&["status"])
        .notifications(true);
    let (mut shim, _dir) = python_shim("seed-lifecycle", spec);
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    assert_eq!(
        raw_result(&reply),
        concat!(
            r#"{"api_version":"0.2","tools":[],"commands":[{"name":"turns","description":"Show the active turns","usage":"/turns"}],"#,
            r#""protocol":{"version":"0.2","features":["request_cancellation","content_parts","lifecycle_events"],"#,
            r#""limits":{"max_concurrent_requests":8},"#,
            r#""lifecycle_events":["session/settled","tool/started","turn/settled","turn/started"]}}"#
        )
    );
    let turns = |shim: &mut Shim, arguments: Value| {
        let reply = request(
            shim,
            "command/execute",
            json!({"name": "turns", "arguments": arguments}),
        );
        expect_result(&reply)["text"].as_str().unwrap().to_owned()
    };
    let status = |shim: &mut Shim| {
        let reply = request(shim, "status/collect", json!({"surface": "status"}));
        expect_result(&reply).clone()
    };
    let event = |shim: &mut Shim, method: &str, params: Value| {
        shim.notify(method, params).expect("notify");
    };
    assert_eq!(
        turns(&mut shim, json!([])),
        "No turn is active; settled: none."
    );
    assert_eq!(status(&mut shim), Value::Null);
    event(
        &mut shim,
        "turn/started",
        json!({"session_id": "s1", "run_id": "r1", "turn_id": "t1"}),
    );
    event(
        &mut shim,
        "turn/started",
        json!({"session_id": "s1", "run_id": "r1", "turn_id": "t2"}),
    );
    // A failing lifecycle handler is logged; nothing reaches the host.
    event(
        &mut shim,
        "tool/started",
        json!({"session_id": "s1", "turn_id": "t1", "tool_call_id": "c1", "tool_name": "grep"}),
    );
    assert_eq!(turns(&mut shim, json!([])), "2 active; settled: none.");
    assert_eq!(
        status(&mut shim),
        json!({"surface": "status", "text": "awake", "priority": 10,
               "style_role": "extension.seed_lifecycle.active"})
    );
    let failed = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "lifecycle handler failed")
        .expect("the failure is logged");
    assert_eq!(failed.field("event"), Some(&json!("tool/started")));
    assert_eq!(failed.field("error"), Some(&json!("cannot observe grep")));
    event(
        &mut shim,
        "turn/settled",
        json!({"session_id": "s1", "run_id": "r1", "turn_id": "t1", "outcome": "completed", "duration_ms": 5}),
    );
    assert_eq!(turns(&mut shim, json!([])), "1 active; settled: completed.");
    event(
        &mut shim,
        "session/settled",
        json!({"session_id": "s1", "reason": "closed"}),
    );
    assert_eq!(
        turns(&mut shim, json!([])),
        "No turn is active; settled: completed."
    );
    assert_eq!(status(&mut shim), Value::Null);
    assert_eq!(turns(&mut shim, json!(["extra"])), "Usage: /turns");
    shim.shutdown();
    let record = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "shutdown")
        .expect("the shutdown handler's record");
    assert_eq!(record.level(), Some("warning"));
    assert_eq!(record.field("params"), Some(&json!({})));
    assert_eq!(record.field("active"), Some(&json!(0)));
}

// ----- seed-progress: progress from four concurrent calls --------------

#[test]
fn seed_progress_reports_from_four_concurrent_calls() {
    let spec = ManifestSpec::new("seed-progress", ApiVersion::V0_2)
        .version("0.2.0")
        .description("Reports progress from up to four concurrent, cancellable tool calls")
        .tools(&["index", "countdown"])
        .confirmations(true);
    let (mut shim, _dir) = python_shim("seed-progress", spec);
    let result = shim.initialize();
    let protocol = protocol(&result);
    assert_eq!(
        protocol["features"],
        json!([
            "request_cancellation",
            "content_parts",
            "request_progress",
            "progress_decoration",
            "artifacts",
            "policy_intents",
            "dynamic_tools"
        ])
    );
    assert_eq!(protocol["limits"], json!({"max_concurrent_requests": 4}));
    assert!(protocol.get("lifecycle_events").is_none(), "{result}");

    // Four calls are in their handlers at once: each asks the user.
    let items = [
        vec!["a"],
        vec!["a", "b"],
        vec!["a", "b", "c"],
        vec!["x", "y"],
    ];
    let ids: Vec<u64> = items
        .iter()
        .map(|items| shim.send_tool("index", json!({"items": items, "ask": true})))
        .collect();
    let mut progress: std::collections::HashMap<u64, Vec<Value>> = Default::default();
    let mut children = Vec::new();
    while children.len() < ids.len() {
        let frame = shim.recv(REQUEST_TIMEOUT).expect("a frame");
        match frame.method() {
            Some("$/progress") => {
                let params = frame.params().clone();
                progress
                    .entry(params["request_id"].as_u64().unwrap())
                    .or_default()
                    .push(params);
            }
            Some("confirmation/request") => children.push(frame),
            _ => panic!("unexpected {}", frame.raw),
        }
    }
    for (n, child) in children.iter().enumerate() {
        let parent = child.params()["parent_request_id"].as_u64().unwrap();
        let keep = n != 0;
        let id = octet_hostsim::ChildId::from_json(&child.value["id"]).unwrap();
        shim.respond(&id, json!({"confirmed": keep}))
            .expect("respond");
        let reply = shim.reply(parent);
        let position = ids.iter().position(|id| *id == parent).unwrap();
        let count = items[position].len();
        let expected = if keep {
            json!({"content": [{"type": "text", "text": format!("Indexed {count} items in {} reports.", count + 2)}],
                   "is_error": false, "metadata": {"request": parent}})
        } else {
            json!({"content": [{"type": "text", "text": "Index discarded."}], "is_error": true, "metadata": {}})
        };
        assert_eq!(*expect_result(&reply), expected, "{}", reply.frame.raw);
        // Every report came before the confirmation, numbered from 1.
        let mut expected = vec![json!({"request_id": parent, "sequence": 1, "event": {
            "type": "decoration", "label": "Indexing", "detail": format!("{count} items")}})];
        for k in 1..=count {
            expected.push(json!({"request_id": parent, "sequence": k + 1, "event": {
                "type": "status", "message": format!("Indexed {k} of {count}"),
                "current": k, "total": count, "unit": "items"}}));
        }
        expected.push(
            json!({"request_id": parent, "sequence": count + 2, "event": {
            "type": "output", "stream": "stdout", "encoding": "utf8", "data": "done\n"}}),
        );
        assert_eq!(progress[&parent], expected);
    }

    // Cancellation: -32800 with the host's reason; the next call succeeds.
    let id = shim.send_tool("countdown", json!({"seconds": 30}));
    shim.cancel(id, "user").expect("cancel");
    assert_eq!(
        shim.reply(id).frame.raw,
        line(
            id,
            "error",
            r#"{"code":-32800,"message":"request cancelled","data":{"reason":"user"}}"#
        )
    );
    assert_eq!(
        tool_text(&shim.tool("countdown", json!({"seconds": 0}))),
        "waited 0s"
    );
    shim.shutdown();
}

// ----- seed-media: artifacts and a catalog changed at run time ---------

#[test]
fn seed_media_publishes_artifacts_and_unlocks_a_tool() {
    let spec = ManifestSpec::new("seed-media", ApiVersion::V0_2)
        .version("0.2.0")
        .description("Publishes chart images as artifacts and unlocks tools at run time")
        .tools(&["chart", "unlock", "lock"]);
    let (mut shim, _dir) = python_shim("seed-media", spec);
    let result = shim.initialize();
    assert_eq!(
        protocol(&result)["limits"],
        json!({"max_concurrent_requests": 1})
    );
    assert_eq!(
        result["tools"][0]["output_schema"],
        json!({"type": "object", "properties": {"bars": {"type": "integer"}, "peak": {"type": "integer"}},
               "required": ["bars", "peak"]})
    );

    let id = shim.send_tool("chart", json!({"values": [1, 2, 3]}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"artifact_id": "artifact_1"}))
    });
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
    let png = base64::engine::general_purpose::STANDARD
        .decode(params["data"]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(params["size"], png.len());
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert_eq!(
        &png[16..24],
        &[0, 0, 0, 3, 0, 0, 0, 3],
        "3 bars wide, 3 high"
    );
    assert_eq!(
        *expect_result(&reply),
        json!({"content": [{"type": "text", "text": "Drew 3 bars."},
                           {"type": "image", "artifact_id": "artifact_1", "mime_type": "image/png", "alt": "bar chart"}],
               "is_error": false, "metadata": {"artifact": "artifact_1"},
               "structured_content": {"bars": 3, "peak": 3}})
    );
    let reply = shim.tool("chart", json!({"values": []}));
    assert_eq!(
        raw_result(&reply),
        r#"{"content":[{"type":"text","text":"Nothing to draw."}],"is_error":true,"metadata":{}}"#
    );

    let call = |shim: &mut Shim, revision: u64| {
        let mut params = shim.tool_params("chart_stats", json!({}));
        params["catalog_revision"] = json!(revision);
        let id = shim.send_request("tool/call", params);
        shim.reply(id)
    };
    let id = shim.send_tool("unlock", json!({}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"revision": 1, "tools": ["chart", "unlock", "lock", "chart_stats"]}))
    });
    assert_eq!(
        children[0].raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/register","params":{{"tools":[{{"name":"chart_stats","description":"Statistics of the last chart","parameters":{{"type":"object"}}}}]}}}}"#,
            children[0].value["id"]
        )
    );
    // The shim hands the accepted names over sorted.
    assert_eq!(
        tool_text(&reply),
        "revision 1: chart, chart_stats, lock, unlock"
    );
    assert_eq!(
        tool_text(&call(&mut shim, 1)),
        "1 charts; the last has 3 bars, sum 6"
    );
    let id = shim.send_tool("lock", json!({}));
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"revision": 2, "tools": ["chart", "unlock", "lock"]}))
    });
    assert_eq!(*children[0].params(), json!({"names": ["chart_stats"]}));
    assert_eq!(tool_text(&reply), "revision 2: chart, lock, unlock");
    let reply = call(&mut shim, 2);
    assert_eq!(
        (
            expect_error(&reply).code,
            expect_error(&reply).message.as_str()
        ),
        (-32601, "unknown tool: chart_stats")
    );
    // A call pinned to the revision the model saw keeps that handler.
    assert_eq!(
        tool_text(&call(&mut shim, 1)),
        "1 charts; the last has 3 bars, sum 6"
    );
    shim.shutdown();

    // Without `artifacts` the SDK refuses to publish (nothing is written).
    let spec =
        ManifestSpec::new("seed-media", ApiVersion::V0_2).tools(&["chart", "unlock", "lock"]);
    let (mut shim, _dir) = python_shim("seed-media", spec);
    let params = shim.offer().optional_features(&["dynamic_tools"]).to_json();
    expect_result(&shim.initialize_with(params));
    let reply = shim.tool("chart", json!({"values": [1]}));
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    assert_eq!(
        reply.frame.raw,
        line(
            reply.frame.response_id().unwrap(),
            "error",
            r#"{"code":-32601,"message":"API 0.2 feature is not negotiated: artifacts"}"#
        )
    );
    shim.shutdown();
}
