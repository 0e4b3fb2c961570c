//! One admitted host request as every part of the protocol layer sees it:
//! its id and kind, its cancellation and deadline, and its one terminal
//! claim. It sits below the session (which keeps the table of them) so the
//! child requests, the services and the lanes can hold one without
//! importing the session.

use crate::cancel::CancelToken;
use crate::protocol::deadlines::Kind;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use tokio::time::Instant;

/// One admitted host request.
pub struct RequestState {
    pub id: u64,
    pub kind: Kind,
    /// Model tool calls and declared commands may make child requests
    /// (docs/protocol.md#active-parent); other handlers may not.
    pub active_parent: bool,
    pub cancel: CancelToken,
    pub deadline: Instant,
    /// The terminal claim: `true` once an answer was queued. Held while a
    /// progress frame is queued, so progress never follows the answer.
    pub(crate) settled: tokio::sync::Mutex<bool>,
    /// Fires once the request has its answer (ends its deadline timer).
    pub finished: CancelToken,
    /// Set when the shim's own deadline answered the request: the guest has
    /// overrun already, so it is stopped without the cancel grace.
    pub expired: AtomicBool,
    progress_sequence: AtomicU64,
    /// Its usage receipt while it runs; set only when receipts are on.
    pub receipt: crate::receipts::Slot,
}

impl RequestState {
    /// A request just admitted: not cancelled, not answered.
    pub(crate) fn new(id: u64, kind: Kind, active_parent: bool, deadline: Instant) -> RequestState {
        RequestState {
            id,
            kind,
            active_parent,
            cancel: CancelToken::new(),
            deadline,
            settled: tokio::sync::Mutex::new(false),
            finished: CancelToken::new(),
            expired: AtomicBool::new(false),
            progress_sequence: AtomicU64::new(0),
            receipt: crate::receipts::Slot::new(),
        }
    }

    /// A never-cancelled stand-in for child requests made outside any
    /// request (API 0.1 guests may confirm from anywhere).
    pub(crate) fn detached() -> RequestState {
        RequestState::new(0, Kind::Command, false, Instant::now())
    }

    pub(crate) fn next_sequence(&self) -> u64 {
        self.progress_sequence.fetch_add(1, Ordering::Relaxed) + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_new_request_is_open_and_numbers_its_progress_from_one() {
        let deadline = Instant::now() + Duration::from_secs(5);
        let state = RequestState::new(7, Kind::Tool, true, deadline);
        assert_eq!(
            (state.id, state.kind, state.active_parent),
            (7, Kind::Tool, true)
        );
        assert_eq!(state.deadline, deadline);
        assert!(!state.cancel.is_cancelled());
        assert!(!state.finished.is_cancelled());
        assert!(!state.expired.load(Ordering::Relaxed));
        assert!(!*state.settled.lock().await);
        assert_eq!(
            [
                state.next_sequence(),
                state.next_sequence(),
                state.next_sequence()
            ],
            [1, 2, 3]
        );
    }

    #[test]
    fn a_detached_scope_may_not_parent_child_requests() {
        let state = RequestState::detached();
        assert_eq!((state.id, state.kind), (0, Kind::Command));
        assert!(!state.active_parent);
        assert!(!state.cancel.is_cancelled());
    }

    #[test]
    fn progress_sequences_are_per_request() {
        let now = Instant::now();
        let (a, b) = (
            RequestState::new(1, Kind::Tool, true, now),
            RequestState::new(2, Kind::Tool, true, now),
        );
        assert_eq!(a.next_sequence(), 1);
        assert_eq!(a.next_sequence(), 2);
        assert_eq!(b.next_sequence(), 1);
    }
}
