//! JSON-RPC 2.0 messages as octet's legacy wire uses them.
//!
//! Inbound lines are classified into [`Inbound`] or a [`Rejection`]; a
//! rejection carries a numeric id only when answering is safe. Anything else
//! is logged, never answered: octet treats a response whose id is null or a
//! string as fatal (docs/protocol.md#fatal), so the generic JSON-RPC habit of
//! answering unparseable input with `id: null` would kill the extension.

pub use super::error_code::ErrorCode;
pub use super::params::Params;
use serde::Serialize;
use serde_json::{Map, Value};

/// JSON-RPC error codes used on this wire (docs/protocol.md#error-codes),
/// as numbers for `RpcError::code`; [`ErrorCode`] names them.
pub mod code {
    use super::super::error_code::ErrorCode;
    pub const INVALID_REQUEST: i64 = ErrorCode::InvalidRequest.code();
    pub const METHOD_NOT_FOUND: i64 = ErrorCode::MethodNotFound.code();
    pub const INVALID_PARAMS: i64 = ErrorCode::InvalidParams.code();
    pub const INTERNAL_ERROR: i64 = ErrorCode::InternalError.code();
    pub const REQUEST_CANCELLED: i64 = ErrorCode::RequestCancelled.code();
    pub const SERVER_ERROR: i64 = ErrorCode::ServerError.code();
}

/// Error messages are capped like the Rust SDK's (docs/protocol.md#error-codes).
const MAX_ERROR_MESSAGE_BYTES: usize = 4096;

/// An `error` member: `{code, message, data?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        let mut message = message.into();
        if message.len() > MAX_ERROR_MESSAGE_BYTES {
            let mut end = MAX_ERROR_MESSAGE_BYTES;
            while !message.is_char_boundary(end) {
                end -= 1;
            }
            message.truncate(end);
        }
        Self {
            code,
            message,
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    pub fn method_not_found(message: impl Into<String>) -> Self {
        Self::new(code::METHOD_NOT_FOUND, message)
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }

    pub fn server(message: impl Into<String>) -> Self {
        Self::new(code::SERVER_ERROR, message)
    }

    /// The SDK's cancellation answer: `request cancelled` with the reason.
    pub fn cancelled(reason: &str) -> Self {
        Self::new(code::REQUEST_CANCELLED, "request cancelled")
            .with_data(serde_json::json!({ "reason": reason }))
    }
}

/// Id of a request the shim sends to the host (a "child request").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum ChildId {
    Number(u64),
    Text(String),
}

impl std::fmt::Display for ChildId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildId::Number(n) => write!(f, "{n}"),
            ChildId::Text(text) => f.write_str(text),
        }
    }
}

/// A well-formed message from the host.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// A host request; host ids are always unsigned integers.
    Request {
        id: u64,
        method: String,
        params: Params,
        /// The frame's length without its line terminator (usage receipts);
        /// set by [`parse_line`], 0 from [`classify`].
        bytes: usize,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The host's answer to one of our child requests.
    Response {
        id: ChildId,
        outcome: Result<Value, RpcError>,
    },
}

/// Input that is not a usable message.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    /// Answerable: the line carried a numeric id we can echo safely.
    Answer { id: u64, error: RpcError },
    /// Not answerable: only a stderr log, with why.
    Log { reason: String },
}

/// Parses one line. Invalid UTF-8, invalid JSON and JSON nested deeper than
/// serde_json's recursion limit (128) are all "not JSON" here. A plain
/// request is read in place ([`super::in_place`]), keeping the line for its
/// params; anything else is parsed into a value and sorted by [`classify`]
/// (one pass: notifications and octet's answers to child requests, which
/// may be large, are not scanned twice).
pub fn parse_line(line: impl Into<Vec<u8>>) -> Result<Inbound, Rejection> {
    let line = line.into();
    let bytes = line.len();
    let text = String::from_utf8(line).map_err(|err| Rejection::Log {
        reason: format!("invalid protocol input: not UTF-8 ({})", err.utf8_error()),
    })?;
    let not_json = |err: serde_json::Error| Rejection::Log {
        reason: format!("invalid protocol input: not JSON ({err})"),
    };
    // The envelope read skips what it does not take without checking it
    // (iteratively: safe on any input), so a line it takes is checked
    // before it is used; any other line is checked by its `Value` parse.
    if let Some((id, method, span)) = super::in_place::request(&text) {
        super::in_place::check(&text).map_err(not_json)?;
        let method = method.into_owned();
        return Ok(Inbound::Request {
            id,
            method,
            params: Params::Text { line: text, span },
            bytes,
        });
    }
    let value: Value = serde_json::from_str(&text).map_err(not_json)?;
    let mut message = classify(value)?;
    if let Inbound::Request { bytes: size, .. } = &mut message {
        *size = bytes;
    }
    Ok(message)
}

/// Sorts a parsed JSON value into a message (docs/protocol.md#bad-input).
pub fn classify(value: Value) -> Result<Inbound, Rejection> {
    let Value::Object(mut object) = value else {
        return Err(Rejection::Log {
            reason: "invalid protocol input: not a JSON object".into(),
        });
    };
    let id = object.remove("id");
    let numeric_id = id.as_ref().and_then(Value::as_u64);
    let answer_or_log = |error: RpcError| match numeric_id {
        Some(id) => Rejection::Answer { id, error },
        None => Rejection::Log {
            reason: format!("invalid protocol input: {}", error.message),
        },
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        let error = RpcError::invalid_request("invalid JSON-RPC request: jsonrpc must be \"2.0\"");
        // Only a request is answered: answering a malformed response could
        // give an active host request a second answer.
        return Err(if object.contains_key("method") {
            answer_or_log(error)
        } else {
            Rejection::Log {
                reason: format!("invalid protocol input: {}", error.message),
            }
        });
    }
    match object.remove("method") {
        Some(Value::String(method)) if !method.is_empty() => {
            let params = object.remove("params").unwrap_or(Value::Null);
            match id {
                None => Ok(Inbound::Notification { method, params }),
                Some(Value::Number(_)) if numeric_id.is_some() => Ok(Inbound::Request {
                    id: numeric_id.unwrap_or_default(),
                    method,
                    params: params.into(),
                    bytes: 0,
                }),
                Some(_) => Err(Rejection::Log {
                    reason: "invalid protocol input: request id is not an unsigned integer (the host only sends numeric ids; answering another id would be fatal to it)".into(),
                }),
            }
        }
        Some(_) => Err(answer_or_log(RpcError::invalid_request(
            "method must be a string",
        ))),
        None => classify_response(id, object),
    }
}

fn classify_response(
    id: Option<Value>,
    mut object: Map<String, Value>,
) -> Result<Inbound, Rejection> {
    let id = match id {
        Some(Value::Number(n)) if n.as_u64().is_some() => {
            ChildId::Number(n.as_u64().unwrap_or_default())
        }
        Some(Value::String(text)) => ChildId::Text(text),
        _ => {
            return Err(Rejection::Log {
                reason:
                    "invalid JSON-RPC request: neither a request nor a response with a valid id"
                        .into(),
            });
        }
    };
    let outcome = if let Some(error) = object.remove("error") {
        Err(decode_error(error).ok_or_else(|| Rejection::Log {
            reason: format!("invalid protocol input: malformed error in the response to {id}"),
        })?)
    } else if let Some(result) = object.remove("result") {
        Ok(result)
    } else {
        return Err(Rejection::Log {
            reason: format!(
                "invalid protocol input: response to {id} has neither result nor error"
            ),
        });
    };
    Ok(Inbound::Response { id, outcome })
}

fn decode_error(value: Value) -> Option<RpcError> {
    let Value::Object(mut map) = value else {
        return None;
    };
    let code = map.get("code")?.as_i64()?;
    let message = map.remove("message")?.as_str()?.to_owned();
    let mut error = RpcError::new(code, message);
    error.data = map.remove("data");
    Some(error)
}

#[derive(Serialize)]
struct ResponseFrame<'a> {
    jsonrpc: &'static str,
    id: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
}

#[derive(Serialize)]
struct NotificationFrame<'a> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a Value,
}

#[derive(Serialize)]
struct RequestFrame<'a> {
    jsonrpc: &'static str,
    id: &'a ChildId,
    method: &'a str,
    params: &'a Value,
}

/// `{"jsonrpc":"2.0","id":N,"result":...}` or `...,"error":...}`: exactly one
/// of the two, as the host requires.
pub fn encode_response(id: u64, outcome: &Result<Value, RpcError>) -> String {
    let frame = ResponseFrame {
        jsonrpc: "2.0",
        id,
        result: outcome.as_ref().ok(),
        error: outcome.as_ref().err(),
    };
    to_line(&frame)
}

pub fn encode_notification(method: &str, params: &Value) -> String {
    to_line(&NotificationFrame {
        jsonrpc: "2.0",
        method,
        params,
    })
}

pub fn encode_request(id: &ChildId, method: &str, params: &Value) -> String {
    to_line(&RequestFrame {
        jsonrpc: "2.0",
        id,
        method,
        params,
    })
}

fn to_line<T: Serialize>(frame: &T) -> String {
    // Serialising a Value-based frame only fails for non-string map keys,
    // which a `Value` cannot hold.
    serde_json::to_string(frame).unwrap_or_else(|_| String::from("{}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_compact_frames_in_sdk_key_order() {
        assert_eq!(
            encode_response(5, &Ok(json!({"a": 1}))),
            r#"{"jsonrpc":"2.0","id":5,"result":{"a":1}}"#
        );
        assert_eq!(
            encode_response(7, &Err(RpcError::cancelled("user"))),
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"request cancelled","data":{"reason":"user"}}}"#
        );
        assert_eq!(
            encode_request(
                &ChildId::Text("wasm:1".into()),
                "confirmation/request",
                &json!({})
            ),
            r#"{"jsonrpc":"2.0","id":"wasm:1","method":"confirmation/request","params":{}}"#
        );
    }

    #[test]
    fn classifies_requests_notifications_responses() {
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":3,"method":"tool/call","params":{}}"#),
            Ok(Inbound::Request {
                id: 3,
                method: "tool/call".into(),
                params: json!({}).into(),
                bytes: 57,
            })
        );
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}"#),
            Ok(Inbound::Notification { .. })
        ));
        assert_eq!(
            parse_line(br#"{"jsonrpc":"2.0","id":"wasm:1","result":{"confirmed":true}}"#),
            Ok(Inbound::Response {
                id: ChildId::Text("wasm:1".into()),
                outcome: Ok(json!({"confirmed": true}))
            })
        );
    }

    #[test]
    fn answers_only_when_a_numeric_id_is_known() {
        assert!(matches!(
            parse_line(br#"{"jsonrpc":"2.0","id":4,"method":7}"#),
            Err(Rejection::Answer { id: 4, .. })
        ));
        for bad in [
            &b"not json"[..],
            b"[1]",
            b"42",
            b"\xff\xfe",
            br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":"s","method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":-1,"method":"x"}"#,
            br#"{"jsonrpc":"2.0","method":5}"#,
            br#"{"id":1}"#,
        ] {
            assert!(
                matches!(parse_line(bad), Err(Rejection::Log { .. })),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn deep_nesting_is_rejected_not_overflowed() {
        let mut line = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":"#);
        line.push_str(&"[".repeat(10_000));
        line.push_str(&"]".repeat(10_000));
        line.push('}');
        assert!(matches!(
            parse_line(line.as_bytes()),
            Err(Rejection::Log { .. })
        ));
    }
}
