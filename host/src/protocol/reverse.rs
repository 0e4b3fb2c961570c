//! Child requests: what the shim asks the host for the guest
//! (`confirmation/request`, `input/request`, ...).
//!
//! Ids are never reused within a generation (reuse is fatal on the host):
//! plain integers on API 0.1 and `wasm:N` strings on API 0.2, like the SDK's
//! `py:N`, so they can never be mistaken for the host's numeric ids in a
//! `$/cancelRequest`. At most 8 interactive operations run at once, the
//! host's fatal bound (docs/protocol.md#child-ids), and at most 65,536 ids
//! are ever issued.
//!
//! Reverse notifications (`notification`, `$/progress`,
//! `context/contribution`, `status/contribution`, `presentation/update`)
//! need no answer, so nothing on the host side slows a guest that sends
//! them in a loop; [`NoticeBudget`] bounds them instead.

use crate::wire::message::{ChildId, RpcError, encode_notification, encode_request};
use crate::wire::transport::Writer;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;
use tokio::sync::{Semaphore, oneshot};

use super::request_state::RequestState;
use crate::cancel::CancelToken;
use crate::log::bucket::TokenBucket;

/// Distinct child ids allowed per generation (docs/protocol.md#child-ids;
/// beyond is fatal).
pub const MAX_CHILD_IDS: u64 = 65_536;
/// Interactive operations in flight at once (docs/protocol.md#child-ids;
/// beyond is fatal).
pub const MAX_INTERACTIVE: usize = 8;

/// Why a child request gave no result.
#[derive(Debug)]
pub enum ChildError {
    /// The parent request was cancelled, or the host abandoned the child.
    Cancelled(String),
    /// The host answered with an error.
    Rpc(RpcError),
    /// The request could not be written (too large, ids exhausted, stdout
    /// closed); the text says which.
    Refused(String),
}

type Reply = Result<Value, ChildError>;

pub struct Children {
    next: AtomicU64,
    pending: Mutex<HashMap<ChildId, oneshot::Sender<Reply>>>,
    interactive: Semaphore,
    /// The bounds on reverse notifications.
    pub notices: NoticeBudget,
}

impl Default for Children {
    fn default() -> Self {
        Self::new()
    }
}

impl Children {
    pub fn new() -> Self {
        Children {
            next: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            interactive: Semaphore::new(MAX_INTERACTIVE),
            notices: NoticeBudget::new(Instant::now()),
        }
    }

    /// Sends `method` and waits for the host's answer, giving up (and
    /// telling the host, where the wire allows) when `cancel` fires.
    pub async fn call(
        &self,
        writer: &Writer,
        text_ids: bool,
        method: &str,
        params: Value,
        cancel: &CancelToken,
    ) -> Result<Value, ChildError> {
        self.call_with(writer, text_ids, method, params, cancel, |_| ())
            .await
    }

    /// [`Children::call`], telling `issued` the child's id once it waits
    /// for its answer and before the request is written (what octet sends
    /// about the child before answering can then be routed to it).
    pub async fn call_with(
        &self,
        writer: &Writer,
        text_ids: bool,
        method: &str,
        params: Value,
        cancel: &CancelToken,
        issued: impl FnOnce(&ChildId),
    ) -> Result<Value, ChildError> {
        let cancelled =
            || ChildError::Cancelled(cancel.reason().unwrap_or_else(|| "cancelled".into()));
        let _permit = tokio::select! {
            permit = self.interactive.acquire() => permit.map_err(|_| ChildError::Refused("the shim is shutting down".into()))?,
            () = cancel.cancelled() => return Err(cancelled()),
        };
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        if number > MAX_CHILD_IDS {
            return Err(ChildError::Refused(format!(
                "this generation has used all {MAX_CHILD_IDS} child request ids the host allows"
            )));
        }
        let id = if text_ids {
            ChildId::Text(format!("wasm:{number}"))
        } else {
            ChildId::Number(number)
        };
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        issued(&id);
        if let Err(err) = writer.send(encode_request(&id, method, &params)).await {
            self.lock().remove(&id);
            return Err(ChildError::Refused(err.to_string()));
        }
        tokio::select! {
            reply = rx => reply.unwrap_or_else(|_| Err(ChildError::Refused("the shim stopped waiting".into()))),
            () = cancel.cancelled() => {
                if self.lock().remove(&id).is_some() && text_ids {
                    let reason = cancel.reason().unwrap_or_else(|| "parent_cancelled".into());
                    let _ = writer.send(encode_notification("$/cancelRequest", &json!({ "id": id, "reason": reason }))).await;
                }
                Err(cancelled())
            }
        }
    }

    /// Whether `id` is a child request still waiting for its answer.
    pub fn is_pending(&self, id: &ChildId) -> bool {
        self.lock().contains_key(id)
    }

    /// Routes the host's answer to a child request. Unknown ids (late or
    /// abandoned) are ignored with a log line.
    pub fn resolve(&self, id: &ChildId, outcome: Result<Value, RpcError>) {
        match self.lock().remove(id) {
            Some(waiter) => {
                let _ = waiter.send(outcome.map_err(ChildError::Rpc));
            }
            None => {
                crate::log!(crate::log::Level::Warning, "ignored late or unknown response", "response_id" => id.to_string())
            }
        }
    }

    /// The host abandoned a child (`$/cancelRequest` with our id). Returns
    /// whether the id was ours and pending.
    pub fn abandon(&self, id: &ChildId, reason: &str) -> bool {
        match self.lock().remove(id) {
            Some(waiter) => {
                let _ = waiter.send(Err(ChildError::Cancelled(reason.to_owned())));
                true
            }
            None => false,
        }
    }

    /// Fails every pending child locally (stdin closed).
    pub fn fail_all(&self, message: &str) {
        let pending: Vec<_> = self.lock().drain().collect();
        for (_, waiter) in pending {
            let _ = waiter.send(Err(ChildError::Rpc(RpcError::server(message))));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ChildId, oneshot::Sender<Reply>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Reverse notifications one request may send, all kinds together.
pub const MAX_NOTICES_PER_REQUEST: u32 = 1_000;
/// Reverse notifications per second for the whole process (also the burst).
pub const NOTICES_PER_SECOND: u64 = 200;
/// Requests tracked before finished ones are forgotten (twice the
/// admission bound: at most 64 are ever active).
const TRACKED_REQUESTS: usize = 128;

/// Bounds the reverse notifications a guest sends: at most
/// [`MAX_NOTICES_PER_REQUEST`] per request and [`NOTICES_PER_SECOND`] for
/// the process. A notification past either bound is not written; the
/// import fails with a sentence naming the bound. Both are fixed: a guest
/// that needs more should report less often or batch (one output event
/// can carry many lines).
pub struct NoticeBudget {
    state: Mutex<NoticeState>,
}

struct NoticeState {
    rate: TokenBucket,
    /// Sent per request, keyed by its address; the weak reference keeps
    /// the address from being reused while the entry exists (request ids
    /// may be reused by the host once a request has settled).
    per_request: HashMap<usize, (Weak<RequestState>, u32)>,
}

impl NoticeBudget {
    pub fn new(now: Instant) -> NoticeBudget {
        NoticeBudget {
            state: Mutex::new(NoticeState {
                rate: TokenBucket::new(NOTICES_PER_SECOND, NOTICES_PER_SECOND, now),
                per_request: HashMap::new(),
            }),
        }
    }

    /// Takes one notification's worth for `method`, sent on behalf of
    /// `request` when there is one; `Err` is the guest's error message.
    pub fn admit(&self, method: &str, request: Option<&Arc<RequestState>>) -> Result<(), String> {
        self.admit_at(method, request, Instant::now())
    }

    fn admit_at(
        &self,
        method: &str,
        request: Option<&Arc<RequestState>>,
        now: Instant,
    ) -> Result<(), String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(request) = request {
            let sent = state.sent_by(request);
            if sent >= MAX_NOTICES_PER_REQUEST {
                return Err(format!(
                    "{method} not sent: request {} has sent {MAX_NOTICES_PER_REQUEST} notifications, progress events and presentation updates, the most octet-wasm lets one request send (a fixed bound: send fewer, larger updates)",
                    request.id
                ));
            }
        }
        if !state.rate.take(1, now) {
            return Err(format!(
                "{method} not sent: the extension is sending more than {NOTICES_PER_SECOND} notifications, progress events and presentation updates per second, the most octet-wasm lets one extension send (a fixed bound: send fewer, or wait and retry)"
            ));
        }
        if let Some(request) = request {
            state.count(request);
        }
        Ok(())
    }
}

impl NoticeState {
    fn sent_by(&self, request: &Arc<RequestState>) -> u32 {
        self.per_request
            .get(&key(request))
            .map_or(0, |(_, sent)| *sent)
    }

    fn count(&mut self, request: &Arc<RequestState>) {
        let sent = self.sent_by(request) + 1;
        if self.per_request.len() >= TRACKED_REQUESTS {
            self.per_request
                .retain(|_, (owner, _)| owner.strong_count() > 0);
        }
        self.per_request
            .insert(key(request), (Arc::downgrade(request), sent));
    }
}

fn key(request: &Arc<RequestState>) -> usize {
    Arc::as_ptr(request) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn request() -> Arc<RequestState> {
        Arc::new(RequestState::detached())
    }

    #[test]
    fn one_request_stops_at_its_bound() {
        let mut now = Instant::now();
        let budget = NoticeBudget::new(now);
        let first = request();
        for _ in 0..MAX_NOTICES_PER_REQUEST {
            now += Duration::from_millis(10);
            budget.admit_at("notification", Some(&first), now).unwrap();
        }
        now += Duration::from_secs(1);
        let refused = budget
            .admit_at("notification", Some(&first), now)
            .unwrap_err();
        assert!(refused.contains("request 0 has sent 1000"), "{refused}");
        budget
            .admit_at("notification", Some(&request()), now)
            .expect("another request (even with the same id) has its own count");
    }

    #[test]
    fn the_process_rate_holds_across_requests() {
        let now = Instant::now();
        let budget = NoticeBudget::new(now);
        for _ in 0..NOTICES_PER_SECOND {
            budget
                .admit_at("notification", Some(&request()), now)
                .unwrap();
        }
        let refused = budget
            .admit_at("status/contribution", None, now)
            .unwrap_err();
        assert!(
            refused.starts_with("status/contribution not sent"),
            "{refused}"
        );
        assert!(refused.contains("200 notifications"), "{refused}");
        budget
            .admit_at("notification", None, now + Duration::from_millis(10))
            .expect("10 ms at 200/s refill two");
    }

    #[test]
    fn refusals_do_not_count() {
        let now = Instant::now();
        let budget = NoticeBudget::new(now);
        let one = request();
        for _ in 0..NOTICES_PER_SECOND {
            budget.admit_at("notification", Some(&one), now).unwrap();
        }
        for _ in 0..10 {
            assert!(budget.admit_at("notification", Some(&one), now).is_err());
        }
        let state = budget.state.lock().unwrap();
        assert_eq!(state.sent_by(&one), NOTICES_PER_SECOND as u32);
    }

    #[test]
    fn finished_requests_are_forgotten() {
        let now = Instant::now();
        let budget = NoticeBudget::new(now);
        for second in 0..(TRACKED_REQUESTS as u64 * 3) {
            let later = now + Duration::from_secs(second);
            budget
                .admit_at("notification", Some(&request()), later)
                .unwrap();
        }
        assert!(budget.state.lock().unwrap().per_request.len() <= TRACKED_REQUESTS);
    }
}
