//! A cancellation state shared by the request table, the guest's
//! `cancellation` imports and the task that runs the guest.
//!
//! It knows nothing of JSON-RPC: a reason is just text (`user`, `timeout`,
//! `shutdown`, ...), recorded once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use tokio::sync::Notify;

/// A clonable handle; every clone sees the same state.
#[derive(Clone, Default, Debug)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Default, Debug)]
struct Inner {
    cancelled: AtomicBool,
    reason: OnceLock<String>,
    notify: Notify,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels with `reason`. Only the first call counts; returns whether
    /// this call was it.
    pub fn cancel(&self, reason: &str) -> bool {
        if self.inner.reason.set(reason.to_owned()).is_err() {
            return false;
        }
        self.inner.cancelled.store(true, Ordering::Release);
        self.inner.notify.notify_waiters();
        true
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    pub fn reason(&self) -> Option<String> {
        if self.is_cancelled() {
            self.inner.reason.get().cloned()
        } else {
            None
        }
    }

    /// Resolves once the token is cancelled (at once if it already is).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            // Register before checking, so a cancel between the check and the
            // await is not missed.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn first_reason_wins_and_waiters_wake() {
        let token = CancelToken::new();
        let waiter = {
            let token = token.clone();
            tokio::spawn(async move { token.cancelled().await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(token.cancel("user"));
        assert!(!token.cancel("timeout"));
        waiter.await.unwrap();
        assert_eq!(token.reason().as_deref(), Some("user"));
    }
}
