//! What the session keeps for tool composition over a process generation:
//! each live tool call's budget (calls made, in flight, sidecars, its one
//! store commit) and the routes of the calls that asked for
//! `composition/update` notifications, with their bounds. Plain state,
//! below the composition imports that use it (docs/api-0.4.md#v04-composition).

use crate::log::Level;
use crate::protocol::requests::request_state::RequestState;
use crate::runtime::pending::{Pushed, UpdateQueue};
use crate::runtime::types::{CompositionUpdate, GuestError};
use crate::wire::message::ChildId;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// Most composition calls per tool call.
pub const MAX_CALLS: u32 = 256;
/// Composition calls of one tool call in flight at once (`start-call`
/// returns before its reply): octet overlaps at most four reads.
pub const MAX_IN_FLIGHT: u32 = 4;
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
    pub(super) fn reason(&self) -> String {
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

    pub(super) fn open(&self, id: &ChildId, queue: Arc<UpdateQueue>) {
        self.lock().insert(id.clone(), Route { queue, last: None });
    }

    pub(super) fn close(&self, id: &ChildId) {
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
    pub(super) fn ignored(&self, why: &Ignored) {
        let count = self.ignored.fetch_add(1, Ordering::Relaxed) + 1;
        if count <= 8 || count.is_power_of_two() {
            crate::log!(Level::Warning, "composition/update ignored",
                "reason" => why.reason(), "ignored_so_far" => count);
        }
    }

    pub(super) fn overflowed(&self, dropped: usize) {
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
    crate::protocol::guest_json::parse(&text, "the update's result")
        .map_err(|err| err.to_string())?;
    Ok(text)
}

/// What one tool call has used of its composition budget.
pub(super) struct Use {
    parent: Weak<RequestState>,
    calls: u32,
    /// Calls sent and not yet answered.
    in_flight: u32,
    pub(super) sidecars: u32,
    pub(super) stored: bool,
}

impl Use {
    fn new(parent: &Arc<RequestState>) -> Use {
        Use {
            parent: Arc::downgrade(parent),
            calls: 0,
            in_flight: 0,
            sidecars: 0,
            stored: false,
        }
    }
}

/// The budgets of the live tool calls, by request id. An entry whose tool
/// call has finished (or whose id now names another request) is stale and
/// dropped when next seen, so the map never outgrows the live requests.
/// Also the routes of the calls that asked for updates.
#[derive(Default)]
pub struct Parents {
    uses: Mutex<HashMap<u64, Use>>,
    pub(crate) updates: Routes,
}

impl Parents {
    pub(super) fn with<T>(&self, parent: &Arc<RequestState>, f: impl FnOnce(&mut Use) -> T) -> T {
        let mut map = self.uses.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, used| used.parent.strong_count() > 0);
        let used = map.entry(parent.id).or_insert_with(|| Use::new(parent));
        if !Weak::ptr_eq(&used.parent, &Arc::downgrade(parent)) {
            *used = Use::new(parent);
        }
        f(used)
    }

    /// Counts a call of `parent` sent, refusing one past [`MAX_CALLS`] or
    /// [`MAX_IN_FLIGHT`]; every `Ok` is followed by one [`Parents::end`].
    pub(super) fn begin(&self, parent: &Arc<RequestState>) -> Result<(), GuestError> {
        self.with(parent, |used| {
            if used.in_flight >= MAX_IN_FLIGHT {
                return Err(GuestError::InvalidParams(format!(
                    "a tool call may have at most {MAX_IN_FLIGHT} composition calls in flight; finish one first"
                )));
            }
            used.calls += 1;
            if used.calls > MAX_CALLS {
                return Err(GuestError::InvalidParams(format!(
                    "a tool call may make at most {MAX_CALLS} composition calls"
                )));
            }
            used.in_flight += 1;
            Ok(())
        })
    }

    /// A call begun with [`Parents::begin`] has its answer.
    pub(super) fn end(&self, parent: &Arc<RequestState>) {
        self.with(parent, |used| {
            used.in_flight = used.in_flight.saturating_sub(1)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
