//! `policy.evaluate` (docs/services.md#policy): the intent checked and
//! bounded in the host's canonical form, approval tokens only with the
//! negotiated `approvals` feature, and the verdict checked on the way back.

use super::gate::{self, bound, refused};
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::runtime::types::{Decision, GuestError, Intent, Verdict};
use crate::wire::error_code::ErrorCode;
use serde_json::{Value, json};
use std::sync::Arc;

/// Longest canonical policy intent (docs/services.md#policy).
pub const MAX_INTENT_BYTES: usize = 32 * 1024;

/// `value` with every object's keys sorted, recursively (the host's
/// canonical intent form, docs/services.md#policy).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            let mut out = serde_json::Map::new();
            for key in keys {
                out.insert(key.clone(), canonical(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Whether `token` is an approval token: exactly 64 lowercase hex
/// characters (docs/services.md#policy).
pub fn is_approval_token(token: &str) -> bool {
    token.len() == 64
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The wire intent for `intent`, checked like the host (failures there
/// are fatal, docs/services.md#policy).
pub fn intent_json(intent: &Intent) -> Result<Value, GuestError> {
    if intent.kind.trim().is_empty() {
        return Err(bound("policy intent kind must not be blank"));
    }
    if intent.operation.trim().is_empty() {
        return Err(bound("policy intent operation must not be blank"));
    }
    let target = crate::protocol::guest_json::parse(&intent.target, "the policy intent target")
        .map_err(|err| bound(err.to_string()))?;
    if !target.is_object() {
        return Err(bound("policy intent target must be a JSON object"));
    }
    let mut object = json!({
        "kind": intent.kind,
        "operation": intent.operation,
        "target": target,
        "data_classes": intent.data_classes,
    });
    if intent.read_only.is_some() || intent.destructive.is_some() {
        let mut hints = serde_json::Map::new();
        if let Some(read_only) = intent.read_only {
            hints.insert("read_only".into(), json!(read_only));
        }
        if let Some(destructive) = intent.destructive {
            hints.insert("destructive".into(), json!(destructive));
        }
        object["adapter_hints"] = Value::Object(hints);
    }
    let bytes = serde_json::to_string(&canonical(&object))
        .map(|s| s.len())
        .unwrap_or(usize::MAX);
    if bytes > MAX_INTENT_BYTES {
        return Err(bound(format!(
            "the canonical policy intent is {bytes} bytes; the limit is {MAX_INTENT_BYTES} bytes (32 KiB)"
        )));
    }
    Ok(object)
}

/// `policy.evaluate` (docs/services.md#policy).
pub async fn evaluate(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    intent: Intent,
    approval_token: Option<String>,
) -> Result<Verdict, GuestError> {
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::PolicyIntents,
        "policy.evaluate",
    )?;
    let parent = gate::active_parent(scope, "policy.evaluate")?;
    let approvals = session
        .setup()
        .is_some_and(|s| s.has(crate::protocol::handshake::feature::Feature::Approvals));
    let intent = intent_json(&intent)?;
    let mut params = json!({ "parent_request_id": parent.id, "intent": intent });
    if let Some(token) = approval_token {
        if !approvals {
            return Err(refused(
                ErrorCode::MethodNotFound,
                "an approval token needs the negotiated `approvals` feature (declare it in the guest's features; the host must offer it)",
            ));
        }
        if !is_approval_token(&token) {
            return Err(bound(
                "an approval token is exactly 64 lowercase hex characters",
            ));
        }
        params["approval_token"] = json!(token);
    }
    let reply = session
        .child_requests
        .call(
            session.writer(),
            true,
            "policy/evaluate",
            params,
            &parent.cancel,
        )
        .await
        .map_err(|error| gate::child_error("policy/evaluate", error))?;
    let invalid =
        |why: &str| GuestError::Failed(format!("invalid policy/evaluate response: {why}"));
    let decision = match reply.get("decision").and_then(Value::as_str) {
        Some("allow") => Decision::Allow,
        Some("ask") => Decision::Ask,
        Some("deny") => Decision::Deny,
        _ => return Err(invalid("decision must be allow, ask or deny")),
    };
    let approval_token = match reply.get("approval_token") {
        None | Some(Value::Null) => None,
        Some(Value::String(token)) => {
            if decision != Decision::Ask || !approvals || !is_approval_token(token) {
                return Err(invalid(
                    "an approval token is only valid with `ask`, negotiated approvals and 64 lowercase hex characters",
                ));
            }
            Some(token.clone())
        }
        Some(_) => return Err(invalid("approval_token must be a string or null")),
    };
    Ok(Verdict {
        decision,
        approval_token,
    })
}
