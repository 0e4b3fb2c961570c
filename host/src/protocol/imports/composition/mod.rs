//! Tool composition (API 0.4, `tool_composition_v1`): a guest serving a
//! model `tool/call` calls the session's other tools through octet
//! (`composition/call`), reads what it may call and the session's store
//! (`composition/context`), and commits store changes (`composition/store`).
//! docs/api-0.4.md#v04-composition.
//!
//! Every bound octet enforces is enforced here first, so a guest's request
//! that octet would refuse is refused before anything is written: at most
//! 256 calls per tool call, arguments of at most 128 KiB nested 32 levels,
//! one store commit per tool call with at most 4,096 keys of 1,024 bytes
//! and values of 256 KiB (1 MiB together), and at most 256 sidecar files
//! per tool call, each checked by [`super::sidecar`]. The 30 s octet allows
//! per tool call is the tool call's own deadline (29 s in the shim), and
//! at most [`MAX_IN_FLIGHT`] composition calls of one tool call are in
//! flight at once, so never more than octet's four concurrent reads.
//!
//! A call started with `start-call` asks for octet's partial results
//! (`updates: true`); [`updates`] routes them to it.

pub(crate) mod sidecar;
pub(crate) mod state;
pub(crate) mod updates;

pub use state::MAX_CALLS;

use super::gate::{self, bound, refused};
use crate::protocol::deadlines::Kind;
use crate::protocol::handshake::feature::Feature;
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::runtime::types::{CompositionContext, CompositionLimits, GuestError};
use crate::wire::error_code::ErrorCode;
use serde_json::{Map, Value, json};
use sidecar::Sidecar;
use std::collections::BTreeSet;
use std::sync::Arc;

/// The negotiated feature.
pub const FEATURE: Feature = Feature::ToolComposition;
/// Arguments of one call: bytes and nesting.
pub const MAX_ARGUMENT_BYTES: usize = 128 * 1024;
pub const MAX_ARGUMENT_DEPTH: usize = 32;
/// One store commit: keys, bytes per key, bytes per value, value bytes
/// together.
pub const MAX_STORE_KEYS: usize = 4096;
pub const MAX_KEY_BYTES: usize = 1024;
pub const MAX_VALUE_BYTES: usize = 256 * 1024;
pub const MAX_STORE_BYTES: usize = 1 << 20;
/// Most sidecar files read per tool call.
pub const MAX_SIDECARS: u32 = 256;

/// An answer from octet that does not have the documented shape.
pub(super) fn invalid(method: &str, why: impl std::fmt::Display) -> GuestError {
    GuestError::Failed(format!("invalid {method} response: {why}"))
}

/// Checks a call's arguments and returns them parsed.
pub fn check_arguments(arguments: &str) -> Result<Value, GuestError> {
    if arguments.len() > MAX_ARGUMENT_BYTES {
        return Err(bound(format!(
            "composition call arguments have {} bytes; the limit is 128 KiB",
            arguments.len()
        )));
    }
    let value = crate::protocol::guest_json::parse_within(
        arguments,
        "the composition call arguments",
        MAX_ARGUMENT_DEPTH,
    )
    .map_err(|err| bound(err.to_string()))?;
    if !value.is_object() {
        return Err(bound("composition call arguments must be a JSON object"));
    }
    Ok(value)
}

/// Checks one store commit and returns its `set` object and `delete` list.
pub fn check_store(
    set: Vec<(String, String)>,
    delete: Vec<String>,
) -> Result<(Map<String, Value>, Vec<String>), GuestError> {
    if set.len() + delete.len() > MAX_STORE_KEYS {
        return Err(bound(format!(
            "a composition store commit changes {} keys; the limit is {MAX_STORE_KEYS}",
            set.len() + delete.len()
        )));
    }
    let mut seen = BTreeSet::new();
    let mut total = 0;
    let mut object = Map::new();
    for key in set.iter().map(|(k, _)| k).chain(delete.iter()) {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(bound(format!(
                "a composition store key has {} bytes; keys have 1 to {MAX_KEY_BYTES}",
                key.len()
            )));
        }
        if !seen.insert(key.as_str()) {
            return Err(bound(format!(
                "composition store key {key:?} appears twice in one commit"
            )));
        }
    }
    for (key, text) in set {
        if text.len() > MAX_VALUE_BYTES {
            return Err(bound(format!(
                "the composition store value of {key:?} has {} bytes; the limit is 256 KiB",
                text.len()
            )));
        }
        total += text.len();
        let value =
            crate::protocol::guest_json::parse(&text, &format!("the store value of {key:?}"))
                .map_err(|err| bound(err.to_string()))?;
        object.insert(key, value);
    }
    if total > MAX_STORE_BYTES {
        return Err(bound(format!(
            "a composition store commit holds {total} bytes of values; the limit is 1 MiB"
        )));
    }
    Ok((object, delete))
}

/// The tool call a composition request runs under.
pub(super) fn parent_of(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    what: &str,
) -> Result<Arc<RequestState>, GuestError> {
    gate::feature(session, FEATURE, what)?;
    scope
        .filter(|parent| parent.kind == Kind::Tool)
        .ok_or_else(|| {
            refused(
                ErrorCode::InvalidParams,
                format!("{what} is only available while serving a model tool call"),
            )
        })
}

async fn send(
    session: &Session,
    parent: &RequestState,
    method: &str,
    params: Value,
) -> Result<Map<String, Value>, GuestError> {
    send_with(session, method, params, &parent.cancel, |_| ()).await
}

/// A composition request given up when `cancel` fires; `issued` sees
/// its child id before it is written.
pub(super) async fn send_with(
    session: &Session,
    method: &str,
    params: Value,
    cancel: &crate::cancel::CancelToken,
    issued: impl FnOnce(&crate::wire::message::ChildId),
) -> Result<Map<String, Value>, GuestError> {
    let reply = session
        .child_requests
        .call_with(session.writer(), true, method, params, cancel, issued)
        .await
        .map_err(|error| gate::child_error(method, error))?;
    match reply {
        Value::Object(map) => Ok(map),
        other => Err(invalid(method, format!("expected an object, got {other}"))),
    }
}

/// Replaces the sidecar `file_key` in `reply` by its content under
/// `value_key`, counting it against the tool call's budget.
async fn inline_sidecar(
    session: &Session,
    parent: &Arc<RequestState>,
    method: &str,
    reply: &mut Map<String, Value>,
    file_key: &str,
    value_key: &str,
) -> Result<(), GuestError> {
    let Some(spec) = reply.remove(file_key) else {
        return Ok(());
    };
    let over = session.services.composition.with(parent, |used| {
        used.sidecars += 1;
        used.sidecars > MAX_SIDECARS
    });
    if over {
        return Err(invalid(
            method,
            format!("more than {MAX_SIDECARS} sidecar files in one tool call"),
        ));
    }
    let file = Sidecar::from_json(&spec).map_err(|why| invalid(method, why))?;
    let scratch = sidecar::scratch_dir().ok_or_else(|| {
        invalid(
            method,
            "a sidecar file, but OCTET_EXTENSION_SCRATCH is not a directory",
        )
    })?;
    let value = tokio::task::spawn_blocking(move || file.read_json(&scratch))
        .await
        .map_err(|err| invalid(method, format!("the sidecar read failed: {err}")))?
        .map_err(|why| invalid(method, why))?;
    reply.insert(value_key.to_owned(), value);
    Ok(())
}

/// `composition.context`.
pub(crate) async fn context(
    session: &Session,
    scope: Option<Arc<RequestState>>,
) -> Result<CompositionContext, GuestError> {
    const METHOD: &str = "composition/context";
    let parent = parent_of(session, scope, "composition.context")?;
    let params = json!({ "parent_request_id": parent.id });
    let mut reply = send(session, &parent, METHOD, params).await?;
    inline_sidecar(
        session,
        &parent,
        METHOD,
        &mut reply,
        "context_file",
        "context",
    )
    .await?;
    // From a sidecar the whole context is the file's content.
    let reply = match reply.remove("context") {
        Some(Value::Object(context)) => context,
        Some(_) => return Err(invalid(METHOD, "the context file is not an object")),
        None => reply,
    };
    let tools = reply
        .get("tools")
        .filter(|t| t.is_array())
        .ok_or_else(|| invalid(METHOD, "tools is not an array"))?;
    let store = reply
        .get("store")
        .filter(|s| s.is_object())
        .ok_or_else(|| invalid(METHOD, "store is not an object"))?;
    let limits = reply.get("limits").cloned().unwrap_or_else(|| json!({}));
    let number = |key: &str, default: u64| match limits.get(key) {
        None => Ok(default),
        Some(value) => value
            .as_u64()
            .ok_or_else(|| invalid(METHOD, format!("limits.{key} is not an unsigned integer"))),
    };
    Ok(CompositionContext {
        tools: tools.to_string(),
        store: store.to_string(),
        limits: CompositionLimits {
            timeout_ms: number("timeout_ms", 30_000)?,
            max_calls: u32::try_from(number("max_calls", u64::from(MAX_CALLS))?)
                .unwrap_or(MAX_CALLS),
        },
    })
}

/// The params of a `composition/call` of `parent`, every bound checked
/// and the call counted ([`Parents::begin`]: the caller ends it).
pub(super) fn call_params(
    session: &Session,
    parent: &Arc<RequestState>,
    name: &str,
    arguments: &str,
    full_outcome: bool,
) -> Result<Value, GuestError> {
    if !crate::protocol::imports::tools_catalog::definitions::is_identifier(name) {
        return Err(bound(format!(
            "composition call tool name {name:?} is not an identifier (1-64 bytes of [A-Za-z_][A-Za-z0-9_.-]*)"
        )));
    }
    let arguments = check_arguments(arguments)?;
    session.services.composition.begin(parent)?;
    let mut params = json!({
        "parent_request_id": parent.id,
        "name": name,
        "arguments": arguments,
    });
    if full_outcome {
        params["full_outcome"] = json!(true);
    }
    Ok(params)
}

/// What the guest receives of a `composition/call` reply: the value,
/// or with `full_outcome` the whole outcome, sidecar inlined.
pub(super) async fn call_answer(
    session: &Session,
    parent: &Arc<RequestState>,
    mut reply: Map<String, Value>,
    full_outcome: bool,
) -> Result<String, GuestError> {
    const METHOD: &str = "composition/call";
    inline_sidecar(session, parent, METHOD, &mut reply, "value_file", "value").await?;
    if full_outcome {
        return Ok(Value::Object(reply).to_string());
    }
    reply
        .get("value")
        .map(Value::to_string)
        .ok_or_else(|| invalid(METHOD, "no value"))
}

/// `composition.call`.
pub(crate) async fn call(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    name: String,
    arguments: String,
    full_outcome: bool,
) -> Result<String, GuestError> {
    const METHOD: &str = "composition/call";
    let parent = parent_of(session, scope, "composition.call")?;
    let params = call_params(session, &parent, &name, &arguments, full_outcome)?;
    let reply = send(session, &parent, METHOD, params).await;
    session.services.composition.end(&parent);
    call_answer(session, &parent, reply?, full_outcome).await
}

/// `composition.store`.
pub(crate) async fn store(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    set: Vec<(String, String)>,
    delete: Vec<String>,
) -> Result<(), GuestError> {
    const METHOD: &str = "composition/store";
    let parent = parent_of(session, scope, "composition.store")?;
    let (set, delete) = check_store(set, delete)?;
    if session
        .services
        .composition
        .with(&parent, |used| used.stored)
    {
        return Err(bound(
            "a tool call may commit to the composition store once; this one already did",
        ));
    }
    let params = json!({ "parent_request_id": parent.id, "set": set, "delete": delete });
    send(session, &parent, METHOD, params).await?;
    session
        .services
        .composition
        .with(&parent, |used| used.stored = true);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(key: &str, value: &str) -> (String, String) {
        (key.to_owned(), value.to_owned())
    }

    #[test]
    fn arguments_are_objects_within_bounds() {
        assert!(check_arguments("{\"a\":1}").is_ok());
        assert!(check_arguments("[1]").is_err());
        let deep = format!("{}1{}", "{\"a\":".repeat(33), "}".repeat(33));
        assert!(check_arguments(&deep).is_err());
        let at_32 = format!("{}1{}", "{\"a\":".repeat(32), "}".repeat(32));
        assert!(check_arguments(&at_32).is_ok());
        let big = format!("{{\"a\":\"{}\"}}", "x".repeat(MAX_ARGUMENT_BYTES));
        assert!(
            matches!(check_arguments(&big), Err(GuestError::InvalidParams(m)) if m.contains("128 KiB"))
        );
    }

    #[test]
    fn store_commits_within_bounds() {
        let (set, delete) = check_store(vec![pair("k", "{\"v\":1}")], vec!["old".into()]).unwrap();
        assert_eq!(Value::Object(set), json!({"k": {"v": 1}}));
        assert_eq!(delete, ["old"]);
        assert!(
            check_store(vec![pair("k", "1")], vec!["k".into()]).is_err(),
            "twice"
        );
        assert!(check_store(vec![pair(&"k".repeat(1025), "1")], vec![]).is_err());
        assert!(check_store(vec![pair("", "1")], vec![]).is_err());
        let many: Vec<String> = (0..4097).map(|i| format!("k{i}")).collect();
        assert!(check_store(vec![], many).is_err());
        let value = format!("\"{}\"", "x".repeat(MAX_VALUE_BYTES));
        assert!(check_store(vec![pair("k", &value)], vec![]).is_err());
        let fifth = format!("\"{}\"", "x".repeat(MAX_VALUE_BYTES - 8));
        let five: Vec<(String, String)> = (0..5).map(|i| pair(&format!("k{i}"), &fifth)).collect();
        assert!(
            matches!(check_store(five, vec![]), Err(GuestError::InvalidParams(m)) if m.contains("1 MiB"))
        );
    }
}
