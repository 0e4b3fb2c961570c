//! `shutdown` and the end of the process: the drain within the host's 2 s
//! (docs/protocol.md#shutdown), the guest's shutdown handler, the
//! acknowledgement, and the requests that still arrive behind it, which
//! are refused rather than lost.

use super::lanes::{Job, LaneContext, Lanes};
use super::session::Session;
use crate::log::Level;
use crate::wire::message::{Inbound, Rejection, RpcError};
use crate::wire::transport::Input;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Longest local drain before a `shutdown` acknowledgement: the host waits
/// 2 s for the ack, and cancelling, the cancel grace and the guest's own
/// shutdown handler must fit in the rest.
const SHUTDOWN_DRAIN: Duration = Duration::from_millis(1_000);
/// Budget of the guest's shutdown handler.
const SHUTDOWN_HANDLER: Duration = Duration::from_millis(300);
/// From `shutdown` to its acknowledgement, all stages together: the host
/// waits 2 s, and the frame must still be written and read.
const SHUTDOWN_ACK_BUDGET: Duration = Duration::from_millis(1_800);
/// Resolves when the shutdown task has acknowledged; never without one.
pub(crate) async fn shutdown_finished(task: &mut Option<tokio::task::JoinHandle<()>>) {
    match task {
        Some(handle) => {
            let _ = handle.await;
            *task = None;
        }
        None => std::future::pending().await,
    }
}

/// How long, after the acknowledgement, input that is already on its way
/// is still read and answered before the process exits (the host's exit
/// stage allows 2 s; end of input ends the wait at once). octet itself
/// sends nothing after `shutdown`, but a request written right behind it
/// may not be in the pipe yet when the acknowledgement goes out; without
/// this wait it would be lost instead of refused (e2e
/// `eof_races::a_call_after_shutdown_and_before_eof_is_refused_not_lost`),
/// so every exit pays it (BENCHMARKS.md, shutdown).
const AFTER_ACK_READ: Duration = Duration::from_millis(5);

/// Answers the requests that arrived while the shutdown drained, or are
/// arriving as it finishes: they are refused like every request after
/// `shutdown`, never left without an answer.
pub(crate) async fn answer_buffered(
    session: &Arc<Session>,
    input: &mut tokio::sync::mpsc::Receiver<Input>,
) {
    while let Ok(Some(event)) = tokio::time::timeout(AFTER_ACK_READ, input.recv()).await {
        match event {
            Input::Message(Inbound::Request { id, .. }) => {
                session
                    .answer(id, Err(RpcError::server("extension is draining")))
                    .await;
            }
            Input::Rejected(Rejection::Answer { id, error }) => {
                session.answer(id, Err(error)).await;
            }
            Input::Closed { .. } => return,
            _ => {}
        }
    }
}

/// Waits up to `budget` for in-flight work, then cancels the rest with
/// `reason` and gives cooperative guests the cancel grace.
pub(crate) async fn drain(session: &Arc<Session>, budget: Duration, reason: &str, grace: Duration) {
    let deadline = Instant::now() + budget;
    let mut changes = session.watch_changes();
    while !session.idle() {
        if tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_err()
        {
            break;
        }
    }
    let rest = session.active();
    if rest.is_empty() {
        return;
    }
    for request in &rest {
        session
            .cancel(request, reason, Err(RpcError::cancelled(reason)))
            .await;
    }
    let _ = tokio::time::timeout(grace, async {
        while !session.idle() {
            if changes.changed().await.is_err() {
                return;
            }
        }
    })
    .await;
}

pub(crate) async fn shutdown(
    session: Arc<Session>,
    lanes: Lanes,
    context: Arc<LaneContext>,
    id: u64,
    params: Value,
) {
    // Everything up to the acknowledgement fits in SHUTDOWN_ACK_BUDGET,
    // whatever cancel grace the manifest asked for: the drain gets what the
    // grace and the handler leave of it.
    let ack_deadline = Instant::now() + SHUTDOWN_ACK_BUDGET;
    let grace = context.deadlines.cancel_grace;
    let drain_budget = params
        .get("drain_timeout_ms")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .map_or(SHUTDOWN_DRAIN, |requested| requested.min(SHUTDOWN_DRAIN))
        .min(SHUTDOWN_ACK_BUDGET.saturating_sub(grace + SHUTDOWN_HANDLER));
    drain(
        &session,
        drain_budget,
        "shutdown",
        context.deadlines.cancel_grace,
    )
    .await;
    let (done, result) = tokio::sync::oneshot::channel();
    let outcome = match lanes.dispatch(Job::Shutdown(done)) {
        Ok(()) => {
            let handler_until = ack_deadline.max(Instant::now() + Duration::from_millis(50));
            match tokio::time::timeout_at(handler_until, result).await {
                Ok(Ok(Ok(()))) => Ok(json!({})),
                Ok(Ok(Err(error))) => {
                    crate::log!(Level::Error, "the guest's shutdown handler failed", "error" => error.clone());
                    Err(RpcError::internal("shutdown failed"))
                }
                _ => {
                    crate::log!(
                        Level::Warning,
                        "the guest's shutdown handler did not finish in time; acknowledging anyway"
                    );
                    Ok(json!({}))
                }
            }
        }
        Err(_) => Ok(json!({})),
    };
    session.answer(id, outcome).await;
    session.writer().flushed().await;
}
