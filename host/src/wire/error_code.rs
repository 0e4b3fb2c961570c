//! The JSON-RPC error codes the shim itself answers with
//! (docs/protocol.md#error-codes), by name. A guest may answer with any
//! code of its own; those travel as plain numbers and never pass through
//! here.

/// An error code of the shim's own answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// -32600: the frame is not a request the shim can serve.
    InvalidRequest,
    /// -32601: no such method, or a service whose feature was not
    /// negotiated.
    MethodNotFound,
    /// -32602: params (or a guest's arguments to a service) break a rule.
    InvalidParams,
    /// -32603: the guest failed or answered something the wire cannot carry.
    InternalError,
    /// -32800: the request was cancelled.
    RequestCancelled,
    /// -32000: a server-side refusal (not ready, draining, a deadline, a
    /// bound of the shim's own).
    ServerError,
}

impl ErrorCode {
    /// The number on the wire.
    pub const fn code(self) -> i64 {
        match self {
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::InternalError => -32603,
            ErrorCode::RequestCancelled => -32800,
            ErrorCode::ServerError => -32000,
        }
    }

    /// The number as the guest-facing WIT error carries it.
    pub const fn guest_code(self) -> i32 {
        self.code() as i32
    }

    /// The code a number names, if it is one of the shim's.
    pub fn from_code(code: i64) -> Option<ErrorCode> {
        [
            ErrorCode::InvalidRequest,
            ErrorCode::MethodNotFound,
            ErrorCode::InvalidParams,
            ErrorCode::InternalError,
            ErrorCode::RequestCancelled,
            ErrorCode::ServerError,
        ]
        .into_iter()
        .find(|known| known.code() == code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for code in [-32600, -32601, -32602, -32603, -32800, -32000] {
            let named = ErrorCode::from_code(code).unwrap();
            assert_eq!(named.code(), code);
            assert_eq!(i64::from(named.guest_code()), code);
        }
        assert_eq!(ErrorCode::from_code(-32004), None);
    }
}
