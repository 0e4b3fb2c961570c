//! The checks every guest import shares: initialize answered, the feature
//! negotiated, an active parent, and how a refusal or a failed child
//! request reaches the guest. One wording each, so a guest sees the same
//! sentence whichever service refused it.

use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::handshake::feature::Feature;
use crate::protocol::imports::child_requests::ChildError;
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::{Session, Setup};
use crate::runtime::types::{GuestError, GuestRpcError};
use crate::wire::error_code::ErrorCode;
use std::sync::Arc;

/// A refusal with one of the shim's own codes.
pub fn refused(code: ErrorCode, message: impl Into<String>) -> GuestError {
    GuestError::Rpc(GuestRpcError {
        code: code.guest_code(),
        message: message.into(),
        data: None,
    })
}

/// A guest argument that breaks a bound (`invalid-params` to the guest).
pub fn bound(message: impl Into<String>) -> GuestError {
    GuestError::InvalidParams(message.into())
}

/// The negotiated setup, once initialize has been answered.
pub fn ready<'s>(session: &'s Session, what: &str) -> Result<&'s Setup, GuestError> {
    match session.setup() {
        Some(setup) if session.is_ready() => Ok(setup),
        _ => Err(refused(
            ErrorCode::ServerError,
            format!("{what} is not available before initialize has been answered"),
        )),
    }
}

/// Initialize answered and `feature` negotiated.
pub fn feature(session: &Session, feature: Feature, what: &str) -> Result<(), GuestError> {
    if !ready(session, what)?.has(feature) {
        let versions = if feature.allowed_on(ApiVersion::V0_2) {
            "API 0.2 or 0.4"
        } else {
            "API 0.4"
        };
        // The host offers `secrets` only to a manifest that lists some.
        let offered = if feature == Feature::Secrets {
            "the host offers it when [capabilities] secrets in extension.toml lists the names"
        } else {
            "the host must offer it"
        };
        return Err(refused(
            ErrorCode::MethodNotFound,
            format!(
                "{what} needs {versions} with the negotiated `{feature}` feature (declare it in the guest's features; {offered})"
            ),
        ));
    }
    Ok(())
}

/// The request a service runs under: a model tool call or a declared
/// command (docs/protocol.md#active-parent).
pub fn active_parent(
    scope: Option<Arc<RequestState>>,
    what: &str,
) -> Result<Arc<RequestState>, GuestError> {
    scope.filter(|s| s.active_parent).ok_or_else(|| {
        refused(
            ErrorCode::InvalidParams,
            format!("{what} is only available while serving a tool call or a command"),
        )
    })
}

/// A child request that did not succeed, as the guest sees it: the host's
/// own error, a cancellation, or why it was never sent.
pub fn child_error(method: &str, error: ChildError) -> GuestError {
    match error {
        ChildError::Cancelled => GuestError::Cancelled,
        ChildError::Rpc(error) => GuestError::Rpc(GuestRpcError {
            code: i32::try_from(error.code).unwrap_or(ErrorCode::InternalError.guest_code()),
            message: error.message,
            data: error.data.map(|d| d.to_string()),
        }),
        ChildError::Refused(reason) => GuestError::Failed(format!("{method} not sent: {reason}")),
    }
}
