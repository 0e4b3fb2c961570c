//! The error every handler may return, and how it maps to the protocol.

use std::fmt;

use crate::bindings::octet::extension::types as wit;

/// A handler's failure, as the shim will answer it.
///
/// Like `anyhow::Error` it deliberately does **not** implement
/// [`std::error::Error`], so that every `E: std::error::Error` converts into it
/// and `?` works on I/O, serde and other library errors. Such conversions
/// become [`Error::failed`] with the error's text, which is the right default:
/// for a tool the model reads that text as an error result; for any other
/// request the host gets `-32603 internal error`.
pub struct Error(wit::Error);

/// `Result<T, octet_guest::Error>`: what handlers return.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The arguments or parameters were not acceptable: answered `-32602`.
    ///
    /// The SDK returns this itself when tool arguments or a hook payload do
    /// not deserialise into the handler's type.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self(wit::Error::InvalidParams(message.into()))
    }

    /// The handler stopped because its request was cancelled: answered
    /// `-32800` with the host's cancellation reason.
    pub fn cancelled() -> Self {
        Self(wit::Error::Cancelled)
    }

    /// The handler failed. A tool call becomes a result with `is_error: true`
    /// carrying `message`; any other request is answered `-32603`.
    pub fn failed(message: impl Into<String>) -> Self {
        Self(wit::Error::Failed(message.into()))
    }

    /// An explicit JSON-RPC error. The shim passes `-32602`, `-32601`,
    /// `-32603`, `-32800` and `-32099..=-32000` through and turns any other
    /// code into `-32603`, so a guest cannot impersonate transport errors.
    /// `data`, when given, is any JSON value.
    pub fn rpc(code: i32, message: impl Into<String>, data: Option<serde_json::Value>) -> Self {
        Self(wit::Error::Rpc(wit::RpcError {
            code,
            message: message.into(),
            data: data.map(|value| value.to_string()),
        }))
    }

    /// Whether this error reports a cancellation (so a caller can stop
    /// instead of retrying or wrapping it).
    pub fn is_cancelled(&self) -> bool {
        matches!(self.0, wit::Error::Cancelled)
    }

    /// Takes over an error a host import returned, keeping its kind (the
    /// blanket `From` would flatten it to `failed`).
    pub(crate) fn from_wit(error: wit::Error) -> Self {
        Self(error)
    }

    /// The value handed back to the shim.
    pub(crate) fn into_wit(self) -> wit::Error {
        self.0
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(error: E) -> Self {
        Self::failed(error.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            wit::Error::InvalidParams(message) => write!(f, "invalid params: {message}"),
            wit::Error::Cancelled => f.write_str("request cancelled"),
            wit::Error::Failed(message) => f.write_str(message),
            wit::Error::Rpc(rpc) => write!(f, "JSON-RPC error {}: {}", rpc.code, rpc.message),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_errors_become_failed_with_their_text() {
        fn parse() -> Result<u32> {
            Ok("x".parse::<u32>()?)
        }
        let error = parse().unwrap_err().into_wit();
        assert_eq!(
            error,
            wit::Error::Failed("invalid digit found in string".into())
        );
    }

    #[test]
    fn rpc_data_crosses_as_json_text() {
        let error = Error::rpc(-32001, "busy", Some(serde_json::json!({"retry": true})));
        match error.into_wit() {
            wit::Error::Rpc(rpc) => assert_eq!(rpc.data.as_deref(), Some(r#"{"retry":true}"#)),
            other => panic!("unexpected {other:?}"),
        }
    }
}
