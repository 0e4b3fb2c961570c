//! Guest JSON octet could not read never reaches the wire (issue 17, hole
//! 3). octet parses every stdout line with serde_json, which refuses the
//! 128th level of nesting, and kills the extension over any line it cannot
//! parse. So in every place a guest hands the shim JSON, the probe's
//! `hostile_json` tools nest it just under, at and over the shim's bound
//! (64 levels, or the protocol's own where it is tighter) and at 127, 128
//! and 200; each time the answer is the place's clear error naming the
//! bound (or, within it, the value goes out), the hostsim checker (run on
//! every line, with serde_json's own limit) sees no fatal frame, and the
//! next call is served by the same process.

use crate::support::{
    ChildAnswer, PROBE_TOOLS, REQUEST_TIMEOUT, Shim, expect_error, expect_result, probe_manifest,
    raws, serve_children, stderr_text, tool_text,
};
use octet_hostsim::{ApiVersion, Context, Frame, FrameKind, InitializeParams, Reply};
use octet_wasm::protocol::guest_json::MAX_GUEST_JSON_DEPTH;
use serde_json::{Value, json};

/// The bound the shim puts on guest JSON.
const BOUND: usize = MAX_GUEST_JSON_DEPTH;
/// Depths tried against the shim's bound: just under, at, just over, and
/// around serde_json's recursion limit of 128.
const DEPTHS: [usize; 6] = [BOUND - 1, BOUND, BOUND + 1, 127, 128, 200];
/// The phrase every refusal at the shim's bound contains.
const PAST_BOUND: &str =
    "nested deeper than 64 levels, the most octet-wasm accepts in JSON from an extension";

/// The tools the probe adds when the switch file is present.
const HOSTILE_TOOLS: &[&str] = &["hostile_json", "hostile_structured"];

/// The probe's catalog with the hostile tools and `extra`.
fn tools(extra: &[&'static str]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = PROBE_TOOLS.to_vec();
    names.extend_from_slice(HOSTILE_TOOLS);
    names.extend_from_slice(extra);
    names
}

/// The probe with its hostile JSON tools, before `initialize`;
/// `schema_depth` adds `deep_schema` with parameters nested that deep.
fn spawned(schema_depth: Option<usize>) -> Shim {
    let extra: &[&'static str] = if schema_depth.is_some() {
        &["deep_schema"]
    } else {
        &[]
    };
    let mut hooks = vec![
        "before_prompt",
        "after_response",
        "before_tool_call",
        "after_tool_call",
    ];
    hooks.push("before_persistence");
    let manifest = probe_manifest(ApiVersion::V0_2)
        .tools(&tools(extra))
        .hooks(&hooks);
    let shim = Shim::probe_with(manifest);
    let switch = schema_depth.map_or_else(|| "on".to_owned(), |depth| depth.to_string());
    std::fs::write(shim.workspace.join(".probe-hostile-json"), switch)
        .expect("write the probe's switch file");
    shim
}

/// `initialize` params declaring the menu and presentation too.
fn init_params(shim: &Shim) -> Value {
    let mut params =
        InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace).to_json();
    params["contributes"]["menu"] = json!(true);
    params["contributes"]["presentation"] = json!(true);
    params
}

fn started() -> Shim {
    let mut shim = spawned(None);
    let params = init_params(&shim);
    expect_result(&shim.initialize_with(params));
    for feature in ["policy_intents", "dynamic_tools"] {
        assert!(
            shim.features().contains(feature),
            "{feature} not negotiated"
        );
    }
    shim
}

/// `depth` objects `{"n": ...}` around a 0, as the probe builds them.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(0), |inner, _| json!({ "n": inner }))
}

/// Calls `hostile_json` at `place`, answering child requests with `answer`.
fn hostile(
    shim: &mut Shim,
    arguments: Value,
    answer: impl FnMut(&Frame) -> ChildAnswer,
) -> (Reply, Vec<Frame>) {
    let id = shim.send_tool("hostile_json", arguments);
    serve_children(shim, id, answer)
}

/// A JSON-RPC error reply: its code and message.
fn error_of(reply: &Reply) -> (i64, String) {
    let error = expect_error(reply);
    (error.code, error.message.clone())
}

/// The refusal of a value nested past `bound` at `what`, answered as
/// `code`; nothing but the reply was written.
fn assert_refused(reply: &Reply, code: i64, needle: &str, what: &str) {
    let (got, message) = error_of(reply);
    assert_eq!(got, code, "{what}: {}", reply.frame.raw);
    assert!(
        message.contains(needle),
        "{what}: {needle:?} not in {message}"
    );
    assert!(reply.before.is_empty(), "{what}: {:?}", raws(&reply.before));
}

/// The next call works in the same process, with nothing in between.
fn assert_served_after(shim: &mut Shim, what: &str) {
    let pid = shim.pid();
    shim.assert_alive_and_silent(what);
    assert_eq!(shim.pid(), pid);
    assert!(shim.try_exit_status().unwrap().is_none(), "{what}: exited");
}

// ----- tool results ----------------------------------------------------------

/// `metadata` and `structured_content` have the protocol's own bound (32,
/// docs/protocol.md#result-bounds); past it, however deep, the answer is
/// -32603 naming that bound.
#[test]
fn tool_result_json_is_bounded_at_the_protocols_32_levels() {
    let mut shim = started();
    for depth in [31, 32, 33, BOUND, BOUND + 1, 127, 128, 200] {
        for (tool, name, arguments) in [
            (
                "hostile_json",
                "metadata",
                json!({"place": "metadata", "depth": depth}),
            ),
            (
                "hostile_structured",
                "structured_content",
                json!({"depth": depth}),
            ),
        ] {
            let what = format!("{name} at {depth}");
            let reply = shim.tool(tool, arguments);
            if depth <= 32 {
                let result = expect_result(&reply);
                assert_eq!(result["is_error"], false, "{what}: {}", reply.frame.raw);
                assert_eq!(result[name], nested(depth), "{what}");
            } else {
                assert_refused(
                    &reply,
                    -32603,
                    &format!("invalid handler result: {name} is nested deeper than 32 levels"),
                    &what,
                );
            }
            assert_served_after(&mut shim, &what);
        }
    }
    shim.shutdown();
}

/// A guest's own JSON-RPC error carries its `data` up to the bound; past
/// it the whole answer is an invalid handler result naming the bound.
#[test]
fn error_data_is_bounded() {
    let mut shim = started();
    for depth in DEPTHS {
        let what = format!("error data at {depth}");
        let (reply, _) = hostile(
            &mut shim,
            json!({"place": "error_data", "depth": depth}),
            |_| ChildAnswer::Ignore,
        );
        if depth <= BOUND {
            let error = expect_error(&reply);
            assert_eq!((error.code, error.message.as_str()), (-32000, "deep data"));
            assert_eq!(error.data, Some(nested(depth)), "{what}");
        } else {
            assert_refused(&reply, -32603, PAST_BOUND, &what);
            assert!(
                error_of(&reply)
                    .1
                    .starts_with("invalid handler result: the error data is"),
                "{what}: {}",
                reply.frame.raw
            );
        }
        assert_served_after(&mut shim, &what);
    }
    shim.shutdown();
}

// ----- host services ---------------------------------------------------------

/// A policy intent's target goes out up to the bound; past it the import
/// fails (-32602 for the tool) and no `policy/evaluate` is written.
#[test]
fn policy_targets_are_bounded() {
    let mut shim = started();
    for depth in DEPTHS {
        let what = format!("policy target at {depth}");
        let (reply, children) = hostile(
            &mut shim,
            json!({"place": "policy", "depth": depth}),
            |_| ChildAnswer::Result(json!({"decision": "deny"})),
        );
        if depth <= BOUND {
            assert_eq!(children.len(), 1, "{what}: {}", reply.frame.raw);
            assert_eq!(children[0].params()["intent"]["target"], nested(depth));
            assert_eq!(tool_text(&reply), "decision: deny", "{what}");
        } else {
            assert!(children.is_empty(), "{what}: {:?}", raws(&children));
            assert_refused(&reply, -32602, PAST_BOUND, &what);
            assert!(
                error_of(&reply)
                    .1
                    .starts_with("the policy intent target is nested")
            );
        }
        assert_served_after(&mut shim, &what);
    }
    shim.shutdown();
}

/// Presentation snapshots: the depth bound is checked before the schema,
/// so past it the refusal names the depth, within it the snapshot rules.
#[test]
fn presentation_snapshots_are_bounded() {
    let mut shim = started();
    for depth in DEPTHS {
        let what = format!("snapshot at {depth}");
        let (reply, _) = hostile(
            &mut shim,
            json!({"place": "presentation", "depth": depth}),
            |_| ChildAnswer::Ignore,
        );
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602, "{what}: {message}");
        assert!(reply.before.is_empty(), "{what}: {:?}", raws(&reply.before));
        if depth <= BOUND {
            assert!(!message.contains("nested deeper"), "{what}: {message}");
        } else {
            assert!(
                message.starts_with("the snapshot is nested"),
                "{what}: {message}"
            );
            assert!(message.contains(PAST_BOUND), "{what}: {message}");
        }
        assert_served_after(&mut shim, &what);
    }
    shim.shutdown();
}

/// A dynamic tool's parameter schema goes out in `tools/register` up to the
/// bound; past it nothing is written and the guest's error names the tool.
#[test]
fn dynamic_tool_schemas_are_bounded() {
    let mut shim = started();
    let mut revision = 0u64;
    for depth in DEPTHS {
        let what = format!("tools/register at {depth}");
        let staged = revision + 1;
        let (reply, children) = hostile(
            &mut shim,
            json!({"place": "register", "depth": depth}),
            |_| ChildAnswer::Result(json!({"revision": staged, "tools": tools(&["deep_dyn"])})),
        );
        if depth <= BOUND {
            assert_eq!(children.len(), 1, "{what}: {}", reply.frame.raw);
            assert_eq!(
                children[0].params()["tools"][0]["parameters"],
                nested(depth),
                "{what}"
            );
            revision = staged;
            assert_eq!(
                tool_text(&reply),
                format!("registered {revision}"),
                "{what}"
            );
        } else {
            assert!(children.is_empty(), "{what}: {:?}", raws(&children));
            assert_refused(
                &reply,
                -32602,
                &format!("the parameter schema of tool deep_dyn is {PAST_BOUND}"),
                &what,
            );
        }
        assert_served_after(&mut shim, &what);
    }
    shim.shutdown();
}

// ----- hooks and the menu -----------------------------------------------------

/// `before_persistence` metadata has the protocol's bound of 16
/// (docs/protocol.md#result-bounds).
#[test]
fn persistence_metadata_is_bounded_at_16() {
    let mut shim = started();
    let context = shim.context();
    for depth in [15, 16, 17, BOUND, BOUND + 1, 127, 128, 200] {
        let what = format!("persistence metadata at {depth}");
        let params = json!({
            "hook": "before_persistence",
            "payload": {"probe_depth": depth},
            "context": context,
        });
        // The host allows these hooks 200 ms in all, so on a loaded
        // machine the shim may answer for a slow guest; that answer is no
        // evidence either way, so the call is repeated.
        let reply = (0..10)
            .map(|_| shim.call("hook/run", params.clone()))
            .find(|reply| !reply.frame.raw.contains("request deadline exceeded"))
            .unwrap_or_else(|| panic!("{what}: every try ran into the 200 ms deadline"));
        if depth <= 16 {
            let result = expect_result(&reply);
            assert_eq!(
                result["persistence_metadata"]["value"],
                nested(depth),
                "{what}"
            );
        } else {
            assert_refused(
                &reply,
                -32603,
                "invalid handler result: persistence_metadata.value is nested deeper than 16 levels",
                &what,
            );
        }
        assert_served_after(&mut shim, &what);
    }
    shim.shutdown();
}

/// The menu (docs/protocol.md#menu-collect) is the result itself: up to the
/// bound it goes out as the guest built it; past it -32603 names the bound.
#[test]
fn menus_are_bounded() {
    let mut shim = started();
    for depth in DEPTHS {
        let what = format!("menu at {depth}");
        let context = Context::new(&shim.workspace)
            .resource_owner("session-1", "instance-1", 1)
            .host(json!({"probe_menu_depth": depth}))
            .to_json();
        let reply = shim.call("menu/collect", json!({"context": context}));
        if depth <= BOUND {
            assert_eq!(*expect_result(&reply), nested(depth), "{what}");
        } else {
            assert_refused(&reply, -32603, PAST_BOUND, &what);
            assert!(
                error_of(&reply)
                    .1
                    .starts_with("invalid handler result: the menu is")
            );
        }
        assert_served_after(&mut shim, &what);
    }
    shim.shutdown();
}

// ----- describe ------------------------------------------------------------------

/// A tool whose parameter schema nests past the bound in `describe` fails
/// `initialize` with an error naming the tool; the process stays up and
/// answers the next request. Within the bound the schema is listed whole.
#[test]
fn deep_parameter_schemas_fail_initialize_naming_the_tool() {
    for depth in DEPTHS {
        let what = format!("schema at {depth}");
        let mut shim = spawned(Some(depth));
        let params = init_params(&shim);
        let reply = shim.initialize_with(params.clone());
        if depth <= BOUND {
            let result = expect_result(&reply);
            let tool = result["tools"]
                .as_array()
                .and_then(|tools| tools.iter().find(|t| t["name"] == "deep_schema"))
                .unwrap_or_else(|| panic!("{what}: no deep_schema in {}", reply.frame.raw));
            let schema = (1..depth).fold(json!({}), |inner, _| json!({ "items": inner }));
            assert_eq!(tool["parameters"], schema, "{what}");
            assert_served_after(&mut shim, &what);
        } else {
            let needle = format!(
                "the extension's description is invalid: the parameter schema of tool deep_schema is {PAST_BOUND}"
            );
            assert_refused(&reply, -32603, &needle, &what);
            // Served again by the same process: the same clear answer.
            let again = shim.initialize_with(params);
            assert_refused(&again, -32603, &needle, &what);
        }
        shim.shutdown();
    }
}

/// A guest whose `init` fails is reported in a sentence, not as the
/// bindings' debug text of its error.
#[test]
fn a_failed_init_reads_as_a_sentence() {
    let mut shim = Shim::probe_with(probe_manifest(ApiVersion::V0_2).tools(&tools(&[])).hooks(&[
        "before_prompt",
        "after_response",
        "before_tool_call",
        "after_tool_call",
        "before_persistence",
    ]));
    std::fs::write(shim.workspace.join(".probe-hostile-json"), "fail-init")
        .expect("write the probe's switch file");
    let params = init_params(&shim);
    let reply = shim.initialize_with(params);
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32603, "{message}");
    assert!(
        message.ends_with("the guest's init failed: probe init refused"),
        "{message}"
    );
    assert!(!message.contains("Failed("), "{message}");
    shim.shutdown();
}

// ----- log fields ---------------------------------------------------------------

/// Log fields go to stderr, never the wire, but are held to the same
/// bound: past it the record keeps the text and says why it was refused.
#[test]
fn log_fields_are_bounded() {
    let mut shim = started();
    for depth in DEPTHS {
        let what = format!("log fields at {depth}");
        let (reply, _) = hostile(&mut shim, json!({"place": "log", "depth": depth}), |_| {
            ChildAnswer::Ignore
        });
        assert_eq!(tool_text(&reply), "logged", "{what}");
        let message = format!("probe deep fields {depth}");
        let line = shim
            .stderr()
            .wait_for_message(REQUEST_TIMEOUT, &message)
            .unwrap_or_else(|| panic!("{what}: no record; stderr:\n{}", stderr_text(&shim)));
        if depth <= BOUND {
            assert_eq!(
                line.field("n"),
                Some(&nested(depth - 1)),
                "{what}: {}",
                line.text
            );
            assert!(line.field("fields_error").is_none(), "{what}");
        } else {
            let error = line
                .field("fields_error")
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{what}: no fields_error in {}", line.text));
            assert!(
                error.starts_with("log fields is nested deeper than 64 levels"),
                "{error}"
            );
            assert_eq!(
                line.field("fields"),
                Some(&json!(nested(depth).to_string()))
            );
        }
        assert_served_after(&mut shim, &what);
    }
    shim.shutdown();
}

// ----- numbers and strings --------------------------------------------------------

/// JSON no serde_json writes (a C or hand-rolled guest can hand it over):
/// numbers outside f64 and lone surrogates are refused as invalid JSON;
/// odd but valid numbers go out as JSON the host parses back.
#[test]
fn numbers_and_escapes_the_host_cannot_read_are_refused() {
    let mut shim = started();
    for (place, text) in [
        ("raw_policy", r#"{"n":1e400}"#),
        ("raw_policy", r#"{"n":-1e400}"#),
        ("raw_policy", r#"{"n":NaN}"#),
        ("raw_policy", r#"{"s":"\ud800"}"#),
        ("raw_snapshot", r#"{"revision":1e400}"#),
        ("raw_snapshot", r#"{"revision":1,"status":"\udc00"}"#),
    ] {
        let what = format!("{place} {text}");
        let (reply, children) = hostile(&mut shim, json!({"place": place, "text": text}), |_| {
            ChildAnswer::Result(json!({"decision": "deny"}))
        });
        assert!(children.is_empty(), "{what}: {:?}", raws(&children));
        assert_refused(&reply, -32602, "is not valid JSON: ", &what);
        assert_served_after(&mut shim, &what);
    }
    let odd = r#"{"zero":-0,"big":123456789012345678901234567890,"tiny":1e-400,"max":18446744073709551615,"pair":"\ud83d\ude00","nul":"\u0000"}"#;
    let (reply, children) = hostile(
        &mut shim,
        json!({"place": "raw_policy", "text": odd}),
        |_| ChildAnswer::Result(json!({"decision": "allow"})),
    );
    assert_eq!(tool_text(&reply), "decision: allow", "{}", reply.frame.raw);
    let FrameKind::Request { params, .. } = &children[0].kind else {
        panic!("not a request: {}", children[0].raw);
    };
    let target = &params["intent"]["target"];
    assert_eq!(target["zero"].as_f64(), Some(0.0));
    assert_eq!(target["big"].as_f64(), Some(1.2345678901234568e29));
    assert_eq!(target["tiny"], json!(0.0));
    assert_eq!(target["max"], json!(u64::MAX));
    assert_eq!(target["pair"], "😀");
    assert_eq!(target["nul"], "\u{0}");
    assert_served_after(&mut shim, "odd numbers");
    shim.shutdown();
}

/// A reverse notification too large for a frame is refused to the guest
/// in a sentence naming the limit (it once read
/// `TooLarge(FrameTooLarge { bytes: .. })`), and nothing is written.
#[test]
fn an_oversized_notification_is_refused_in_a_sentence() {
    let mut shim = started();
    let (reply, _) = hostile(
        &mut shim,
        json!({"place": "big_notification", "bytes": 2 << 20}),
        |_| ChildAnswer::Ignore,
    );
    assert!(reply.before.is_empty(), "{:?}", raws(&reply.before));
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], true, "{}", reply.frame.raw);
    let text = tool_text(&reply);
    assert!(text.contains("notification not sent: frame of "), "{text}");
    assert!(
        text.contains("bytes exceeds the 1 MiB frame limit (1048575 bytes before the line feed)"),
        "{text}"
    );
    assert!(!text.contains("TooLarge"), "{text}");
    assert_served_after(&mut shim, "an oversized notification");
    shim.shutdown();
}

/// The stack overflows of the probe's `recurse` are reported as one, with
/// what raises the limit, not as an out-of-bounds memory access.
#[test]
fn a_stack_overflow_is_named_as_one() {
    let mut shim = started();
    let reply = shim.tool("recurse", json!({"depth": 100_000_000u64}));
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], true, "{}", reply.frame.raw);
    let text = tool_text(&reply);
    assert!(
        text.starts_with("tool recurse failed: the guest overflowed its stack and trapped"),
        "{text}"
    );
    assert!(!text.contains("out of bounds"), "{text}");
    assert!(text.contains("less deeply"), "{text}");
    let record = shim
        .stderr()
        .wait_for_message(REQUEST_TIMEOUT, "guest trapped")
        .unwrap_or_else(|| panic!("no trap record; stderr:\n{}", stderr_text(&shim)));
    // The log keeps wasmtime's own name for the trap, the evidence.
    assert_eq!(
        record.field("trap"),
        Some(&json!("wasm trap: out of bounds memory access")),
        "{}",
        record.text
    );
    let backtrace = record.field("backtrace").and_then(Value::as_array);
    assert!(
        backtrace.is_some_and(|frames| frames
            .iter()
            .any(|f| f.as_str().is_some_and(|f| f.contains("recurse")))),
        "{}",
        record.text
    );
    assert_served_after(&mut shim, "a stack overflow");
    shim.shutdown();
}
