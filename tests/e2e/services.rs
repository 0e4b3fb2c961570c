//! API 0.2 host services behind the guest's service imports: artifacts and
//! the dynamic tool catalog. hostsim plays the host (answers, refusals,
//! errors); each test checks the exact frames the shim writes and what the
//! guest receives, and that every bound is enforced locally: at the limit
//! the request goes out, one past it nothing is written and the guest's
//! error names the bound.

use crate::support::*;
use crate::support::{ChildAnswer as Answer, serve_children as serve};
use base64::Engine as _;
use octet_hostsim::{ApiVersion, Frame, FrameKind, InitializeParams, Reply};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

const MIB: usize = 1 << 20;

fn started(offered: Option<&[&str]>) -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let mut params = InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace);
    if let Some(features) = offered {
        params = params.optional_features(features);
    }
    expect_result(&shim.initialize_with(params.to_json()));
    shim
}

fn scratch(shim: &Shim) -> PathBuf {
    shim.workspace
        .parent()
        .expect("workspace parent")
        .join("scratch")
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks an `artifact/publish` request like the host's store would and
/// returns the bytes it carries (inline or from the scratch file).
fn published_bytes(shim: &Shim, frame: &Frame, parent: u64) -> Vec<u8> {
    assert_eq!(frame.method(), Some("artifact/publish"), "{}", frame.raw);
    let params = frame.params();
    let mut keys: Vec<&str> = params
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let data = if let Some(inline) = params.get("data") {
        assert_eq!(
            keys,
            ["data", "mime_type", "parent_request_id", "sha256", "size"]
        );
        assert_eq!(inline["encoding"], "base64", "{}", frame.raw);
        assert_eq!(inline.as_object().unwrap().len(), 2);
        base64::engine::general_purpose::STANDARD
            .decode(inline["data"].as_str().unwrap())
            .expect("standard base64")
    } else {
        assert_eq!(
            keys,
            ["mime_type", "parent_request_id", "path", "sha256", "size"]
        );
        let path = params["path"].as_str().unwrap();
        assert!(!path.contains('/') && !path.starts_with('.'), "{path}");
        std::fs::read(scratch(shim).join(path)).expect("the scratch file exists while pending")
    };
    assert_eq!(params["parent_request_id"], parent);
    assert_eq!(params["size"], data.len() as u64);
    assert_eq!(params["sha256"], sha256_hex(&data));
    data
}

fn tool_call(shim: &mut Shim, name: &str, arguments: Value, revision: Option<u64>) -> u64 {
    let mut params = shim.tool_params(name, arguments);
    if let Some(revision) = revision {
        params["catalog_revision"] = json!(revision);
    }
    shim.send_request("tool/call", params)
}

fn error_of(reply: &Reply) -> (i64, String) {
    let error = expect_error(reply);
    (error.code, error.message.clone())
}

// ----- artifacts ---------------------------------------------------------

#[test]
fn artifacts_inline_at_256_kib_then_by_scratch_path() {
    let mut shim = started(None);
    assert!(shim.features().contains("artifacts"));
    // At the inline limit: base64 in the frame, and the image part refers to
    // the returned id.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/png", "size": 256 * 1024, "part": "image"}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"artifact_id": "artifact_0001"}))
    });
    assert_eq!(children.len(), 1);
    let data = published_bytes(&shim, &children[0], id);
    assert_eq!(data.len(), 256 * 1024);
    assert!(data.starts_with(b"\x89PNG\r\n\x1a\n"));
    assert!(
        children[0]
            .raw
            .starts_with(r#"{"jsonrpc":"2.0","id":"wasm:"#),
        "{}",
        children[0].raw
    );
    let result = expect_result(&reply);
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "ids: artifact_0001"},
            {"type": "image", "artifact_id": "artifact_0001", "mime_type": "image/png", "alt": "probe"},
        ])
    );

    // One byte more: written to OCTET_EXTENSION_SCRATCH, published by a
    // relative path, removed once the host answered.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "audio/flac", "size": 256 * 1024 + 1, "part": "audio"}),
        None,
    );
    let mut path = None;
    let scratch_dir = scratch(&shim);
    let (reply, children) = serve(&mut shim, id, |frame| {
        path = frame.params()["path"].as_str().map(str::to_owned);
        assert!(scratch_dir.join(path.as_deref().unwrap_or("-")).is_file());
        Answer::Result(json!({"artifact_id": "artifact_0002"}))
    });
    let data = published_bytes_after(&children[0]);
    assert_eq!(data, 256 * 1024 + 1);
    assert_eq!(
        expect_result(&reply)["content"][1],
        json!({"type": "audio", "artifact_id": "artifact_0002", "mime_type": "audio/flac"})
    );
    assert!(
        !scratch_dir.join(path.unwrap()).exists(),
        "the scratch file is removed after the answer"
    );
    shim.shutdown();
}

/// The `size` a path publication claims (its file is gone by now).
fn published_bytes_after(frame: &Frame) -> u64 {
    assert!(frame.params().get("path").is_some(), "{}", frame.raw);
    assert!(frame.params().get("data").is_none());
    frame.params()["size"].as_u64().unwrap()
}

#[test]
fn artifact_size_and_generation_bytes_bounds() {
    let mut shim = started(None);
    let answer = |_: &Frame| Answer::Result(json!({"artifact_id": "artifact_x"}));
    // 20 MiB (the per-artifact limit) passes, three times: 60 MiB.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/gif", "size": 20 * MIB, "count": 3}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, answer);
    assert_eq!(tool_text(&reply), "ids: artifact_x,artifact_x,artifact_x");
    assert_eq!(children.len(), 3);
    assert!(
        children
            .iter()
            .all(|c| c.params()["size"] == 20 * MIB as u64)
    );

    // One byte past 20 MiB: refused locally, nothing written.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/gif", "size": 20 * MIB + 1}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, answer);
    assert!(
        children.is_empty() && reply.before.is_empty(),
        "{:?}",
        raws(&reply.before)
    );
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32602);
    assert!(message.contains("20 MiB"), "{message}");

    // Up to exactly 64 MiB per generation passes...
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/gif", "size": 4 * MIB}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, answer);
    assert_eq!(children.len(), 1, "{}", reply.frame.raw);
    // ...and the next byte is refused, naming the generation budget.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/gif", "size": 6}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, answer);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32602);
    assert!(message.contains("64 MiB"), "{message}");
    shim.shutdown();
}

#[test]
fn artifact_count_bound_and_host_rejections_release_it() {
    let mut shim = started(None);
    // A host rejection does not count (docs/choices.md#artifact-budget)...
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "audio/wav", "size": 12}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Error(
            -32602,
            "artifact publication rejected: artifact SHA-256 mismatch",
        )
    });
    assert_eq!(children.len(), 1);
    assert_eq!(
        error_of(&reply),
        (
            -32602,
            "artifact publication rejected: artifact SHA-256 mismatch".to_owned()
        )
    );
    // ...so 64 still pass...
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "audio/wav", "size": 12, "count": 64}),
        None,
    );
    let mut n = 0;
    let (reply, children) = serve(&mut shim, id, |_| {
        n += 1;
        Answer::Result(json!({"artifact_id": format!("artifact_{n}")}))
    });
    assert_eq!(children.len(), 64, "{}", reply.frame.raw);
    assert!(tool_text(&reply).ends_with("artifact_64"));
    // ...and the 65th is refused locally.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "audio/wav", "size": 12}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32602);
    assert!(message.contains("64 artifacts"), "{message}");
    shim.shutdown();
}

#[test]
fn artifact_mime_and_signature_are_checked_locally() {
    let mut shim = started(None);
    for (arguments, needle) in [
        (
            json!({"mime_type": "image/svg+xml", "size": 16}),
            "not supported",
        ),
        (
            json!({"mime_type": "IMAGE/PNG", "size": 16}),
            "not supported",
        ),
        (
            json!({"mime_type": "image/png", "size": 16, "signature": false}),
            "signature",
        ),
        (json!({"mime_type": "image/webp", "size": 11}), "signature"),
        (json!({"mime_type": "audio/opus", "size": 16}), "signature"),
    ] {
        let id = tool_call(&mut shim, "artifact", arguments.clone(), None);
        let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
        assert!(children.is_empty(), "{arguments}: {:?}", raws(&children));
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602, "{arguments}");
        assert!(message.contains(needle), "{arguments}: {message}");
    }
    // Every supported type with its signature passes.
    for mime in [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "audio/wav",
        "audio/mpeg",
        "audio/flac",
        "audio/opus",
        "audio/aac",
        "audio/mp4",
    ] {
        let id = tool_call(
            &mut shim,
            "artifact",
            json!({"mime_type": mime, "size": 64}),
            None,
        );
        let (reply, children) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"artifact_id": "a"}))
        });
        assert_eq!(children.len(), 1, "{mime}: {}", reply.frame.raw);
        assert_eq!(children[0].params()["mime_type"], mime);
    }
    // A malformed host answer is the guest's error, not a crash.
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/png", "size": 64}),
        None,
    );
    let (reply, _) = serve(&mut shim, id, |_| Answer::Result(json!({"id": 5})));
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], true);
    assert!(tool_text(&reply).contains("invalid artifact/publish response"));
    shim.shutdown();
}

#[test]
fn artifacts_without_the_feature_write_nothing() {
    let mut shim = started(Some(&["request_progress", "lifecycle_events"]));
    assert!(!shim.features().contains("artifacts"));
    let id = tool_call(
        &mut shim,
        "artifact",
        json!({"mime_type": "image/png", "size": 64}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty() && reply.before.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("`artifacts`"), "{message}");
    // Media parts need the feature too (results.rs): refused as an invalid
    // result, no publication attempted.
    shim.shutdown();
}

// ----- dynamic tools -----------------------------------------------------

fn all_tools(extra: &[&str]) -> Value {
    let mut names: Vec<&str> = PROBE_TOOLS.to_vec();
    names.extend_from_slice(extra);
    json!(names)
}

#[test]
fn register_is_staged_pinned_and_committed() {
    let mut shim = started(None);
    assert!(shim.features().contains("dynamic_tools"));
    let id = tool_call(&mut shim, "dyn_register", json!({"names": ["lint"]}), None);
    // The host publishes and sends a call pinned to revision 1 before its
    // acknowledgement: the staged catalog must already serve it.
    let child = loop {
        let frame = shim.recv(REQUEST_TIMEOUT).expect("tools/register");
        if let FrameKind::Request { id, method, params } = &frame.kind {
            assert_eq!(method, "tools/register");
            assert_eq!(
                *params,
                json!({"tools": [{"name": "lint", "description": "Lint (dynamic)", "parameters": {"type": "object"}}]}),
                "no parent_request_id, exact definition: {}",
                frame.raw
            );
            break id.clone();
        }
    };
    let early = tool_call(&mut shim, "lint", json!({}), Some(1));
    assert_eq!(tool_text(&shim.reply(early)), "lint ok");
    shim.respond(
        &child,
        json!({"revision": 1, "tools": all_tools(&["lint"])}),
    )
    .unwrap();
    let reply = shim.reply(id);
    assert!(
        tool_text(&reply).starts_with("revision 1: "),
        "{}",
        reply.frame.raw
    );
    assert!(tool_text(&reply).contains("lint"));

    // Pinned dispatch: revision 0 does not know lint (-32601), an unknown
    // revision is -32602, no revision means the newest committed one.
    let call = tool_call(&mut shim, "lint", json!({}), Some(0));
    assert_eq!(
        error_of(&shim.reply(call)),
        (-32601, "unknown tool: lint".to_owned())
    );
    let call = tool_call(&mut shim, "lint", json!({}), Some(7));
    assert_eq!(
        error_of(&shim.reply(call)),
        (
            -32602,
            "unknown or retired tool catalog revision: 7".to_owned()
        )
    );
    let call = tool_call(&mut shim, "lint", json!({}), None);
    assert_eq!(tool_text(&shim.reply(call)), "lint ok");
    let call = tool_call(&mut shim, "echo", json!({"text": "r0"}), Some(0));
    assert_eq!(tool_text(&shim.reply(call)), "r0");

    // Unregister: revision 2 lacks lint, revision 1 still serves it.
    let id = tool_call(
        &mut shim,
        "dyn_unregister",
        json!({"names": ["lint"]}),
        Some(1),
    );
    let (reply, children) = serve(&mut shim, id, |frame| {
        assert_eq!(*frame.params(), json!({"names": ["lint"]}));
        Answer::Result(json!({"revision": 2, "tools": all_tools(&[])}))
    });
    assert_eq!(children.len(), 1);
    assert!(tool_text(&reply).starts_with("revision 2: "));
    let call = tool_call(&mut shim, "lint", json!({}), Some(2));
    assert_eq!(expect_error(&shim.reply(call)).code, -32601);
    let call = tool_call(&mut shim, "lint", json!({}), Some(1));
    assert_eq!(tool_text(&shim.reply(call)), "lint ok");
    let call = tool_call(&mut shim, "dyn_current", json!({}), None);
    assert!(tool_text(&shim.reply(call)).starts_with("revision 2: "));

    // Eight catalogs are retained: after eight more revisions (3..=10),
    // revision 2 is retired and revision 3 is the oldest kept.
    for revision in 3..=10u64 {
        let names = if revision % 2 == 1 {
            "dyn_register"
        } else {
            "dyn_unregister"
        };
        let id = tool_call(&mut shim, names, json!({"names": ["lint"]}), None);
        let extra: &[&str] = if revision % 2 == 1 { &["lint"] } else { &[] };
        let (reply, _) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"revision": revision, "tools": all_tools(extra)}))
        });
        assert!(tool_text(&reply).starts_with(&format!("revision {revision}: ")));
    }
    let call = tool_call(&mut shim, "echo", json!({"text": "old"}), Some(2));
    assert_eq!(
        error_of(&shim.reply(call)),
        (
            -32602,
            "unknown or retired tool catalog revision: 2".to_owned()
        )
    );
    let call = tool_call(&mut shim, "lint", json!({}), Some(3));
    assert_eq!(tool_text(&shim.reply(call)), "lint ok");
    shim.shutdown();
}

#[test]
fn host_policy_omissions_errors_and_bad_acks_keep_catalogs_equal() {
    let mut shim = started(None);
    // The host may omit requested names: only the returned ones commit.
    let id = tool_call(
        &mut shim,
        "dyn_register",
        json!({"names": ["lint", "counted"]}),
        None,
    );
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"revision": 1, "tools": all_tools(&["counted"])}))
    });
    assert!(!tool_text(&reply).contains("lint"), "{}", reply.frame.raw);
    let call = tool_call(&mut shim, "lint", json!({}), Some(1));
    assert_eq!(expect_error(&shim.reply(call)).code, -32601);
    // A dynamic tool's output schema is enforced at its revision.
    let call = tool_call(&mut shim, "counted", json!({}), Some(1));
    let reply = shim.reply(call);
    assert_eq!(expect_result(&reply)["structured_content"], json!({"n": 1}));

    // A host error discards the stage: the guest sees it, the revision
    // stays 1 and the staged revision 2 is gone.
    let id = tool_call(&mut shim, "dyn_register", json!({"names": ["lint"]}), None);
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Error(-32000, "host tool catalog update queue is full")
    });
    assert_eq!(
        error_of(&reply),
        (-32000, "host tool catalog update queue is full".to_owned())
    );
    let call = tool_call(&mut shim, "lint", json!({}), Some(2));
    assert_eq!(expect_error(&shim.reply(call)).code, -32602);

    // An acknowledgement with the wrong revision or an unstaged name is a
    // protocol error: nothing commits.
    for ack in [
        json!({"revision": 5, "tools": all_tools(&["lint"])}),
        json!({"revision": 2, "tools": all_tools(&["lint", "ghost"])}),
    ] {
        let id = tool_call(&mut shim, "dyn_register", json!({"names": ["lint"]}), None);
        let (reply, _) = serve(&mut shim, id, |_| Answer::Result(ack.clone()));
        assert_eq!(expect_result(&reply)["is_error"], true, "{ack}");
        assert!(tool_text(&reply).contains("invalid tools/register response"));
    }
    let call = tool_call(&mut shim, "dyn_current", json!({}), None);
    assert!(tool_text(&shim.reply(call)).starts_with("revision 1: "));
    shim.shutdown();
}

#[test]
fn catalog_bounds_are_local() {
    let mut shim = started(None);
    let tools = PROBE_TOOLS.len();
    // 257 definitions in one request: refused before anything is written.
    let id = tool_call(&mut shim, "dyn_many", json!({"count": 257}), None);
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32602);
    assert!(message.contains("1 to 256 definitions"), "{message}");
    // A catalog one past 256 tools: refused, naming the bound.
    let id = tool_call(
        &mut shim,
        "dyn_many",
        json!({"count": 256 - tools + 1}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32602);
    assert!(message.contains("256"), "{message}");
    // Exactly 256: sent.
    let count = 256 - tools;
    let id = tool_call(&mut shim, "dyn_many", json!({"count": count}), None);
    let (reply, children) = serve(&mut shim, id, |frame| {
        let names: Vec<String> = frame.params()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names.len(), count);
        let mut all: Vec<String> = PROBE_TOOLS.iter().map(|s| (*s).to_owned()).collect();
        all.extend(names);
        Answer::Result(json!({"revision": 1, "tools": all}))
    });
    assert_eq!(children.len(), 1);
    assert_eq!(tool_text(&reply), "revision 1: 256 tools");
    // Empty, invalid or duplicate unregistrations are refused locally.
    for (names, needle) in [
        (json!([]), "1 to 256 names"),
        (json!(["1bad"]), "not an identifier"),
        (json!(["a", "a"]), "twice"),
    ] {
        let id = tool_call(&mut shim, "dyn_unregister", json!({"names": names}), None);
        let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
        assert!(children.is_empty());
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602, "{names}");
        assert!(message.contains(needle), "{names}: {message}");
    }
    shim.shutdown();
}

#[test]
fn dynamic_tools_without_the_feature() {
    let mut shim = started(Some(&["request_progress", "artifacts"]));
    assert!(!shim.features().contains("dynamic_tools"));
    let id = tool_call(&mut shim, "dyn_register", json!({"names": ["lint"]}), None);
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty() && reply.before.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("`dynamic_tools`"), "{message}");
    // catalog_revision without the feature is -32602; a dynamic-only tool is
    // unknown.
    let call = tool_call(&mut shim, "echo", json!({"text": "x"}), Some(0));
    assert_eq!(expect_error(&shim.reply(call)).code, -32602);
    let call = tool_call(&mut shim, "lint", json!({}), None);
    assert_eq!(expect_error(&shim.reply(call)).code, -32601);
    let call = tool_call(&mut shim, "dyn_current", json!({}), None);
    assert_eq!(
        tool_text(&shim.reply(call)),
        format!("revision 0: {}", PROBE_TOOLS.join(","))
    );
    shim.shutdown();
}

// ----- secrets -------------------------------------------------------------

/// The probe with `[capabilities] secrets` and the host's broker (so
/// `secrets` is offered).
fn with_secrets(names: &[&str]) -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let mut features: Vec<&str> = octet_hostsim::HOST_OPTIONAL_FEATURES.to_vec();
    features.extend(["secrets", "approvals"]);
    let mut params = InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace)
        .optional_features(&features)
        .to_json();
    params["capabilities"]["secrets"] = json!(names);
    expect_result(&shim.initialize_with(params));
    shim
}

#[test]
fn secrets_are_brokered_for_declared_names_only() {
    let mut shim = with_secrets(&["tracker.api_key", "other"]);
    assert!(shim.features().contains("secrets"));
    // At the value bound: delivered.
    let id = tool_call(
        &mut shim,
        "secret",
        json!({"name": "tracker.api_key"}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"value": "k".repeat(64 * 1024)}))
    });
    assert_eq!(
        children[0].raw,
        format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"secret/get","params":{{"parent_request_id":{id},"name":"tracker.api_key"}}}}"#,
            children[0].value["id"]
        )
    );
    assert_eq!(tool_text(&reply), "secret of 65536 bytes");
    // One byte past it: the guest gets an error, never the value.
    let id = tool_call(&mut shim, "secret", json!({"name": "other"}), None);
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"value": "k".repeat(64 * 1024 + 1)}))
    });
    assert_eq!(expect_result(&reply)["is_error"], true);
    assert!(tool_text(&reply).contains("64 KiB"), "{}", reply.frame.raw);
    // The broker's -32004 reaches the guest as is.
    let id = tool_call(&mut shim, "secret", json!({"name": "other"}), None);
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Error(-32004, "secret is unavailable")
    });
    assert_eq!(
        error_of(&reply),
        (-32004, "secret is unavailable".to_owned())
    );
    // Undeclared or invalid names: refused locally, nothing written.
    for name in ["undeclared", "1bad", &"a".repeat(65)] {
        let id = tool_call(&mut shim, "secret", json!({"name": name}), None);
        let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
        assert!(children.is_empty(), "{name}");
        let (code, _) = error_of(&reply);
        assert_eq!(code, -32602, "{name}");
    }
    // The value never reaches the shim's log.
    assert!(!stderr_text(&shim).contains("kkkkkkkk"));
    shim.shutdown();
}

#[test]
fn secrets_without_the_feature_write_nothing() {
    // Default offer: no broker, so `secrets` is not offered.
    let mut shim = started(None);
    assert!(!shim.features().contains("secrets"));
    let id = tool_call(
        &mut shim,
        "secret",
        json!({"name": "tracker.api_key"}),
        None,
    );
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("`secrets`"), "{message}");
    shim.shutdown();
}

// ----- policy intents and approvals --------------------------------------------

#[test]
fn policy_intents_are_checked_then_evaluated() {
    let mut shim = with_secrets(&["x"]);
    assert!(shim.features().contains("policy_intents") && shim.features().contains("approvals"));
    let intent = json!({
        "kind": "external_side_effect", "operation": "issues.create",
        "target": {"origin": "https://tracker.example.net", "label": "Open issue"},
        "data_classes": ["user_text"], "read_only": false, "destructive": false,
    });
    let token = "ab".repeat(32);
    let id = tool_call(&mut shim, "policy", intent.clone(), None);
    let answer_token = token.clone();
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"decision": "ask", "approval_token": answer_token}))
    });
    assert_eq!(
        *children[0].params(),
        json!({"parent_request_id": id, "intent": {
            "kind": "external_side_effect", "operation": "issues.create",
            "target": {"origin": "https://tracker.example.net", "label": "Open issue"},
            "data_classes": ["user_text"],
            "adapter_hints": {"read_only": false, "destructive": false},
        }})
    );
    assert_eq!(tool_text(&reply), format!("decision: ask, token: {token}"));
    // Redeeming: the token goes out with the identical intent.
    let mut redeem = intent.clone();
    redeem["token"] = json!(token);
    let id = tool_call(&mut shim, "policy", redeem, None);
    let (reply, children) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"decision": "allow", "approval_token": null}))
    });
    assert_eq!(children[0].params()["approval_token"], json!(token));
    assert_eq!(tool_text(&reply), "decision: allow, token: none");
    // A token with allow is an invalid host answer.
    let id = tool_call(&mut shim, "policy", intent.clone(), None);
    let bad = token.clone();
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"decision": "allow", "approval_token": bad}))
    });
    assert!(tool_text(&reply).contains("invalid policy/evaluate response"));

    // Intents the host would reject fatally never leave the shim; 32 KiB
    // canonical passes, one byte more does not.
    let base = json!({"kind": "k", "operation": "o", "target": {"t": ""}, "data_classes": []});
    let overhead = serde_json::to_string(
        &json!({"data_classes": [], "kind": "k", "operation": "o", "target": {"t": ""}}),
    )
    .unwrap()
    .len();
    for (extra, passes) in [
        (32 * 1024 - overhead, true),
        (32 * 1024 - overhead + 1, false),
    ] {
        let mut arguments = base.clone();
        arguments["target"]["t"] = json!("x".repeat(extra));
        let id = tool_call(&mut shim, "policy", arguments, None);
        let (reply, children) = serve(&mut shim, id, |_| {
            Answer::Result(json!({"decision": "deny"}))
        });
        if passes {
            assert_eq!(children.len(), 1, "{}", reply.frame.raw);
            assert_eq!(tool_text(&reply), "decision: deny, token: none");
        } else {
            assert!(children.is_empty());
            let (code, message) = error_of(&reply);
            assert_eq!(code, -32602);
            assert!(message.contains("32 KiB"), "{message}");
        }
    }
    for (change, needle) in [
        (json!({"kind": " "}), "kind"),
        (json!({"operation": ""}), "operation"),
        (json!({"target": [1]}), "object"),
        (json!({"token": "AB".repeat(32)}), "64 lowercase hex"),
        (json!({"token": "ab"}), "64 lowercase hex"),
    ] {
        let mut arguments = base.clone();
        for (key, value) in change.as_object().unwrap() {
            arguments[key] = value.clone();
        }
        let id = tool_call(&mut shim, "policy", arguments, None);
        let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
        assert!(children.is_empty(), "{change}");
        let (code, message) = error_of(&reply);
        assert_eq!(code, -32602, "{change}");
        assert!(message.contains(needle), "{change}: {message}");
    }
    shim.shutdown();
}

#[test]
fn approval_tokens_need_approvals() {
    // Default offer: policy_intents without approvals.
    let mut shim = started(None);
    assert!(shim.features().contains("policy_intents") && !shim.features().contains("approvals"));
    let arguments = json!({"kind": "k", "operation": "o", "target": {}, "token": "0".repeat(64)});
    let id = tool_call(&mut shim, "policy", arguments, None);
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("`approvals`"), "{message}");
    // A host token without negotiated approvals is an invalid answer.
    let arguments = json!({"kind": "k", "operation": "o", "target": {}});
    let id = tool_call(&mut shim, "policy", arguments, None);
    let (reply, _) = serve(&mut shim, id, |_| {
        Answer::Result(json!({"decision": "ask", "approval_token": "0".repeat(64)}))
    });
    assert!(tool_text(&reply).contains("invalid policy/evaluate response"));
    shim.shutdown();

    let mut shim = started(Some(&["request_progress"]));
    let arguments = json!({"kind": "k", "operation": "o", "target": {}});
    let id = tool_call(&mut shim, "policy", arguments, None);
    let (reply, children) = serve(&mut shim, id, |_| Answer::Ignore);
    assert!(children.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("`policy_intents`"), "{message}");
    shim.shutdown();
}

// ----- presentation ------------------------------------------------------------

fn with_presentation() -> Shim {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    let mut params =
        InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace).to_json();
    params["contributes"]["presentation"] = json!(true);
    expect_result(&shim.initialize_with(params));
    shim
}

/// Calls `present` and returns the reply and the notifications before it.
fn present(shim: &mut Shim, arguments: Value) -> (Reply, Vec<Frame>) {
    let id = tool_call(shim, "present", arguments, None);
    let (reply, _) = serve(shim, id, |_| Answer::Ignore);
    let notes = reply
        .before
        .iter()
        .filter(|f| f.method() == Some("presentation/update"))
        .cloned()
        .collect();
    (reply, notes)
}

fn refused_with(reply: &Reply, notes: &[Frame], needle: &str) {
    assert!(notes.is_empty(), "{:?}", raws(notes));
    let (code, message) = error_of(reply);
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains(needle), "{needle}: {message}");
}

#[test]
fn presentation_snapshots_name_their_parent_or_owner() {
    let mut shim = with_presentation();
    let snapshot = json!({
        "revision": 5,
        "status": {"state": "running", "label": "1 scan"},
        "activities": [{"id": "scan:1", "kind": "page_scan", "state": "running", "summary": "Scanning", "started_at_ms": 1767225600000u64}],
        "collection": {"kind": "list", "title": "Scans", "nodes": [{"id": "scan:1", "state": "running", "label": "docs", "action_ids": ["again"]}],
            "selected_node_id": "scan:1",
            "detail": {"node_id": "scan:1", "title": "docs", "body": "Fetching\npage 1.", "references": [{"kind": "url", "id": "https://docs.example.org/", "label": "Source"}]}},
        "actions": [{"id": "again", "label": "Stats", "command": "stats", "arguments": ["a"], "destructive": false}],
    });
    let id = tool_call(&mut shim, "present", json!({"snapshot": snapshot}), None);
    let (reply, _) = serve(&mut shim, id, |_| Answer::Ignore);
    assert_eq!(tool_text(&reply), "presented");
    assert_eq!(reply.before.len(), 1, "{:?}", raws(&reply.before));
    assert_eq!(
        reply.before[0].value,
        json!({"jsonrpc": "2.0", "method": "presentation/update", "params": {"snapshot": snapshot, "parent_request_id": id}})
    );
    // Revisions increase strictly.
    let (reply, notes) = present(&mut shim, json!({"snapshot": {"revision": 5}}));
    refused_with(&reply, &notes, "does not increase");
    // An owner the host issued (this call's) is sent instead of a parent.
    let (reply, notes) = present(
        &mut shim,
        json!({"snapshot": {"revision": 6}, "owner": "call"}),
    );
    assert_eq!(tool_text(&reply), "presented");
    assert_eq!(
        *notes[0].params(),
        json!({"snapshot": {"revision": 6}, "resource_owner": {"session_id": "session-1", "extension_instance_id": "instance-1", "process_generation": 1}})
    );
    // A forged owner is refused.
    let (reply, notes) = present(
        &mut shim,
        json!({"snapshot": {"revision": 7}, "owner": "forged"}),
    );
    refused_with(&reply, &notes, "never issued");
    // Schema violations the host would treat as fatal stay local.
    for (snapshot, needle) in [
        (json!({"revision": 8, "extra": true}), "unknown field"),
        (
            json!({"revision": 8, "actions": [{"id": "x", "label": "X", "command": "undeclared"}]}),
            "does not declare",
        ),
        (
            json!({"revision": 8, "status": {"state": "bogus", "label": "x"}}),
            "status.state",
        ),
        (
            json!({"revision": 8, "status": {"state": "active", "label": "a\nb"}}),
            "control",
        ),
        (
            json!({"revision": 8, "collection": {"kind": "list", "title": "t", "selected_node_id": "nope"}}),
            "names no node",
        ),
        (
            json!({"revision": 8, "collection": {"kind": "list", "title": "t", "detail": {"title": "d", "body": "b", "references": [{"kind": "url", "id": "http://127.0.0.1/"}]}}}),
            "public",
        ),
        (json!({"revision": 9007199254740992u64}), "2^53-1"),
    ] {
        let (reply, notes) = present(&mut shim, json!({"snapshot": snapshot}));
        refused_with(&reply, &notes, needle);
    }
    shim.shutdown();
}

#[test]
fn presentation_bounds() {
    let mut shim = with_presentation();
    let mut revision = 0;
    let mut next = || {
        revision += 1;
        revision
    };
    let activity =
        |i: usize| json!({"id": format!("a{i}"), "kind": "k", "state": "active", "summary": "s"});
    let node = |i: usize| json!({"id": format!("n{i}"), "state": "active", "label": "l"});
    let action = |i: usize| json!({"id": format!("x{i}"), "label": "l", "command": "stats"});
    for (limit, name, make) in [
        (128, "activities", &activity as &dyn Fn(usize) -> Value),
        (256, "nodes", &node),
        (64, "actions", &action),
    ] {
        for (count, passes) in [(limit, true), (limit + 1, false)] {
            let items: Vec<Value> = (0..count).map(make).collect();
            let mut snapshot = json!({"revision": next()});
            if name == "nodes" {
                snapshot["collection"] = json!({"kind": "list", "title": "t", "nodes": items});
            } else {
                snapshot[name] = json!(items);
            }
            let (reply, notes) = present(&mut shim, json!({"snapshot": snapshot}));
            if passes {
                assert_eq!(notes.len(), 1, "{name} at {count}: {}", reply.frame.raw);
            } else {
                refused_with(&reply, &notes, &format!("the limit is {limit}"));
            }
        }
    }
    // Exactly 256 KiB encoded passes; one byte more is refused.
    let target = 256 * 1024;
    let build = |labels: &[usize], revision: u64| {
        let nodes: Vec<Value> = labels
            .iter()
            .enumerate()
            .map(
                |(i, n)| json!({"id": format!("n{i}"), "state": "active", "label": "x".repeat(*n)}),
            )
            .collect();
        json!({"revision": revision, "collection": {"kind": "list", "title": "t", "nodes": nodes}})
    };
    let mut labels = vec![1usize; 256];
    let size = |labels: &[usize]| serde_json::to_string(&build(labels, 1000)).unwrap().len();
    let mut missing = target - size(&labels);
    for label in labels.iter_mut() {
        let add = missing.min(1023);
        *label += add;
        missing -= add;
    }
    assert_eq!(size(&labels), target);
    let (reply, notes) = present(&mut shim, json!({"snapshot": build(&labels, 1000)}));
    assert_eq!(notes.len(), 1, "{}", reply.frame.raw);
    let short = labels.iter().position(|n| *n < 1024).unwrap();
    labels[short] += 1;
    let (reply, notes) = present(&mut shim, json!({"snapshot": build(&labels, 1001)}));
    refused_with(&reply, &notes, "256 KiB");
    shim.shutdown();
}

#[test]
fn presentation_needs_the_manifest_declaration() {
    let mut shim = started(None);
    let (reply, notes) = present(&mut shim, json!({"snapshot": {"revision": 1}}));
    assert!(notes.is_empty());
    let (code, message) = error_of(&reply);
    assert_eq!(code, -32601);
    assert!(message.contains("presentation = true"), "{message}");
    shim.shutdown();
}

// ----- the showcase example ------------------------------------------------------

#[test]
fn showcase_charts_presents_and_unlocks_a_tool() {
    let dir = repo_root().join("examples").join("showcase");
    assert!(
        dir.join("showcase.wasm").is_file(),
        "examples/showcase/showcase.wasm is missing: run scripts/build-guests first"
    );
    let manifest = octet_hostsim::ManifestSpec::new("showcase", ApiVersion::V0_2)
        .description(
            "Charts as image artifacts, a presentation panel and a tool unlocked at run time",
        )
        .tools(&["chart", "unlock_stats"])
        .commands(&["charts"]);
    let mut shim = Shim::start(&dir, "showcase.wasm", manifest);
    let mut params =
        InitializeParams::new(&shim.manifest, &shim.manifest_path, &shim.workspace).to_json();
    params["contributes"]["presentation"] = json!(true);
    let result = expect_result(&shim.initialize_with(params)).clone();
    let features = &result["protocol"]["features"];
    assert!(
        features.as_array().unwrap().contains(&json!("artifacts")),
        "{result}"
    );

    let id = tool_call(&mut shim, "chart", json!({"values": [10, 200, 90]}), None);
    let mut png = Vec::new();
    let (reply, children) = serve(&mut shim, id, |frame| {
        png = base64::engine::general_purpose::STANDARD
            .decode(frame.params()["data"]["data"].as_str().unwrap())
            .unwrap();
        Answer::Result(json!({"artifact_id": "artifact_chart"}))
    });
    assert_eq!(children.len(), 1);
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.ends_with(b"IEND\xaeB`\x82"));
    let update = reply
        .before
        .iter()
        .find(|f| f.method() == Some("presentation/update"))
        .expect("a presentation snapshot before the result");
    assert_eq!(update.params()["parent_request_id"], id);
    assert_eq!(
        update.params()["snapshot"]["activities"][0]["references"][0],
        json!({"kind": "artifact", "id": "artifact_chart", "label": "Chart"})
    );
    assert_eq!(
        expect_result(&reply)["content"][1],
        json!({"type": "image", "artifact_id": "artifact_chart", "mime_type": "image/png", "alt": "bar chart"})
    );

    let id = tool_call(&mut shim, "unlock_stats", json!({}), None);
    let (reply, children) = serve(&mut shim, id, |frame| {
        assert_eq!(frame.params()["tools"][0]["name"], "chart_stats");
        Answer::Result(json!({"revision": 1, "tools": ["chart", "unlock_stats", "chart_stats"]}))
    });
    assert_eq!(children.len(), 1);
    assert_eq!(
        tool_text(&reply),
        "chart_stats is available from catalog revision 1"
    );
    let call = tool_call(&mut shim, "chart_stats", json!({}), Some(1));
    let reply = shim.reply(call);
    assert_eq!(
        expect_result(&reply)["structured_content"],
        json!({"min": 10, "max": 200, "mean": 100.0})
    );
    let call = tool_call(&mut shim, "chart_stats", json!({}), Some(0));
    assert_eq!(expect_error(&shim.reply(call)).code, -32601);
    shim.shutdown();
}
