//! The event loop: everything that drives the shim (host frames, end of
//! input) arrives here and is handled in one place.
//!
//! The loop never runs guest code (lanes do) and never waits on the guest,
//! except while answering `initialize`, when the host sends nothing else.

use super::lanes::Job;
use super::session::{Refusal, Session};
use super::shutdown;
use super::work::{self, Plan};
use crate::log::Level;
use crate::protocol::handshake::startup;
use crate::runtime::Runtime;
use crate::runtime::component_file::ComponentFile;
use crate::wire::message::{ChildId, Inbound, Params, Rejection, RpcError};
use crate::wire::transport::{self, Input, Writer};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

pub use crate::protocol::handshake::startup::Options;

/// The SDK's drain on end of input (docs/protocol.md#end-of-input).
const EOF_DRAIN: Duration = Duration::from_millis(2_000);
enum Phase {
    Starting,
    Ready(Box<startup::Running>),
    Draining,
}

/// Serves the wire until shutdown or end of input; returns the exit code.
///
/// The loop runs as a task of the protocol runtime rather than as the
/// future `block_on` polls: waking the `block_on` future always goes
/// through the driver's unpark (an eventfd write, then one more
/// `epoll_wait`, on every request), while a spawned task woken on its own
/// thread is queued locally. `component` is what `run` read (or why it
/// could not).
pub async fn serve(options: Options, component: Result<ComponentFile, String>) -> i32 {
    match tokio::spawn(serve_loop(options, component)).await {
        Ok(code) => code,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(_) => 1,
    }
}

async fn serve_loop(options: Options, component: Result<ComponentFile, String>) -> i32 {
    let initialize_deadline = Instant::now() + startup::INITIALIZE_BUDGET;
    let writer = Writer::stdout();
    let session = Arc::new(Session::new(writer.clone()));
    let mut input = transport::spawn_reader();
    let loader = startup::start_loading(options.clone(), component);
    let mut loaded: Option<Result<Arc<Runtime<Session>>, String>> = None;
    let mut loader = Some(loader);
    let mut phase = Phase::Starting;
    // The shutdown task owns the drain and the acknowledgement; the loop
    // keeps answering input meanwhile, and exits once the task is done.
    let mut shutting_down: Option<tokio::task::JoinHandle<()>> = None;

    loop {
        // Input first: a request that is already here when the shutdown
        // acknowledgement goes out still gets its answer below.
        let event = tokio::select! {
            biased;
            event = input.recv() => event,
            () = shutdown::shutdown_finished(&mut shutting_down) => {
                shutdown::answer_buffered(&session, &mut input).await;
                writer.flushed().await;
                crate::log!(Level::Info, "shutdown acknowledged; exiting");
                return 0;
            }
        };
        let Some(event) = event else { return 0 };
        match event {
            Input::Message(Inbound::Request {
                id,
                method,
                params,
                bytes,
            }) => match &phase {
                Phase::Starting if method == "initialize" => {
                    if loaded.is_none()
                        && let Some(task) = loader.take()
                    {
                        let outcome = tokio::time::timeout_at(initialize_deadline, task).await;
                        loaded = Some(match outcome {
                            Ok(Ok(result)) => result,
                            Ok(Err(err)) => Err(format!("component loading crashed: {err}")),
                            Err(_) => Err(format!(
                                "loading (compiling) the component took longer than the {} s the shim allows inside octet's 30 s initialize timeout; precompile it at install time with `octet-wasm compile`",
                                startup::INITIALIZE_BUDGET.as_secs()
                            )),
                        });
                    }
                    let runtime = loaded
                        .clone()
                        .unwrap_or_else(|| Err("component not loaded".into()));
                    match startup::initialize(
                        &session,
                        &options,
                        runtime,
                        &params.value(),
                        initialize_deadline,
                    )
                    .await
                    {
                        Ok((reply, running)) => {
                            session.answer(id, Ok(reply)).await;
                            session.mark_ready();
                            phase = Phase::Ready(running);
                        }
                        Err(error) => {
                            crate::log!(Level::Error, "initialize failed", "error" => error.message.clone());
                            session.answer(id, Err(error)).await;
                        }
                    }
                }
                Phase::Starting if method == "shutdown" => {
                    // After a failed initialize the host still shuts the
                    // extension down: there is nothing to drain.
                    session.answer(id, Ok(json!({}))).await;
                    writer.flushed().await;
                    crate::log!(
                        Level::Info,
                        "shutdown acknowledged before a successful initialize; exiting"
                    );
                    return 0;
                }
                Phase::Starting => {
                    session.answer(id, Err(not_first())).await;
                }
                Phase::Ready(running) => {
                    if method == "shutdown" {
                        let lanes_context = running.context.clone();
                        let Phase::Ready(running) = std::mem::replace(&mut phase, Phase::Draining)
                        else {
                            unreachable!("matched Ready above")
                        };
                        shutting_down = Some(tokio::spawn(shutdown::shutdown(
                            session.clone(),
                            running.lanes,
                            lanes_context,
                            id,
                            params.value().into_owned(),
                        )));
                    } else {
                        handle_request(&session, running, id, &method, &params, bytes).await;
                    }
                }
                Phase::Draining => {
                    let message = if method == "shutdown" {
                        "extension is already draining"
                    } else {
                        "extension is draining"
                    };
                    session.answer(id, Err(RpcError::server(message))).await;
                }
            },
            Input::Message(Inbound::Notification { method, params }) => {
                handle_notification(&session, &phase, &method, &params).await;
            }
            Input::Message(Inbound::Response { id, outcome }) => {
                session.child_requests.resolve(&id, outcome)
            }
            Input::Rejected(Rejection::Answer { id, error }) => {
                if matches!(phase, Phase::Starting) {
                    crate::log!(Level::Warning, "invalid input before initialize; not answered", "error" => error.message);
                } else {
                    session.answer(id, Err(error)).await;
                }
            }
            Input::Rejected(Rejection::Log { reason }) => crate::log!(Level::Warning, reason),
            Input::TooLong { bytes } => {
                crate::log!(Level::Warning, "invalid protocol input: line exceeds the 1 MiB frame limit; discarded",
                "bytes" => bytes, "limit_bytes" => crate::wire::MAX_FRAME_BYTES)
            }
            Input::Closed { error } => {
                crate::log!(Level::Info, "extension stdin closed", "error" => error);
                if let Some(task) = shutting_down.take() {
                    // The admitted shutdown drains and answers first.
                    let _ = task.await;
                }
                if let Phase::Ready(running) = phase {
                    shutdown::drain(
                        &session,
                        EOF_DRAIN,
                        "transport_lost",
                        running.context.deadlines.cancel_grace,
                    )
                    .await;
                }
                session
                    .child_requests
                    .fail_all("stdin closed while waiting for host response");
                writer.flushed().await;
                return 0;
            }
        }
    }
}

/// The SDK's answer to any request before (or a second) `initialize`.
fn not_first() -> RpcError {
    RpcError::invalid_request("initialize must be the first request")
}

async fn handle_request(
    session: &Arc<Session>,
    running: &startup::Running,
    id: u64,
    method: &str,
    params: &Params,
    bytes: usize,
) {
    let Some(setup) = session.setup() else { return };
    // Answers the guest never sees, each with its receipt when they are on.
    let direct = move |answer| session.answer_direct(id, method, bytes, answer);
    if method == "initialize" {
        direct(Err(not_first())).await;
        return;
    }
    if session.request(id).is_some() {
        direct(Err(RpcError::invalid_request(
            "duplicate active request id",
        )))
        .await;
        return;
    }
    let plan = work::plan(id, method, params, &running.context.guest, setup);
    let (work, kind, active_parent) = match plan {
        None => {
            direct(Err(work::unknown_method(method))).await;
            return;
        }
        Some(Plan::Answer(answer)) => {
            direct(answer).await;
            return;
        }
        Some(Plan::Run {
            work,
            kind,
            active_parent,
        }) => (work, kind, active_parent),
    };
    if let Some(owner) = &work.context().resource_owner {
        session.services.issue_owner(owner);
    }
    let limit = running.context.deadlines.for_kind(kind);
    let request = match session.admit(id, kind, active_parent, Instant::now() + limit) {
        Ok(request) => request,
        Err(Refusal::Duplicate) => {
            direct(Err(RpcError::invalid_request(
                "duplicate active request id",
            )))
            .await;
            return;
        }
        Err(Refusal::QueueFull) => {
            direct(Err(RpcError::server("extension request queue is full"))).await;
            return;
        }
    };
    let tool = match &work {
        work::Work::Tool { call, .. } => Some(call.name.as_str()),
        _ => None,
    };
    crate::receipts::admitted(&request.receipt, method, bytes, tool);
    running.deadlines.arm(request.deadline);
    if let Err(job) = running.lanes.dispatch(Job::Request {
        request: request.clone(),
        work,
    }) {
        drop(job);
        session
            .settle(
                &request,
                Err(RpcError::server("extension request queue is full")),
            )
            .await;
    }
}

async fn handle_notification(session: &Arc<Session>, phase: &Phase, method: &str, params: &Value) {
    let Phase::Ready(running) = phase else {
        if !matches!(phase, Phase::Draining) || method != "$/cancelRequest" {
            crate::log!(Level::Debug, "notification ignored in this phase", "method" => method);
            return;
        }
        cancel_request(session, params).await;
        return;
    };
    if method == "$/cancelRequest" {
        cancel_request(session, params).await;
        return;
    }
    if method == crate::protocol::imports::composition::updates::METHOD {
        crate::protocol::imports::composition::updates::route_update(session, params);
        return;
    }
    let Some(setup) = session.setup() else { return };
    if let Some(event) = work::lifecycle_event(method, params) {
        let handled = running
            .context
            .guest
            .description
            .lifecycle
            .contains(&event.kind);
        if !setup.negotiated.lifecycle.iter().any(|m| m == method) || !handled {
            crate::log!(Level::Warning, "lifecycle event not subscribed; ignored", "event" => method);
            return;
        }
        if !session.admit_lifecycle() {
            let dropped = LIFECYCLE_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            crate::log!(Level::Warning, "lifecycle queue full; lifecycle event dropped (the guest is not told)",
                "event" => method, "queue" => super::session::LIFECYCLE_LIMIT, "dropped_so_far" => dropped);
            return;
        }
        if running.lanes.dispatch(Job::Lifecycle(event)).is_err() {
            session.lifecycle_done();
            crate::log!(Level::Warning, "lifecycle event dropped", "event" => method);
        }
        return;
    }
    crate::log!(Level::Warning, "unknown notification ignored", "method" => method);
}

/// Lifecycle events dropped because their queue was full, for the logs.
static LIFECYCLE_DROPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

async fn cancel_request(session: &Arc<Session>, params: &Value) {
    let reason = params
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("cancelled")
        .to_owned();
    match params.get("id") {
        Some(Value::Number(n)) if n.as_u64().is_some() => {
            let id = n.as_u64().unwrap_or_default();
            match session.request(id) {
                Some(request) => {
                    session
                        .cancel(&request, &reason, Err(RpcError::cancelled(&reason)))
                        .await
                }
                None => {
                    if !session.child_requests.abandon(&ChildId::Number(id)) {
                        crate::log!(Level::Debug, "cancellation for an unknown or settled request ignored", "request_id" => id);
                    }
                }
            }
        }
        Some(Value::String(text)) => {
            session.child_requests.abandon(&ChildId::Text(text.clone()));
        }
        _ => crate::log!(Level::Warning, "$/cancelRequest without a valid id ignored"),
    }
}
