//! The event loop: everything that drives the shim (host frames, end of
//! input) arrives here and is handled in one place.
//!
//! The loop never runs guest code (lanes do) and never waits on the guest,
//! except while answering `initialize`, when the host sends nothing else.

use super::deadlines::Deadlines;
use super::deadlines::watch::Watch;
use super::initialize;
use super::lanes::{self, Job, LaneContext, Lanes};
use super::request_state::RequestState;
use super::session::{Refusal, Session, Setup};
use super::work::{self, Guest, Plan};
use super::{catalog, sandbox_from};
use crate::log::Level;
use crate::runtime::cache::Cache;
use crate::runtime::types::InitParams;
use crate::runtime::{Limits, LoadSource, Runtime};
use crate::wire::message::{ChildId, Inbound, Rejection, RpcError};
use crate::wire::transport::{self, Input, Writer};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How the shim was started.
#[derive(Debug, Clone)]
pub struct Options {
    pub component: PathBuf,
    pub limits: Limits,
    pub deadlines: Deadlines,
    pub cache: Option<Cache>,
    /// Refuse the component unless its SHA-256 is this (lowercase hex).
    pub sha256: Option<String>,
}

/// Longest local drain before a `shutdown` acknowledgement: the host waits
/// 2 s for the ack, and cancelling, the cancel grace and the guest's own
/// shutdown handler must fit in the rest.
const SHUTDOWN_DRAIN: Duration = Duration::from_millis(1_000);
/// Budget of the guest's shutdown handler.
const SHUTDOWN_HANDLER: Duration = Duration::from_millis(300);
/// From `shutdown` to its acknowledgement, all stages together: the host
/// waits 2 s, and the frame must still be written and read.
const SHUTDOWN_ACK_BUDGET: Duration = Duration::from_millis(1_800);
/// The SDK's drain on end of input (docs/protocol.md#end-of-input).
const EOF_DRAIN: Duration = Duration::from_millis(2_000);
/// octet waits 30 s for the `initialize` answer
/// (docs/protocol.md#initialize-ordering) and kills the extension after
/// that. Loading the component, the guest's `describe` and its `init` all
/// happen inside that wait, so together they get 27 s from process start: a
/// guest spinning or blocked in either is answered with an initialize error
/// the host can show, 3 s before the host would give up on its own.
const INITIALIZE_BUDGET: Duration = Duration::from_millis(27_000);

enum Phase {
    Starting,
    Ready(Box<Running>),
    Draining,
}

struct Running {
    lanes: Lanes,
    context: Arc<LaneContext>,
    /// The one timer of every request deadline.
    deadlines: Arc<Watch>,
}

/// Serves the wire until shutdown or end of input; returns the exit code.
///
/// The loop runs as a task of the protocol runtime rather than as the
/// future `block_on` polls: waking the `block_on` future always goes
/// through the driver's unpark (an eventfd write, then one more
/// `epoll_wait`, on every request), while a spawned task woken on its own
/// thread is queued locally.
pub async fn serve(options: Options) -> i32 {
    match tokio::spawn(serve_loop(options)).await {
        Ok(code) => code,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(_) => 1,
    }
}

async fn serve_loop(options: Options) -> i32 {
    let initialize_deadline = Instant::now() + INITIALIZE_BUDGET;
    let writer = Writer::stdout();
    let session = Arc::new(Session::new(writer.clone()));
    let mut input = transport::spawn_reader();
    let loader = start_loading(options.clone());
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
            () = shutdown_finished(&mut shutting_down) => {
                answer_buffered(&session, &mut input).await;
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
                                INITIALIZE_BUDGET.as_secs()
                            )),
                        });
                    }
                    let runtime = loaded
                        .clone()
                        .unwrap_or_else(|| Err("component not loaded".into()));
                    match initialize(&session, &options, runtime, &params, initialize_deadline)
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
                        shutting_down = Some(tokio::spawn(shutdown(
                            session.clone(),
                            running.lanes,
                            lanes_context,
                            id,
                            params,
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
                session.children.resolve(&id, outcome)
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
                    drain(
                        &session,
                        EOF_DRAIN,
                        "transport_lost",
                        running.context.deadlines.cancel_grace,
                    )
                    .await;
                }
                session
                    .children
                    .fail_all("stdin closed while waiting for host response");
                writer.flushed().await;
                return 0;
            }
        }
    }
}

/// Resolves when the shutdown task has acknowledged; never without one.
async fn shutdown_finished(task: &mut Option<tokio::task::JoinHandle<()>>) {
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
async fn answer_buffered(session: &Arc<Session>, input: &mut tokio::sync::mpsc::Receiver<Input>) {
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

/// The SDK's answer to any request before (or a second) `initialize`.
fn not_first() -> RpcError {
    RpcError::invalid_request("initialize must be the first request")
}

fn start_loading(
    options: Options,
) -> tokio::task::JoinHandle<Result<Arc<Runtime<Session>>, String>> {
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let bytes = std::fs::read(&options.component).map_err(|err| {
            format!(
                "cannot read the component {}: {err}",
                options.component.display()
            )
        })?;
        if let Some(expected) = &options.sha256 {
            let actual = crate::runtime::cache::sha256_hex(&bytes);
            if !actual.eq_ignore_ascii_case(expected) {
                return Err(format!(
                    "{} does not match its pinned digest: expected sha256 {expected}, found {actual}; refusing to run it (rebuild the pin with `octet-wasm manifest` or fix --sha256)",
                    options.component.display()
                ));
            }
        }
        let (runtime, source) = Runtime::load(
            &bytes,
            &options.component,
            options.limits.clone(),
            options.cache.as_ref(),
        )
        .map_err(|err| format!("{err:#}"))?;
        crate::log!(Level::Info, "component loaded",
            "source" => source.as_str(),
            "path" => options.component.display().to_string(),
            "bytes" => bytes.len(),
            "elapsed_ms" => started.elapsed().as_secs_f64() * 1000.0,
            "cache" => options.cache.as_ref().map(|c| c.dir().display().to_string()));
        if source == LoadSource::Compiled && options.cache.is_none() {
            crate::log!(
                Level::Warning,
                "compiled without a cache (--no-cache, or the user's cache was refused: see the warning above); every start compiles"
            );
        }
        Ok(Arc::new(runtime))
    })
}

/// Runs `step` of the guest's start-up unless `deadline` passes first.
async fn within<T>(
    deadline: Instant,
    step: &str,
    future: impl std::future::Future<Output = Result<T, RpcError>>,
) -> Result<T, RpcError> {
    tokio::time::timeout_at(deadline, future)
        .await
        .unwrap_or_else(|_| {
            Err(RpcError::internal(format!(
                "cannot start the extension: the guest's {step} did not return within the {} s the shim allows inside octet's 30 s initialize timeout (it is spinning or blocked)",
                INITIALIZE_BUDGET.as_secs()
            )))
        })
}

async fn initialize(
    session: &Arc<Session>,
    options: &Options,
    runtime: Result<Arc<Runtime<Session>>, String>,
    params: &Value,
    deadline: Instant,
) -> Result<(Value, Box<Running>), RpcError> {
    let env_version = std::env::var("OCTET_EXTENSION_API_VERSION").ok();
    let offer = initialize::check_params(params, env_version.as_deref())?;
    let runtime = runtime
        .map_err(|err| RpcError::internal(format!("cannot load the extension component: {err}")))?;
    let sandbox = sandbox_from(&offer, &options.limits)
        .map_err(|err| RpcError::internal(format!("cannot build the sandbox: {err}")))?;
    let start = |err: String| RpcError::internal(format!("cannot start the extension: {err}"));
    // The guest must never see a live cache key (runtime/cache).
    crate::runtime::cache::guard(&sandbox, options.cache.as_ref());
    // Receipts, when the user's policy asks, unless the guest can reach them.
    crate::receipts::start(&sandbox);
    let mut primary = within(deadline, "instantiation", async {
        runtime
            .instantiate(session.clone(), &sandbox)
            .await
            .map_err(|f| start(f.to_string()))
    })
    .await?;
    let description = within(deadline, "describe", async {
        primary.describe().await.map_err(|f| start(f.to_string()))
    })
    .await?;
    let catalog = catalog::build(offer.api, &description).map_err(|err| {
        RpcError::internal(format!("the extension's description is invalid: {err}"))
    })?;
    initialize::check_registration(&offer, &description)?;
    let negotiated = initialize::negotiate(&offer, &description);
    let reply = initialize::reply(offer.api, &description, &negotiated).map_err(|err| {
        RpcError::internal(format!("the extension's description is invalid: {err}"))
    })?;
    let init = InitParams {
        api_version: offer.api.as_str().into(),
        features: negotiated.features.clone(),
        workspace: sandbox
            .guest_workspace()
            .unwrap_or_else(|| offer.workspace.clone().unwrap_or_default()),
        initialize: params.to_string(),
    };
    within(deadline, "init", async {
        match primary.init(&init).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(start(format!(
                "the guest's init failed: {}",
                super::results::guest_error_text(&error)
            ))),
            Err(fault) => Err(start(fault.to_string())),
        }
    })
    .await?;
    let pool = negotiated.max_concurrent;
    crate::log!(Level::Info, "extension ready",
        "api_version" => offer.api.as_str(), "features" => negotiated.features.clone(),
        "max_concurrent_requests" => pool, "tools" => description.tools.len());
    let artifacts = negotiated.has(crate::protocol::feature::Feature::Artifacts);
    session.services.configure(&offer.capabilities);
    let dynamic = session.services.tools.clone();
    if offer.api.negotiates() {
        let initial = super::imports::catalogs::Snapshot::build(description.tools.clone())
            .map_err(|err| {
                RpcError::internal(format!("the extension's description is invalid: {err}"))
            })?;
        dynamic.reset(initial);
    }
    session.set_setup(Setup {
        api: offer.api,
        negotiated,
        contributes: offer.contributes.clone(),
    });
    let context = Arc::new(LaneContext {
        runtime,
        session: session.clone(),
        sandbox,
        init,
        guest: Guest {
            description,
            catalog,
            dynamic,
        },
        deadlines: options.deadlines.clone(),
        api: offer.api,
        artifacts,
    });
    let lanes = Lanes::start(context.clone(), primary, pool);
    let deadlines = Arc::new(Watch::default());
    let expiring = context.clone();
    tokio::spawn(deadlines.clone().run(session.clone(), move |request| {
        let context = expiring.clone();
        async move { expire(&context, request).await }
    }));
    Ok((
        reply,
        Box::new(Running {
            lanes,
            context,
            deadlines,
        }),
    ))
}

async fn handle_request(
    session: &Arc<Session>,
    running: &Running,
    id: u64,
    method: &str,
    params: &Value,
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

/// Answers `request` for the guest: its deadline has passed (the
/// [`Watch`] found it still active).
async fn expire(context: &LaneContext, request: Arc<RequestState>) {
    let limit = context.deadlines.for_kind(request.kind);
    crate::log!(Level::Warning, "request deadline passed; answering for the guest",
        "request_id" => request.id, "deadline_ms" => limit.as_millis() as u64);
    request
        .expired
        .store(true, std::sync::atomic::Ordering::Release);
    context
        .session
        .cancel(
            &request,
            "timeout",
            lanes::deadline_answer(context.api, request.kind, limit),
        )
        .await;
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
    if method == super::imports::composition::updates::METHOD {
        session.composition_update(params);
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
                    if !session.children.abandon(&ChildId::Number(id), &reason) {
                        crate::log!(Level::Debug, "cancellation for an unknown or settled request ignored", "request_id" => id);
                    }
                }
            }
        }
        Some(Value::String(text)) => {
            session
                .children
                .abandon(&ChildId::Text(text.clone()), &reason);
        }
        _ => crate::log!(Level::Warning, "$/cancelRequest without a valid id ignored"),
    }
}

/// Waits up to `budget` for in-flight work, then cancels the rest with
/// `reason` and gives cooperative guests the cancel grace.
async fn drain(session: &Arc<Session>, budget: Duration, reason: &str, grace: Duration) {
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

async fn shutdown(
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
