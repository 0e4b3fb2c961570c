//! octet's partial results of a composition call (`composition/update`
//! notifications, API 0.4): the `start-call` import that asks for them, and
//! the routing of each notification to the call it belongs to.
//! docs/api-0.4.md#v04-composition-updates.
//!
//! octet is trusted, but what it relays is the called tool's output, and a
//! wrong notification must never stop the extension: every notification
//! that does not fit is dropped, counted and logged, never answered (it is
//! a notification) and never fatal. An update is routed only to a call the
//! shim sent with `updates: true` and that is still waiting for its reply;
//! its `sequence` must be greater than the last one accepted for that call;
//! its `result` must fit the guest-JSON bounds ([`super::guest_json`]) and
//! [`MAX_UPDATE_BYTES`]. At most [`MAX_BUFFERED`] updates
//! ([`MAX_BUFFERED_BYTES`] together) wait for the guest per call; past that
//! the oldest gives way (the newest partial result is the most complete,
//! and stdin is never left unread while a guest is slow). The buffer is
//! freed when the guest finishes or drops the call, and when the tool call
//! ends or is cancelled.

use super::request_state::RequestState;
use super::session::Session;
use crate::cancel::CancelToken;
use crate::log::Level;
use crate::runtime::pending::{PendingCall, Pushed, UpdateQueue};
use crate::runtime::types::{CompositionUpdate, GuestError};
use crate::wire::message::ChildId;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The notification.
pub const METHOD: &str = "composition/update";
/// Updates waiting for the guest per call (octet buffers as many).
pub const MAX_BUFFERED: usize = 64;
/// Bytes of results waiting for the guest per call, together.
pub const MAX_BUFFERED_BYTES: usize = 1 << 20;
/// One update's result, as JSON text.
pub const MAX_UPDATE_BYTES: usize = 256 * 1024;

/// One call that asked for updates, while its reply is awaited.
struct Route {
    queue: Arc<UpdateQueue>,
    last: Option<u64>,
}

/// Why an update was not handed to the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ignored {
    /// Not `{request_id: string, sequence: unsigned, result}`.
    Malformed(&'static str),
    /// No call with that id asked for updates, or it has its reply.
    Unknown,
    /// The sequence does not increase.
    OutOfOrder { last: u64, sequence: u64 },
    /// The result breaks a bound.
    Refused(String),
    /// The guest has finished or dropped the call.
    Closed,
}

impl Ignored {
    fn reason(&self) -> String {
        match self {
            Ignored::Malformed(what) => format!("malformed: {what}"),
            Ignored::Unknown => {
                "for no call that asked for updates and awaits its reply (unknown, or after the final reply)".into()
            }
            Ignored::OutOfOrder { last, sequence } => {
                format!("sequence {sequence} does not follow {last}")
            }
            Ignored::Refused(why) => why.clone(),
            Ignored::Closed => "the guest no longer reads this call".into(),
        }
    }
}

/// The calls that asked for updates, by child id, and what was dropped.
#[derive(Default)]
pub struct Routes {
    routes: Mutex<HashMap<ChildId, Route>>,
    ignored: AtomicU64,
    overflowed: AtomicU64,
}

impl Routes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ChildId, Route>> {
        self.routes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn open(&self, id: &ChildId, queue: Arc<UpdateQueue>) {
        self.lock().insert(id.clone(), Route { queue, last: None });
    }

    fn close(&self, id: &ChildId) {
        self.lock().remove(id);
    }

    /// Calls routed now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }

    /// Routes one notification; `pending` says whether a child id still
    /// awaits its reply. Returns how many older updates gave way.
    pub fn accept(
        &self,
        params: &Value,
        pending: impl Fn(&ChildId) -> bool,
    ) -> Result<usize, Ignored> {
        let id = match params.get("request_id") {
            Some(Value::String(text)) => ChildId::Text(text.clone()),
            _ => return Err(Ignored::Malformed("request_id is not a string")),
        };
        let sequence = params
            .get("sequence")
            .and_then(Value::as_u64)
            .ok_or(Ignored::Malformed("sequence is not an unsigned integer"))?;
        let result = params
            .get("result")
            .ok_or(Ignored::Malformed("no result"))?;
        let mut routes = self.lock();
        let route = match routes.get_mut(&id) {
            Some(route) if pending(&id) => route,
            _ => return Err(Ignored::Unknown),
        };
        if let Some(last) = route.last
            && sequence <= last
        {
            return Err(Ignored::OutOfOrder { last, sequence });
        }
        // In order even when refused below: what follows must still increase.
        route.last = Some(sequence);
        let result = check_result(result).map_err(Ignored::Refused)?;
        match route.queue.push(CompositionUpdate { sequence, result }) {
            Pushed::Queued { dropped } => Ok(dropped),
            Pushed::Closed => Err(Ignored::Closed),
        }
    }

    /// Logs a dropped notification: the first few, then at every power of
    /// two, with the count so far.
    fn ignored(&self, why: &Ignored) {
        let count = self.ignored.fetch_add(1, Ordering::Relaxed) + 1;
        if count <= 8 || count.is_power_of_two() {
            crate::log!(Level::Warning, "composition/update ignored",
                "reason" => why.reason(), "ignored_so_far" => count);
        }
    }

    fn overflowed(&self, dropped: usize) {
        let before = self.overflowed.fetch_add(dropped as u64, Ordering::Relaxed);
        let count = before + dropped as u64;
        if before < 8 || (before + 1..=count).any(u64::is_power_of_two) {
            crate::log!(Level::Warning, "composition/update buffer full; the oldest updates were dropped",
                "buffered" => MAX_BUFFERED, "dropped_so_far" => count);
        }
    }
}

/// Re-encodes `result` for the guest within the guest-JSON bounds.
fn check_result(result: &Value) -> Result<String, String> {
    let text = result.to_string();
    if text.len() > MAX_UPDATE_BYTES {
        return Err(format!(
            "the result has {} bytes; the limit is 256 KiB",
            text.len()
        ));
    }
    super::guest_json::parse(&text, "the update's result").map_err(|err| err.to_string())?;
    Ok(text)
}

impl Session {
    /// A `composition/update` from octet (never answered, never fatal).
    pub fn composition_update(&self, params: &Value) {
        let routes = &self.services.composition.updates;
        match routes.accept(params, |id| self.children.is_pending(id)) {
            Ok(0) => {}
            Ok(dropped) => routes.overflowed(dropped),
            Err(why) => routes.ignored(&why),
        }
    }

    /// `composition.start-call`: the call is sent with `updates: true` by a
    /// task of its own, and the guest holds the returned handle.
    pub(super) async fn composition_start_for(
        self: Arc<Self>,
        scope: Option<Arc<RequestState>>,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> Result<PendingCall, GuestError> {
        let parent = self.composition_parent(scope, "composition.start-call")?;
        let mut params = self.composition_call_params(&parent, &name, &arguments, full_outcome)?;
        params["updates"] = json!(true);
        let queue = Arc::new(UpdateQueue::new(MAX_BUFFERED, MAX_BUFFERED_BYTES));
        let (answer, outcome) = tokio::sync::oneshot::channel();
        let abandon = CancelToken::new();
        let cancel = CancelToken::new();
        let call = PendingCall::new(queue.clone(), outcome, abandon.clone());
        tokio::spawn(follow_parent(
            parent.clone(),
            abandon,
            cancel.clone(),
            queue.clone(),
        ));
        tokio::spawn(async move {
            let reply = self.updating_call(params, &cancel, queue).await;
            self.services.composition.end(&parent);
            let result = match reply {
                Ok(reply) => {
                    self.composition_call_answer(&parent, reply, full_outcome)
                        .await
                }
                Err(error) => Err(error),
            };
            let _ = answer.send(result);
        });
        Ok(call)
    }

    /// Sends the call and waits for its reply, routing its updates to
    /// `queue` meanwhile.
    async fn updating_call(
        &self,
        params: Value,
        cancel: &CancelToken,
        queue: Arc<UpdateQueue>,
    ) -> Result<serde_json::Map<String, Value>, GuestError> {
        const CALL: &str = "composition/call";
        let routes = &self.services.composition.updates;
        let mut routed = None;
        let reply = self
            .composition_request_with(CALL, params, cancel, |id| {
                routes.open(id, queue.clone());
                routed = Some(id.clone());
            })
            .await;
        if let Some(id) = routed {
            routes.close(&id);
        }
        queue.close();
        reply
    }
}

/// Ends the call (`cancel`) when the tool call does (cancelled, past its
/// deadline or answered) or the guest drops the handle (`abandon`): octet
/// is told with the tool call's reason when it has one (a cancelled tool
/// call also stops its guest, which drops the handle), and the updates not
/// read are freed. After a reply, cancelling changes nothing.
async fn follow_parent(
    parent: Arc<RequestState>,
    abandon: CancelToken,
    cancel: CancelToken,
    queue: Arc<UpdateQueue>,
) {
    let reason = tokio::select! {
        biased;
        () = parent.cancel.cancelled() => parent.cancel.reason().unwrap_or_else(|| "cancelled".into()),
        () = parent.finished.cancelled() => "cancelled".to_owned(),
        () = abandon.cancelled() => "cancelled".to_owned(),
    };
    cancel.cancel(&reason);
    queue.discard();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes_with(id: &str) -> (Routes, Arc<UpdateQueue>) {
        let routes = Routes::default();
        let queue = Arc::new(UpdateQueue::new(MAX_BUFFERED, MAX_BUFFERED_BYTES));
        routes.open(&ChildId::Text(id.into()), queue.clone());
        (routes, queue)
    }

    fn update(id: &str, sequence: u64, result: Value) -> Value {
        json!({"request_id": id, "sequence": sequence, "result": result})
    }

    #[test]
    fn in_order_updates_of_a_pending_call_are_queued() {
        let (routes, queue) = routes_with("wasm:1");
        let pending = |_: &ChildId| true;
        assert_eq!(
            routes.accept(&update("wasm:1", 1, json!("a")), pending),
            Ok(0)
        );
        assert_eq!(
            routes.accept(&update("wasm:1", 5, json!({"b": [1]})), pending),
            Ok(0)
        );
        assert_eq!(queue.len(), 2);
        assert_eq!(
            routes.accept(&update("wasm:1", 5, json!("again")), pending),
            Err(Ignored::OutOfOrder {
                last: 5,
                sequence: 5
            })
        );
        assert_eq!(
            routes.accept(&update("wasm:1", 2, json!("older")), pending),
            Err(Ignored::OutOfOrder {
                last: 5,
                sequence: 2
            })
        );
    }

    #[test]
    fn unknown_answered_and_malformed_are_ignored() {
        let (routes, queue) = routes_with("wasm:1");
        assert_eq!(
            routes.accept(&update("wasm:2", 1, json!(1)), |_| true),
            Err(Ignored::Unknown)
        );
        assert_eq!(
            routes.accept(&update("wasm:1", 1, json!(1)), |_| false),
            Err(Ignored::Unknown),
            "after the final reply"
        );
        for bad in [
            json!({"request_id": 1, "sequence": 1, "result": 1}),
            json!({"request_id": "wasm:1", "sequence": -1, "result": 1}),
            json!({"request_id": "wasm:1", "sequence": 1.5, "result": 1}),
            json!({"request_id": "wasm:1", "sequence": 1}),
            json!([1]),
        ] {
            assert!(
                matches!(routes.accept(&bad, |_| true), Err(Ignored::Malformed(_))),
                "{bad}"
            );
        }
        assert!(queue.is_empty());
    }

    #[test]
    fn results_past_the_guest_bounds_are_refused_but_keep_the_order() {
        let (routes, queue) = routes_with("wasm:1");
        let deep = (0..65).fold(json!(1), |inner, _| json!([inner]));
        assert!(matches!(
            routes.accept(&update("wasm:1", 1, deep), |_| true),
            Err(Ignored::Refused(why)) if why.contains("nested deeper than 64")
        ));
        let big = json!("x".repeat(MAX_UPDATE_BYTES));
        assert!(matches!(
            routes.accept(&update("wasm:1", 2, big), |_| true),
            Err(Ignored::Refused(why)) if why.contains("256 KiB")
        ));
        assert_eq!(
            routes.accept(&update("wasm:1", 2, json!(1)), |_| true),
            Err(Ignored::OutOfOrder {
                last: 2,
                sequence: 2
            })
        );
        let at_64 = (0..64).fold(json!(1), |inner, _| json!([inner]));
        assert_eq!(routes.accept(&update("wasm:1", 3, at_64), |_| true), Ok(0));
        assert_eq!(queue.len(), 1);
    }

    #[test]
    fn more_than_64_drop_the_oldest() {
        let (routes, queue) = routes_with("wasm:1");
        for sequence in 1..=64 {
            assert_eq!(
                routes.accept(&update("wasm:1", sequence, json!(sequence)), |_| true),
                Ok(0)
            );
        }
        assert_eq!(
            routes.accept(&update("wasm:1", 65, json!(65)), |_| true),
            Ok(1)
        );
        assert_eq!(queue.len(), MAX_BUFFERED);
        let big = json!("x".repeat(MAX_UPDATE_BYTES - 2));
        for sequence in 66..=69 {
            routes
                .accept(&update("wasm:1", sequence, big.clone()), |_| true)
                .unwrap();
        }
        assert!(queue.len() < MAX_BUFFERED, "the byte bound holds too");
        routes.close(&ChildId::Text("wasm:1".into()));
        assert_eq!(routes.len(), 0);
    }
}
