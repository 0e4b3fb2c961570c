//! `presentation.update` (docs/services.md#presentation): a declared
//! presentation, a checked snapshot with a strictly increasing revision,
//! and an owner the host issued or the parent request still in flight.

use super::gate::{bound, refused};
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::runtime::types::{GuestError, ResourceOwner};
use crate::wire::error_code::ErrorCode;
use serde_json::json;
use std::sync::Arc;

/// Longest owner `session_id` (docs/services.md#presentation-wire).
pub const MAX_OWNER_SESSION_ID: usize = 512;

/// `presentation.update` (docs/services.md#presentation).
pub async fn update(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    snapshot: String,
    owner: Option<ResourceOwner>,
) -> Result<(), GuestError> {
    let Some(setup) = session.setup().filter(|_| session.is_ready()) else {
        return Err(refused(
            ErrorCode::ServerError,
            "presentation.update is not available before initialize has been answered",
        ));
    };
    if !setup.api.negotiates() {
        return Err(refused(
            ErrorCode::MethodNotFound,
            "presentation.update needs API 0.2 or 0.4",
        ));
    }
    if !setup.contributes.presentation {
        return Err(refused(
            ErrorCode::MethodNotFound,
            "presentation is not declared: add `presentation = true` under [contributes] in extension.toml",
        ));
    }
    let value = crate::protocol::guest_json::parse(&snapshot, "the snapshot")
        .map_err(|err| bound(err.to_string()))?;
    let commands = setup.contributes.commands.clone().unwrap_or_default();
    let revision = crate::protocol::imports::presentation_schema::check_snapshot(&value, &commands)
        .map_err(bound)?;
    let mut params = json!({ "snapshot": value });
    if let Some(owner) = &owner {
        if owner.session_id.trim().is_empty()
            || owner.session_id.len() > MAX_OWNER_SESSION_ID
            || owner.session_id.chars().any(char::is_control)
            || owner.extension_instance_id.trim().is_empty()
            || owner.process_generation < 1
        {
            return Err(bound(
                "the explicit owner must have a non-blank session_id of at most 512 bytes without control characters, a non-blank extension_instance_id and a generation of at least 1",
            ));
        }
        if !session.services.issued(owner) {
            return Err(bound(
                "the explicit owner was never issued to this process by the host (use the resource owner of a request context)",
            ));
        }
        params["resource_owner"] = json!({
            "session_id": owner.session_id,
            "extension_instance_id": owner.extension_instance_id,
            "process_generation": owner.process_generation,
        });
    }
    // Charged to the request being served, whichever owner it names.
    let charged = scope.clone();
    // The parent must still be in flight when the host reads the frame:
    // hold its terminal claim while queueing (like progress).
    let parent = if owner.is_none() { scope } else { None };
    let settled_guard = match &parent {
        Some(request) => {
            let guard = request.settled.lock().await;
            if *guard {
                return Err(if request.cancel.is_cancelled() {
                    GuestError::Cancelled
                } else {
                    refused(ErrorCode::ServerError, "request has already settled")
                });
            }
            params["parent_request_id"] = json!(request.id);
            Some(guard)
        }
        None => None,
    };
    {
        let mut last = session
            .services
            .presentation_revision
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(previous) = *last
            && revision <= previous
        {
            return Err(bound(format!(
                "snapshot revision {revision} does not increase (the last one sent was {previous})"
            )));
        }
        *last = Some(revision);
    }
    let sent = session
        .notify_guest("presentation/update", &params, charged.as_ref())
        .await;
    drop(settled_guard);
    sent
}
