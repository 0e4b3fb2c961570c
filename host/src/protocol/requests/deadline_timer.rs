//! One timer for every request deadline.
//!
//! Each admitted request used to get a task of its own, sleeping until its
//! deadline or until the request ended: a spawn, a timer-wheel entry, a
//! wake-up and a free on every call (about 7 % of a small call's
//! instructions, BENCHMARKS.md). Now one task sleeps until the earliest
//! deadline it was told about. Arming a request whose deadline is later
//! than that (the usual case: deadlines of one kind are admitted in order)
//! is one lock and one comparison; the task is woken only when a deadline
//! is earlier than the one it sleeps for.
//!
//! The active-request table ([`Session`]) stays the one truth: when the
//! task wakes it answers every active request whose deadline has passed
//! (exactly as the per-request task did) and sleeps until the earliest
//! deadline still ahead. A request that ended before its deadline left the
//! table, so a wake-up for it finds nothing to do.

use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;
use tokio::time::Instant;

/// The shared deadline timer (see the module docs).
#[derive(Default)]
pub struct Watch {
    /// When the task wakes next; `None` while it waits for a first deadline.
    next: Mutex<Option<Instant>>,
    /// Wakes the task when a deadline earlier than `next` is armed.
    earlier: Notify,
}

impl Watch {
    /// Makes sure the task wakes by `deadline`.
    pub fn arm(&self, deadline: Instant) {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if next.is_none_or(|at| deadline < at) {
            *next = Some(deadline);
            drop(next);
            self.earlier.notify_one();
        }
    }

    fn next(&self) -> Option<Instant> {
        *self.next.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Serves the deadlines of `session` for as long as the process lives:
    /// `expire` answers one request whose deadline has passed. Spawn it on
    /// the runtime that serves the session.
    pub async fn run<F, Fut>(self: Arc<Self>, session: Arc<Session>, expire: F)
    where
        F: Fn(Arc<RequestState>) -> Fut,
        Fut: Future<Output = ()>,
    {
        loop {
            match self.next() {
                None => self.earlier.notified().await,
                Some(at) => {
                    tokio::select! {
                        biased;
                        () = self.earlier.notified() => continue,
                        () = tokio::time::sleep_until(at) => {}
                    }
                    // Deadlines armed while this scan awaits land in
                    // `next` again (it is `None` meanwhile).
                    *self.next.lock().unwrap_or_else(|e| e.into_inner()) = None;
                    let now = Instant::now();
                    let mut ahead: Option<Instant> = None;
                    for request in session.active() {
                        if request.deadline <= now {
                            expire(request).await;
                        } else if ahead.is_none_or(|a| request.deadline < a) {
                            ahead = Some(request.deadline);
                        }
                    }
                    if let Some(ahead) = ahead {
                        // This task is the waiter: no wake-up needed.
                        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
                        if next.is_none_or(|at| ahead < at) {
                            *next = Some(ahead);
                        }
                    }
                }
            }
        }
    }
}
