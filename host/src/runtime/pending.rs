//! A composition call in flight, as the guest holds it (the WIT resource
//! `composition.pending-call`): a bounded queue of the partial results
//! that arrived for it and the final reply to come.
//!
//! This layer only keeps and hands out what the protocol layer pushes; which
//! updates are accepted (request, order, size, nesting) is decided there
//! (docs/api-0.4.md#v04-composition-updates). The queue is bounded by count
//! and by bytes, and when it is full the oldest update gives way: the newest
//! partial result is the most complete one, and the reader of stdin never
//! waits for a guest.

use super::types::{CompositionUpdate, GuestError};
use crate::cancel::CancelToken;
use std::collections::VecDeque;
use std::sync::Mutex;
use tokio::sync::{Notify, oneshot};

/// Partial results waiting for the guest, bounded.
pub struct UpdateQueue {
    state: Mutex<QueueState>,
    changed: Notify,
    max_items: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct QueueState {
    items: VecDeque<CompositionUpdate>,
    bytes: usize,
    /// No more updates will be pushed.
    closed: bool,
}

/// What [`UpdateQueue::push`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Queued; `dropped` older updates gave way to it.
    Queued { dropped: usize },
    /// The queue was closed (the call ended): not queued.
    Closed,
}

impl UpdateQueue {
    pub fn new(max_items: usize, max_bytes: usize) -> UpdateQueue {
        UpdateQueue {
            state: Mutex::new(QueueState::default()),
            changed: Notify::new(),
            max_items: max_items.max(1),
            max_bytes,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `update`, dropping the oldest ones while the queue would hold
    /// more than its bounds. An update larger than the byte bound on its own
    /// is the caller's to refuse; here it would empty the queue.
    pub fn push(&self, update: CompositionUpdate) -> Pushed {
        let mut state = self.lock();
        if state.closed {
            return Pushed::Closed;
        }
        let size = update.result.len();
        let mut dropped = 0;
        while !state.items.is_empty()
            && (state.items.len() >= self.max_items || state.bytes + size > self.max_bytes)
        {
            if let Some(old) = state.items.pop_front() {
                state.bytes -= old.result.len();
                dropped += 1;
            }
        }
        state.bytes += size;
        state.items.push_back(update);
        drop(state);
        self.changed.notify_waiters();
        Pushed::Queued { dropped }
    }

    /// No more updates come; what is queued can still be read.
    pub fn close(&self) {
        self.lock().closed = true;
        self.changed.notify_waiters();
    }

    /// No more updates come and the queued ones are freed. Returns how many
    /// were discarded unread.
    pub fn discard(&self) -> usize {
        let mut state = self.lock();
        state.closed = true;
        let unread = state.items.len();
        state.items = VecDeque::new();
        state.bytes = 0;
        drop(state);
        self.changed.notify_waiters();
        unread
    }

    /// Updates queued now.
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next update, waiting for one; `None` once the queue is closed
    /// and empty.
    pub async fn next(&self) -> Option<CompositionUpdate> {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.lock();
                if let Some(update) = state.items.pop_front() {
                    state.bytes -= update.result.len();
                    return Some(update);
                }
                if state.closed {
                    return None;
                }
            }
            notified.await;
        }
    }
}

/// The guest's handle on one call: its updates, its final reply, and the
/// token that abandons it. Dropping the handle (the guest dropped the
/// resource, or the instance went away) abandons a call still in flight
/// and frees its queue.
pub struct PendingCall {
    updates: std::sync::Arc<UpdateQueue>,
    outcome: Option<oneshot::Receiver<Result<String, GuestError>>>,
    abandon: CancelToken,
}

impl PendingCall {
    /// `abandon` is cancelled when the handle is dropped; the protocol
    /// layer stops waiting for octet then.
    pub fn new(
        updates: std::sync::Arc<UpdateQueue>,
        outcome: oneshot::Receiver<Result<String, GuestError>>,
        abandon: CancelToken,
    ) -> PendingCall {
        PendingCall {
            updates,
            outcome: Some(outcome),
            abandon,
        }
    }

    /// The queue, for waiting on it without holding the handle.
    pub fn updates(&self) -> std::sync::Arc<UpdateQueue> {
        self.updates.clone()
    }

    /// Takes the final reply's receiver; `None` after the first `finish`.
    pub fn take_outcome(&mut self) -> Option<oneshot::Receiver<Result<String, GuestError>>> {
        self.outcome.take()
    }
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.updates.discard();
        self.abandon.cancel("cancelled");
    }
}

/// Waits for a final reply taken with [`PendingCall::take_outcome`].
pub async fn finish(
    outcome: Option<oneshot::Receiver<Result<String, GuestError>>>,
    updates: &UpdateQueue,
) -> Result<String, GuestError> {
    let Some(outcome) = outcome else {
        return Err(GuestError::Failed(
            "finish was already called on this composition call".into(),
        ));
    };
    let result = outcome.await.unwrap_or_else(|_| {
        Err(GuestError::Failed(
            "the composition call ended without a reply".into(),
        ))
    });
    updates.discard();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(sequence: u64, result: &str) -> CompositionUpdate {
        CompositionUpdate {
            sequence,
            result: result.to_owned(),
        }
    }

    #[tokio::test]
    async fn oldest_give_way_by_count_and_bytes() {
        let queue = UpdateQueue::new(3, 10);
        for sequence in 1..=3 {
            assert_eq!(
                queue.push(update(sequence, "12")),
                Pushed::Queued { dropped: 0 }
            );
        }
        assert_eq!(queue.push(update(4, "12")), Pushed::Queued { dropped: 1 });
        // 3 queued of 2 bytes; 8 more bytes need two to go.
        assert_eq!(
            queue.push(update(5, "12345678")),
            Pushed::Queued { dropped: 2 }
        );
        assert_eq!(queue.next().await.unwrap().sequence, 4);
        assert_eq!(queue.next().await.unwrap().sequence, 5);
        queue.close();
        assert!(queue.next().await.is_none());
        assert_eq!(queue.push(update(6, "1")), Pushed::Closed);
    }

    #[tokio::test]
    async fn closing_hands_out_what_is_queued_first() {
        let queue = std::sync::Arc::new(UpdateQueue::new(64, 1 << 20));
        let reader = {
            let queue = queue.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while let Some(update) = queue.next().await {
                    seen.push(update.sequence);
                }
                seen
            })
        };
        tokio::task::yield_now().await;
        queue.push(update(1, "a"));
        queue.push(update(2, "b"));
        queue.close();
        assert_eq!(reader.await.unwrap(), [1, 2]);
    }

    #[tokio::test]
    async fn dropping_the_handle_abandons_and_frees() {
        let queue = std::sync::Arc::new(UpdateQueue::new(64, 1 << 20));
        let (tx, rx) = oneshot::channel();
        let abandon = CancelToken::new();
        let call = PendingCall::new(queue.clone(), rx, abandon.clone());
        queue.push(update(1, "a"));
        drop(call);
        assert!(abandon.is_cancelled());
        assert!(queue.is_empty());
        assert_eq!(queue.push(update(2, "b")), Pushed::Closed);
        assert!(tx.send(Ok("late".into())).is_err());
    }

    #[tokio::test]
    async fn finish_once() {
        let queue = std::sync::Arc::new(UpdateQueue::new(64, 1 << 20));
        let (tx, rx) = oneshot::channel();
        let mut call = PendingCall::new(queue.clone(), rx, CancelToken::new());
        tx.send(Ok("{}".into())).unwrap();
        assert_eq!(finish(call.take_outcome(), &queue).await.unwrap(), "{}");
        assert!(matches!(
            finish(call.take_outcome(), &queue).await,
            Err(GuestError::Failed(m)) if m.contains("already")
        ));
    }
}
