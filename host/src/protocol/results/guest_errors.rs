//! The guest's own errors as JSON-RPC errors: the one conversion from the
//! WIT `guest-error` to what the shim writes (the SDK's mapping). A guest
//! may answer only with request-level codes, so it can never imitate a
//! transport-level error, and its failure text becomes the message octet
//! shows (capped like the protocol's, logged whole).

use super::encode;
use crate::cancel::CancelToken;
use crate::log::Level;
use crate::runtime::types::GuestError;
use crate::wire::error_code::ErrorCode;
use crate::wire::message::RpcError;

/// A guest answer the wire cannot carry, as the SDK answers it (`-32603
/// invalid handler result: ...`), logged for the author.
pub fn invalid_result(message: &str) -> RpcError {
    crate::guest_log!(Level::Warning, "the guest returned an invalid result", "error" => message);
    RpcError::internal(format!("invalid handler result: {message}"))
}

/// The lowest code of JSON-RPC 2.0's range for implementation-defined
/// server errors, which runs up to [`ErrorCode::ServerError`].
const LOWEST_SERVER_ERROR: i64 = -32099;

/// JSON-RPC codes a guest may answer with; anything else becomes
/// [`ErrorCode::InternalError`] so a guest can never imitate
/// transport-level errors.
fn allowed_code(code: i32) -> bool {
    let code = i64::from(code);
    matches!(
        ErrorCode::from_code(code),
        Some(
            ErrorCode::InvalidParams
                | ErrorCode::MethodNotFound
                | ErrorCode::InternalError
                | ErrorCode::RequestCancelled
        )
    ) || (LOWEST_SERVER_ERROR..=ErrorCode::ServerError.code()).contains(&code)
}

/// A guest's own error as a JSON-RPC error (the SDK's mapping).
pub fn guest_error(error: GuestError, cancel: &CancelToken) -> RpcError {
    match error {
        GuestError::InvalidParams(message) => RpcError::invalid_params(message),
        GuestError::Cancelled => {
            RpcError::cancelled(&cancel.reason().unwrap_or_else(|| "cancelled".into()))
        }
        GuestError::Failed(message) => {
            // The guest said why it failed: octet shows the message, so it
            // is the answer (a guest that wants octet's SDK's bare
            // "internal error", as the Python SDK does, answers that as an
            // RPC error itself). Logged too, whole, for the author.
            crate::guest_log!(Level::Error, "request handler failed", "error" => message.clone());
            RpcError::internal(failure_message(&message))
        }
        GuestError::Rpc(error) => {
            let code = if allowed_code(error.code) {
                i64::from(error.code)
            } else {
                ErrorCode::InternalError.code()
            };
            let mut rpc = RpcError::new(code, error.message);
            if let Some(data) = error.data {
                match encode::error_data(&data) {
                    Ok(data) => rpc = rpc.with_data(data),
                    Err(err) => return invalid_result(&err.0),
                }
            }
            rpc
        }
    }
}

/// A guest's failure text as a JSON-RPC error message, never blank
/// (`RpcError` caps its length as the protocol does; the log keeps it all).
fn failure_message(message: &str) -> String {
    match message.trim() {
        "" => "internal error".to_owned(),
        text => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::allowed_code;
    use crate::wire::error_code::ErrorCode;

    #[test]
    fn a_guest_may_answer_only_request_level_codes() {
        for code in [-32602, -32601, -32603, -32800, -32000, -32050, -32099] {
            assert!(allowed_code(code), "{code}");
        }
        for code in [-32600, -32700, -32100, -31999, -32801, 0, 1, i32::MIN] {
            assert!(!allowed_code(code), "{code}");
        }
    }

    #[test]
    fn the_runtime_refuses_with_the_wire_server_error() {
        assert_eq!(
            crate::runtime::types::SERVER_ERROR,
            ErrorCode::ServerError.guest_code()
        );
    }
}
