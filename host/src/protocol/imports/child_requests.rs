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
//! them in a loop; [`NoticeBudget`] bounds them instead (in count and in
//! bytes, dropping what exceeds a bound).

use crate::wire::message::{ChildId, RpcError, encode_notification, encode_request};
use crate::wire::transport::Writer;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio::sync::{Semaphore, oneshot};

pub use super::notices::NoticeBudget;
use crate::cancel::CancelToken;

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
    Cancelled,
    /// The host answered with an error.
    Rpc(RpcError),
    /// The request could not be written (too large, ids exhausted, stdout
    /// closed); the text says which.
    Refused(String),
}

type Reply = Result<Value, ChildError>;

pub struct ChildRequests {
    next: AtomicU64,
    pending: Mutex<HashMap<ChildId, oneshot::Sender<Reply>>>,
    interactive: Semaphore,
    /// The bounds on reverse notifications.
    pub notices: NoticeBudget,
}

impl Default for ChildRequests {
    fn default() -> Self {
        Self::new()
    }
}

impl ChildRequests {
    pub fn new() -> Self {
        ChildRequests {
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

    /// [`ChildRequests::call`], telling `issued` the child's id once it waits
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
        let _permit = tokio::select! {
            permit = self.interactive.acquire() => permit.map_err(|_| ChildError::Refused("the shim is shutting down".into()))?,
            () = cancel.cancelled() => return Err(ChildError::Cancelled),
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
                Err(ChildError::Cancelled)
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
    pub fn abandon(&self, id: &ChildId) -> bool {
        match self.lock().remove(id) {
            Some(waiter) => {
                let _ = waiter.send(Err(ChildError::Cancelled));
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
