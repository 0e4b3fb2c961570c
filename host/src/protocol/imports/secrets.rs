//! `secrets.get` (docs/services.md#secrets): only names the manifest
//! declares, only under an active parent, and only values within the bound.

use super::gate::{self, bound};
use crate::protocol::imports::tools_catalog::definitions;
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::runtime::types::GuestError;
use serde_json::{Value, json};
use std::sync::Arc;

/// Longest secret value the shim accepts from the host (docs/services.md#secrets).
pub const MAX_SECRET_VALUE: usize = 64 * 1024;
/// Longest secret name (docs/services.md#secrets).
pub const MAX_SECRET_NAME: usize = 64;
/// `secrets.get` (docs/services.md#secrets).
pub async fn get(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    name: String,
) -> Result<String, GuestError> {
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::Secrets,
        "secrets.get",
    )?;
    let parent = gate::active_parent(scope, "secrets.get")?;
    if name.len() > MAX_SECRET_NAME || !definitions::is_identifier(&name) {
        return Err(bound(format!(
            "secret name {name:?} is not a valid name (1-{MAX_SECRET_NAME} bytes of [A-Za-z_][A-Za-z0-9_.-]*)"
        )));
    }
    let declared = session
        .services
        .secrets
        .get()
        .is_some_and(|names| names.contains(&name));
    if !declared {
        return Err(bound(format!(
            "secret {name:?} is not declared by this extension: add it to `secrets` under [capabilities] in extension.toml"
        )));
    }
    let reply = session
        .child_requests
        .call(
            session.writer(),
            true,
            "secret/get",
            json!({ "parent_request_id": parent.id, "name": name }),
            &parent.cancel,
        )
        .await
        .map_err(|error| gate::child_error("secret/get", error))?;
    match reply {
        Value::Object(map) if map.len() == 1 => match map.get("value") {
            Some(Value::String(value)) if value.len() <= MAX_SECRET_VALUE => Ok(value.clone()),
            Some(Value::String(_)) => Err(GuestError::Failed(format!(
                "secret/get response exceeds the {MAX_SECRET_VALUE} bytes (64 KiB) bound"
            ))),
            _ => Err(GuestError::Failed(
                "invalid secret/get response (expected {\"value\": string})".into(),
            )),
        },
        _ => Err(GuestError::Failed(
            "invalid secret/get response (expected {\"value\": string})".into(),
        )),
    }
}
