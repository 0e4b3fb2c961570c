//! The state shared by the server loop, the lanes and the guest's imports:
//! the negotiated setup, the table of active host requests with their one
//! terminal claim each, and the writer.

use super::request_state::RequestState;
use crate::log::Level;
use crate::protocol::deadlines::Kind;
use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::handshake::initialize::Negotiated;
use crate::protocol::handshake::manifest::Contributes;
use crate::protocol::imports::child_requests::ChildRequests;
use crate::runtime::types::GuestError;
use crate::wire::MAX_FRAME_BYTES;
use crate::wire::guard::Unsendable;
use crate::wire::message::{RpcError, encode_notification, encode_response};
use crate::wire::transport::{SendError, Writer};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::time::Instant;

/// Admitted requests (running + waiting) before new ones are refused with
/// `-32000 extension request queue is full`, as in the SDK
/// (docs/protocol.md#scheduling).
pub const ADMISSION_LIMIT: usize = 64;

/// Lifecycle events waiting for (or running on) the primary instance.
///
/// They are notifications: the host cannot be refused with an answer, and
/// a dropped `turn/settled` would leave a stateful guest "awake" for good.
/// So they never share the request bound (a flood of requests cannot push
/// them out) and get a queue of their own, four times the request bound:
/// octet sends them at the pace of sessions and turns, so only a host
/// misbehaving on purpose can fill it. Past it an event is dropped with a
/// warning that counts every drop so far; the guest cannot be told (WIT
/// 0.2 has no channel for it), which the README states.
pub const LIFECYCLE_LIMIT: usize = 256;

/// What `initialize` settled.
pub struct Setup {
    pub api: ApiVersion,
    pub negotiated: Negotiated,
    pub contributes: Contributes,
}

impl Setup {
    pub fn has(&self, feature: crate::protocol::handshake::feature::Feature) -> bool {
        self.api.negotiates() && self.negotiated.has(feature)
    }
}

pub struct Session {
    writer: Writer,
    setup: OnceLock<Setup>,
    /// Set once the initialize reply is queued: nothing else may be written
    /// before it (docs/protocol.md#initialize-ordering).
    ready: AtomicBool,
    requests: Mutex<HashMap<u64, Arc<RequestState>>>,
    lifecycle_units: AtomicUsize,
    /// Bumped whenever a request or lifecycle event finishes (drains wait
    /// on it instead of polling).
    changes: tokio::sync::watch::Sender<u64>,
    pub(crate) child_requests: ChildRequests,
    /// API 0.2 host services (artifact budget, tool catalogs).
    pub(crate) services: crate::protocol::imports::state::Services,
}

/// Why a request was not admitted.
pub enum Refusal {
    Duplicate,
    QueueFull,
}

impl Session {
    pub fn new(writer: Writer) -> Session {
        Session {
            writer,
            setup: OnceLock::new(),
            ready: AtomicBool::new(false),
            requests: Mutex::new(HashMap::new()),
            lifecycle_units: AtomicUsize::new(0),
            changes: tokio::sync::watch::Sender::new(0),
            child_requests: ChildRequests::new(),
            services: crate::protocol::imports::state::Services::default(),
        }
    }

    pub fn writer(&self) -> &Writer {
        &self.writer
    }

    /// Records the handshake's outcome; called once.
    pub fn set_setup(&self, setup: Setup) {
        if self.setup.set(setup).is_err() {
            crate::log!(Level::Error, "initialize settled twice; keeping the first");
        }
    }

    pub fn setup(&self) -> Option<&Setup> {
        self.setup.get()
    }

    pub fn mark_ready(&self) {
        self.ready.store(true, Ordering::Release);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Acquire)
    }

    /// Admits a request into the table (duplicate ids and the admission
    /// bound are checked here).
    pub fn admit(
        &self,
        id: u64,
        kind: Kind,
        active_parent: bool,
        deadline: Instant,
    ) -> Result<Arc<RequestState>, Refusal> {
        let mut requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        if requests.contains_key(&id) {
            return Err(Refusal::Duplicate);
        }
        if requests.len() >= ADMISSION_LIMIT {
            return Err(Refusal::QueueFull);
        }
        let state = Arc::new(RequestState::new(id, kind, active_parent, deadline));
        requests.insert(id, state.clone());
        Ok(state)
    }

    /// Counts a lifecycle event as admitted work; `false` when its own
    /// queue ([`LIFECYCLE_LIMIT`]) is full.
    pub fn admit_lifecycle(&self) -> bool {
        self.lifecycle_units
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |units| {
                (units < LIFECYCLE_LIMIT).then_some(units + 1)
            })
            .is_ok()
    }

    pub fn lifecycle_done(&self) {
        self.lifecycle_units.fetch_sub(1, Ordering::AcqRel);
        self.changes.send_modify(|n| *n += 1);
    }

    /// A receiver that sees every finished request or lifecycle event.
    pub fn watch_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub fn request(&self, id: u64) -> Option<Arc<RequestState>> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
    }

    /// Active requests, for the shutdown drain.
    pub fn active(&self) -> Vec<Arc<RequestState>> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub fn idle(&self) -> bool {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
            && self.lifecycle_units.load(Ordering::Acquire) == 0
    }

    /// Answers `request` unless it already has its one answer. An answer
    /// the frame guard refuses (too large, too deep) becomes a -32603 error
    /// naming the bound (docs/protocol.md#frame-size).
    /// Returns whether this call was the answer.
    pub async fn settle(&self, request: &RequestState, outcome: Result<Value, RpcError>) -> bool {
        let mut settled = request.settled.lock().await;
        if *settled {
            crate::log!(Level::Debug, "discarding a result that lost the race to an earlier answer", "request_id" => request.id);
            return false;
        }
        *settled = true;
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&request.id);
        let ending = crate::receipts::ending(
            &request.receipt,
            request.expired.load(Ordering::Acquire),
            request.cancel.is_cancelled(),
            &outcome,
        );
        let bytes = self.answer(request.id, outcome).await;
        if let Some(ending) = ending {
            crate::receipts::settled(&request.receipt, request.id, ending, bytes);
        }
        drop(settled);
        request.finished.cancel("settled");
        self.changes.send_modify(|n| *n += 1);
        true
    }

    /// Answers a request the guest never sees (refusals, unknown methods,
    /// bad params, defaults), with its usage receipt when receipts are on.
    pub async fn answer_direct(
        &self,
        id: u64,
        method: &str,
        bytes_in: usize,
        outcome: Result<Value, RpcError>,
    ) {
        let receipt = crate::receipts::direct(id, method, bytes_in, &outcome);
        let bytes = self.answer(id, outcome).await;
        if let Some(receipt) = receipt {
            receipt.written(bytes);
        }
    }

    /// Answers an id that was never admitted (refusals, bad params).
    /// Returns the bytes of the frame written (0 when none was).
    pub async fn answer(&self, id: u64, outcome: Result<Value, RpcError>) -> usize {
        let line = encode_response(id, &outcome);
        let bytes = line.len();
        match self.writer.send(line).await {
            Ok(()) => bytes,
            Err(SendError::Refused(why)) => {
                crate::log!(Level::Warning, "response refused by the frame guard; answering with an error instead",
                    "request_id" => id, "error" => why.to_string());
                let line = encode_response(id, &Err(why.rpc_error()));
                let bytes = line.len();
                match self.writer.send(line).await {
                    Ok(()) => bytes,
                    Err(_) => 0,
                }
            }
            Err(SendError::Closed) => {
                crate::log!(Level::Debug, "stdout is closed; answer not written", "request_id" => id);
                0
            }
        }
    }

    /// Cancels an admitted request: the guest sees the reason, and the
    /// request is answered with `answer` now (cancellation wins,
    /// docs/protocol.md#host-cancellation).
    pub async fn cancel(
        &self,
        request: &RequestState,
        reason: &str,
        answer: Result<Value, RpcError>,
    ) {
        request.cancel.cancel(reason);
        self.settle(request, answer).await;
    }

    /// Writes a notification (gates are the caller's job).
    pub async fn notify(&self, method: &str, params: &Value) -> Result<(), SendError> {
        self.writer.send(encode_notification(method, params)).await
    }

    /// Writes a reverse notification the guest asked for, on behalf of
    /// `request` when there is one, charged to the notice budget by the
    /// bytes of its frame (crate::protocol::imports::notices). Past a bound it is dropped and
    /// counted, and `Ok`: the guest's work goes on. A frame too large for
    /// the wire is refused instead, whatever the budget: that is the
    /// author's mistake on every call, not a burst, and the error says so.
    pub async fn notify_guest(
        &self,
        method: &'static str,
        params: &Value,
        request: Option<&Arc<RequestState>>,
    ) -> Result<(), GuestError> {
        // A frame too large for the wire is refused below whatever the
        // budget holds; screening would drop it unseen.
        let floor = method.len() + text_bytes(params);
        if floor <= MAX_FRAME_BYTES
            && !self
                .child_requests
                .notices
                .screen(method, request, floor as u64)
        {
            return Ok(());
        }
        let line = encode_notification(method, params);
        if line.len() > MAX_FRAME_BYTES {
            let why = Unsendable::TooLarge { bytes: line.len() };
            return Err(GuestError::Failed(format!("{method} not sent: {why}")));
        }
        if !self
            .child_requests
            .notices
            .admit(method, request, line.len() as u64 + 1)
        {
            return Ok(());
        }
        self.writer
            .send(line)
            .await
            .map_err(|err| GuestError::Failed(format!("{method} not sent: {err}")))
    }
}

/// The bytes of every string and key in `value`: a floor of its JSON, found
/// without encoding it.
fn text_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len(),
        Value::Array(items) => items.iter().map(text_bytes).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + text_bytes(v)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_bytes_is_a_floor_of_the_frame() {
        for params in [
            json!({"level": "info", "message": "a\"b\\c\n\u{1}", "title": null}),
            json!({"request_id": 7, "sequence": 1, "event": {"type": "output", "data": ""}}),
            json!([]),
        ] {
            let line = encode_notification("notification", &params);
            let floor = "notification".len() + text_bytes(&params);
            assert!(floor <= line.len(), "{floor} > {}: {line}", line.len());
        }
        assert_eq!(text_bytes(&json!({"ab": ["cde", 1, {"f": "gh"}]})), 8);
    }
}
