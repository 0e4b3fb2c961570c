//! Decoded extension-to-host frames: what the simulated host saw on stdout.

use serde_json::{Map, Value};
use std::fmt;

/// A JSON-RPC error object as the extension sent it (`{code, message, data?}`).
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JSON-RPC error {}: {}", self.code, self.message)?;
        if let Some(data) = &self.data {
            write!(f, " (data: {data})")?;
        }
        Ok(())
    }
}

/// The id of a request the extension sent to the host (u64 or a string of
/// at most 256 bytes, docs/protocol.md#child-ids).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ChildId {
    Number(u64),
    Text(String),
}

impl ChildId {
    /// Decodes a child request id; `None` for any other JSON type.
    pub fn from_json(value: &Value) -> Option<ChildId> {
        match value {
            Value::Number(n) => n.as_u64().map(ChildId::Number),
            Value::String(s) => Some(ChildId::Text(s.clone())),
            _ => None,
        }
    }

    /// The id as it goes back on the wire in the host's reply.
    pub fn to_json(&self) -> Value {
        match self {
            ChildId::Number(n) => Value::from(*n),
            ChildId::Text(s) => Value::from(s.as_str()),
        }
    }
}

impl fmt::Display for ChildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChildId::Number(n) => write!(f, "{n}"),
            ChildId::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// What kind of message a frame carries.
#[derive(Clone, Debug, PartialEq)]
pub enum FrameKind {
    /// An answer to a host request: exactly one of `result` / `error`.
    Response {
        id: u64,
        outcome: Result<Value, RpcError>,
    },
    /// A child request (extension → host), e.g. `confirmation/request`.
    Request {
        id: ChildId,
        method: String,
        params: Value,
    },
    /// A notification (extension → host), e.g. `notification`, `$/progress`.
    Notification { method: String, params: Value },
}

/// One frame the extension wrote, already checked against octet's rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// The line exactly as written, without the terminating LF.
    pub raw: String,
    /// The parsed JSON object.
    pub value: Value,
    pub kind: FrameKind,
}

impl Frame {
    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match &self.kind {
            FrameKind::Request { method, .. } | FrameKind::Notification { method, .. } => {
                Some(method)
            }
            FrameKind::Response { .. } => None,
        }
    }

    /// The params of a request or notification (`Null` for responses).
    pub fn params(&self) -> &Value {
        match &self.kind {
            FrameKind::Request { params, .. } | FrameKind::Notification { params, .. } => params,
            FrameKind::Response { .. } => &Value::Null,
        }
    }

    /// The id, when this frame answers host request `id`.
    pub fn response_id(&self) -> Option<u64> {
        match &self.kind {
            FrameKind::Response { id, .. } => Some(*id),
            _ => None,
        }
    }

    /// The outcome, when this frame is a response.
    pub fn outcome(&self) -> Option<&Result<Value, RpcError>> {
        match &self.kind {
            FrameKind::Response { outcome, .. } => Some(outcome),
            _ => None,
        }
    }
}

/// Decodes a JSON-RPC error member; `None` unless it is `{code: integer,
/// message: string, data?: any}` (docs/protocol.md#envelopes; anything else
/// is fatal to the host).
pub(crate) fn decode_error(value: &Value) -> Option<RpcError> {
    let object = value.as_object()?;
    let code = object.get("code")?.as_i64()?;
    let message = object.get("message")?.as_str()?.to_owned();
    Some(RpcError {
        code,
        message,
        data: object.get("data").cloned(),
    })
}

/// Builds a compact JSON-RPC frame object.
pub(crate) fn envelope(members: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
    let mut object = Map::new();
    object.insert("jsonrpc".to_owned(), Value::from("2.0"));
    for (key, value) in members {
        object.insert(key.to_owned(), value);
    }
    Value::Object(object)
}
