//! octet's side of tool composition's partial results (API 0.4,
//! `tool_composition_v1`): reading a `composition/call` the extension sent,
//! and the `composition/update` notifications octet sends for one that
//! asked for them (`updates: true`) before its final reply
//! (docs/api-0.4.md#v04-composition-updates).
//!
//! [`Session::serve_composition_call`] behaves as octet does: updates only
//! for a call that asked, numbered from 1, then the reply. The hostile
//! streams of [`HostileUpdates`] break one expectation each, for tests of
//! what the extension does with notifications it cannot use.

use super::frame::{ChildId, Frame, FrameKind};
use super::session::{Session, SimError};
use serde_json::{Value, json};

/// The notification.
pub const UPDATE_METHOD: &str = "composition/update";
/// Updates octet buffers per call.
pub const MAX_BUFFERED_UPDATES: usize = 64;

/// A `composition/call` request of the extension, as octet reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct CompositionCall {
    pub id: ChildId,
    pub parent_request_id: u64,
    pub name: String,
    pub arguments: Value,
    pub full_outcome: bool,
    /// Whether the extension asked for partial results.
    pub updates: bool,
}

impl CompositionCall {
    /// The call `frame` carries; `Err` names what is not a valid
    /// `composition/call` (octet answers those -32602).
    pub fn from_frame(frame: &Frame) -> Result<CompositionCall, String> {
        let FrameKind::Request { id, method, params } = &frame.kind else {
            return Err(format!("not a request: {}", frame.raw));
        };
        if method != "composition/call" {
            return Err(format!("not composition/call: {method}"));
        }
        let flag = |key: &str| match params.get(key) {
            None => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(other) => Err(format!("{key} is not a boolean: {other}")),
        };
        Ok(CompositionCall {
            id: id.clone(),
            parent_request_id: params["parent_request_id"]
                .as_u64()
                .ok_or("parent_request_id is not an unsigned integer")?,
            name: params["name"]
                .as_str()
                .ok_or("name is not a string")?
                .to_owned(),
            arguments: params
                .get("arguments")
                .filter(|a| a.is_object())
                .cloned()
                .ok_or("arguments is not an object")?,
            full_outcome: flag("full_outcome")?,
            updates: flag("updates")?,
        })
    }
}

/// The params of one `composition/update`.
pub fn update_params(request: &ChildId, sequence: u64, result: Value) -> Value {
    json!({"request_id": request.to_json(), "sequence": sequence, "result": result})
}

/// A stream of updates that breaks one expectation, for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostileUpdates {
    /// Sequences 1, 3, 2, 3: the last two do not increase.
    OutOfOrder,
    /// Updates for a request id the extension never sent, a numeric one,
    /// and the host's own parent id.
    UnknownRequest,
    /// This many updates, sequences from 1 (more than
    /// [`MAX_BUFFERED_UPDATES`] overflow the extension's buffer).
    Flood(usize),
    /// A result of more than 256 KiB (within one frame).
    Oversized,
    /// A result nested 100 levels deep (octet's frames allow 128).
    Deep,
    /// Params that are not `{request_id, sequence, result}`.
    Malformed,
}

impl HostileUpdates {
    /// The params of every notification of the stream, for `request`
    /// (whose parent is `parent`).
    pub fn params(&self, request: &ChildId, parent: u64) -> Vec<Value> {
        let update = |sequence, result| update_params(request, sequence, result);
        match self {
            HostileUpdates::OutOfOrder => vec![
                update(1, json!("one")),
                update(3, json!("three")),
                update(2, json!("two, late")),
                update(3, json!("three again")),
            ],
            HostileUpdates::UnknownRequest => vec![
                json!({"request_id": "wasm:999999", "sequence": 1, "result": "stray"}),
                json!({"request_id": 7, "sequence": 1, "result": "numeric"}),
                json!({"request_id": parent, "sequence": 1, "result": "the parent"}),
            ],
            HostileUpdates::Flood(count) => (1..=*count as u64)
                .map(|sequence| update(sequence, json!({"partial": sequence})))
                .collect(),
            HostileUpdates::Oversized => {
                vec![update(1, json!({"text": "x".repeat(300 * 1024)}))]
            }
            HostileUpdates::Deep => {
                let deep = (0..100).fold(json!("bottom"), |inner, _| json!([inner]));
                vec![update(1, deep)]
            }
            HostileUpdates::Malformed => vec![
                json!({"request_id": request.to_json(), "sequence": -1, "result": 1}),
                json!({"request_id": request.to_json(), "sequence": "1", "result": 1}),
                json!({"request_id": request.to_json(), "sequence": 1}),
                json!([request.to_json(), 1, "result"]),
                json!(null),
            ],
        }
    }
}

impl Session {
    /// Sends one `composition/update`.
    pub fn composition_update(
        &mut self,
        request: &ChildId,
        sequence: u64,
        result: Value,
    ) -> Result<(), SimError> {
        self.notify(UPDATE_METHOD, update_params(request, sequence, result))
    }

    /// Serves `call` as octet does: when it asked for updates, each of
    /// `partials` as an update (sequences from 1), then the reply `{value}`
    /// (the whole `outcome` when it asked for the full outcome, with
    /// `value` in it).
    pub fn serve_composition_call(
        &mut self,
        call: &CompositionCall,
        partials: &[Value],
        value: Value,
    ) -> Result<(), SimError> {
        if call.updates {
            for (sequence, partial) in (1..).zip(partials) {
                self.composition_update(&call.id, sequence, partial.clone())?;
            }
        }
        let reply = if call.full_outcome {
            json!({"content": [{"type": "text", "text": value.to_string()}], "is_error": false, "value": value})
        } else {
            json!({"value": value})
        };
        self.respond(&call.id, reply)
    }

    /// Sends the notifications of `stream` for `call`.
    pub fn hostile_updates(
        &mut self,
        call: &CompositionCall,
        stream: &HostileUpdates,
    ) -> Result<(), SimError> {
        for params in stream.params(&call.id, call.parent_request_id) {
            self.notify(UPDATE_METHOD, params)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(params: Value) -> Frame {
        let value = json!({"jsonrpc": "2.0", "id": "wasm:3", "method": "composition/call", "params": params.clone()});
        Frame {
            raw: value.to_string(),
            kind: FrameKind::Request {
                id: ChildId::Text("wasm:3".into()),
                method: "composition/call".into(),
                params,
            },
            value,
        }
    }

    #[test]
    fn reads_a_call_and_its_flags() {
        let call = CompositionCall::from_frame(&frame(json!({
            "parent_request_id": 4, "name": "read", "arguments": {}, "updates": true
        })))
        .unwrap();
        assert_eq!(call.id, ChildId::Text("wasm:3".into()));
        assert!(call.updates && !call.full_outcome);
        assert!(
            CompositionCall::from_frame(&frame(json!({
                "parent_request_id": 4, "name": "read", "arguments": {}, "updates": "yes"
            })))
            .unwrap_err()
            .contains("updates is not a boolean")
        );
    }

    #[test]
    fn hostile_streams_break_what_they_say() {
        let id = ChildId::Text("wasm:3".into());
        let sequences: Vec<_> = HostileUpdates::OutOfOrder
            .params(&id, 4)
            .iter()
            .map(|p| p["sequence"].as_u64().unwrap())
            .collect();
        assert_eq!(sequences, [1, 3, 2, 3]);
        assert_eq!(HostileUpdates::Flood(65).params(&id, 4).len(), 65);
        let big = &HostileUpdates::Oversized.params(&id, 4)[0];
        assert!(big["result"].to_string().len() > 256 * 1024);
        assert!(big.to_string().len() < super::super::MAX_LINE_BYTES);
        assert!(
            HostileUpdates::UnknownRequest
                .params(&id, 4)
                .iter()
                .all(|p| p["request_id"] != "wasm:3")
        );
    }
}
