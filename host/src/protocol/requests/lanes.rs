//! Lanes: tasks that own guest instances and run work on them, one job at
//! a time per instance.
//!
//! Which requests go where (docs/choices.md#pool-routing):
//! - the **primary lane** owns the one long-lived instance and serves, in
//!   arrival order, every command, hook, context, status, render and menu
//!   request, every lifecycle event and the shutdown handler, so a guest can
//!   keep state across them exactly as with the Python SDK;
//! - with a negotiated concurrency N > 1, **tool calls** go to a pool of N
//!   lanes, each with its own instance (created on first use), so N calls
//!   really run in parallel on separate cores. Pool instances share no
//!   memory with the primary; guests that need shared state declare
//!   concurrency 1 and everything runs on the primary lane.
//!
//! A call whose request was cancelled keeps running for the cancel grace
//! (so a cooperative guest can stop cleanly), then its future is dropped:
//! the instance is discarded and the lane makes a fresh one for the next
//! job. A trap discards the instance the same way.

use super::request_state::RequestState;
use super::session::Session;
use super::work::{Guest, Work};
use crate::cancel::CancelToken;
use crate::log::Level;
use crate::protocol::deadlines::{Deadlines, Kind};
use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::results::encode::{self, ToolShape};
use crate::protocol::results::guest_errors::{guest_error, invalid_result};
use crate::runtime::sandbox::{ToolFailure, explain_tool_failure};
use crate::runtime::types::*;
use crate::runtime::{Fault, Instance, Runtime, Sandbox};
use crate::wire::message::RpcError;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Mutex, mpsc, oneshot};

/// Everything a lane needs to make instances and answer requests.
pub struct LaneContext {
    pub runtime: Arc<Runtime<Session>>,
    pub session: Arc<Session>,
    pub sandbox: Sandbox,
    pub init: InitParams,
    pub guest: Guest,
    pub deadlines: Deadlines,
    pub api: ApiVersion,
    pub artifacts: bool,
}

/// A job for a lane.
pub enum Job {
    Request {
        request: Arc<RequestState>,
        work: Work,
    },
    Lifecycle(LifecycleEvent),
    /// Run the guest's shutdown handler; the answer is the guest's own.
    Shutdown(oneshot::Sender<Result<(), String>>),
}

/// Task polls between timer and I/O checks on the shim's runtimes. A busy
/// guest yields every epoch tick (10 ms) and is polled again at once, so
/// tokio's default of 61 would let deadlines and cancellations slip by up
/// to 610 ms; 2 keeps the slip at one or two ticks.
pub const EVENT_INTERVAL: u32 = 2;

/// Threads each of the shim's two runtimes may start for blocking calls
/// (tokio's default is 512). wasmtime-wasi runs every filesystem call (and
/// name lookups) on this pool, and a call that never returns (opening a
/// FIFO, reading one) keeps its thread even after its request was
/// cancelled and its instance dropped: threads cannot be interrupted. So
/// the pool is capped: at most this many threads block per runtime,
/// whatever the guest does. Once all of them are stuck, further filesystem
/// calls wait in tokio's queue; their requests end at their deadlines
/// (with the usual deadline answer) and the queued calls are dropped with
/// them, while requests that do not touch the filesystem are served as
/// before. One guest instance runs one blocking call at a time, so eight
/// leave room for every lane of an ordinary guest.
pub const MAX_BLOCKING_THREADS: usize = 8;

/// Caps `builder`'s blocking pool at [`MAX_BLOCKING_THREADS`] and says once
/// (per runtime) when the pool reaches the cap, so a stuck extension's log
/// tells why its filesystem calls time out. `workers` is how many of the
/// runtime's threads are its async workers (0 for a current-thread
/// runtime, whose one thread is the caller's).
pub fn cap_blocking_threads(
    builder: &mut tokio::runtime::Builder,
    runtime: &'static str,
    workers: usize,
) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let live = Arc::new(AtomicUsize::new(0));
    let told = Arc::new(AtomicBool::new(false));
    let stopped = live.clone();
    builder
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .on_thread_start(move || {
            let now = live.fetch_add(1, Ordering::Relaxed) + 1;
            if now >= workers + MAX_BLOCKING_THREADS && !told.swap(true, Ordering::Relaxed) {
                crate::log!(Level::Warning, "the runtime's threads for blocking host calls (filesystem, name lookups) reached their cap; further calls wait for one to finish, and a call that never finishes (a FIFO, a device) holds its thread for good",
                    "runtime" => runtime, "max_blocking_threads" => MAX_BLOCKING_THREADS);
            }
        })
        .on_thread_stop(move || {
            stopped.fetch_sub(1, Ordering::Relaxed);
        });
}

/// Queue length per lane: every admitted request, every queued lifecycle
/// event and the shutdown job fit, so a send never fails while admission
/// holds.
const LANE_QUEUE: usize = super::session::ADMISSION_LIMIT + super::session::LIFECYCLE_LIMIT + 8;

/// Senders to the running lanes.
pub struct Lanes {
    primary: mpsc::Sender<Job>,
    pool: Option<mpsc::Sender<Job>>,
    /// The pool's own multi-threaded runtime (see [`Lanes::start`]).
    pool_runtime: Option<tokio::runtime::Runtime>,
}

impl Lanes {
    /// Starts the primary lane on `primary` and, for `pool_size > 1`, a
    /// pool of lanes for tool calls.
    ///
    /// The server loop and the primary lane share the process's single
    /// protocol thread, so a request costs one thread wake-up (from the
    /// stdin reader) instead of several. The pool runs on a separate
    /// multi-threaded runtime with one worker per lane (up to the number of
    /// cores), which is what gives pooled tool calls real parallelism.
    pub fn start(context: Arc<LaneContext>, primary: Instance<Session>, pool_size: u32) -> Lanes {
        let (primary_tx, primary_rx) = mpsc::channel(LANE_QUEUE);
        tokio::spawn(run_lane(
            context.clone(),
            Some(primary),
            Arc::new(Mutex::new(primary_rx)),
            "primary",
        ));
        let mut pool_runtime = None;
        let pool = (pool_size > 1).then(|| {
            let (tx, rx) = mpsc::channel(LANE_QUEUE);
            let rx = Arc::new(Mutex::new(rx));
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let workers = (pool_size as usize).min(cores).max(1);
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            cap_blocking_threads(&mut builder, "pool", workers);
            let built = builder
                .worker_threads(workers)
                .thread_name("octet-wasm-pool")
                .event_interval(EVENT_INTERVAL)
                .enable_all()
                .build();
            let handle = match built {
                Ok(runtime) => {
                    let handle = runtime.handle().clone();
                    pool_runtime = Some(runtime);
                    handle
                }
                Err(err) => {
                    crate::log!(Level::Warning, "cannot start the pool runtime; pooled calls share the protocol thread",
                        "error" => err.to_string());
                    tokio::runtime::Handle::current()
                }
            };
            for _ in 0..pool_size {
                handle.spawn(run_lane(context.clone(), None, rx.clone(), "pool"));
            }
            tx
        });
        Lanes {
            primary: primary_tx,
            pool,
            pool_runtime,
        }
    }

    /// Queues a job on the lane that serves it. Fails only when the lanes
    /// are gone or full, which admission prevents.
    pub fn dispatch(&self, job: Job) -> Result<(), Box<Job>> {
        let lane = match (&job, &self.pool) {
            (
                Job::Request {
                    work: Work::Tool { .. },
                    ..
                },
                Some(pool),
            ) => pool,
            _ => &self.primary,
        };
        lane.try_send(job).map_err(|err| match err {
            mpsc::error::TrySendError::Full(job) | mpsc::error::TrySendError::Closed(job) => {
                Box::new(job)
            }
        })
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which is not allowed inside the
        // protocol runtime; let its threads wind down on their own.
        if let Some(runtime) = self.pool_runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn run_lane(
    context: Arc<LaneContext>,
    mut instance: Option<Instance<Session>>,
    jobs: Arc<Mutex<mpsc::Receiver<Job>>>,
    lane: &'static str,
) {
    loop {
        let job = jobs.lock().await.recv().await;
        let Some(job) = job else { return };
        match job {
            Job::Request { request, work } => {
                // Cancelled (or expired) before it started: never run it.
                if request.cancel.is_cancelled() {
                    continue;
                }
                let outcome = match ensure(&context, &mut instance, request.deadline).await {
                    Ok(guest) => serve(&context, guest, &request, work).await,
                    Err(fault) => {
                        // A tool call still answers as a tool result, so the
                        // model learns why it failed.
                        let tool = match &work {
                            Work::Tool { call, .. } => Some(call.name.as_str()),
                            _ => None,
                        };
                        Served::Faulted(answer_fault(&context, &request, tool, &fault), fault)
                    }
                };
                match outcome {
                    Served::Answered(answer) => {
                        let fuel = || instance.as_ref().and_then(Instance::fuel_used);
                        crate::receipts::called(&request.receipt, fuel, None);
                        context.session.settle(&request, answer).await;
                    }
                    Served::Faulted(answer, fault) => {
                        let fuel = || instance.as_ref().and_then(Instance::fuel_used);
                        crate::receipts::called(&request.receipt, fuel, Some(&fault));
                        replace(&mut instance, lane, &fault.to_string());
                        context.session.settle(&request, answer).await;
                    }
                    Served::Abandoned => replace(
                        &mut instance,
                        lane,
                        "the call was still running after its cancellation grace",
                    ),
                }
            }
            Job::Lifecycle(event) => {
                let budget = context.deadlines.for_kind(Kind::Lifecycle);
                let until = tokio::time::Instant::now() + budget;
                if let Ok(guest) = ensure(&context, &mut instance, until).await {
                    let cancel = CancelToken::new();
                    match tokio::time::timeout(budget, guest.on_lifecycle(cancel, event)).await {
                        Ok(Ok(())) => {}
                        Ok(Err(fault)) => replace(&mut instance, lane, &fault.to_string()),
                        Err(_) => replace(
                            &mut instance,
                            lane,
                            &format!(
                                "a lifecycle handler ran past {} ms ({})",
                                budget.as_millis(),
                                crate::protocol::deadlines::Deadlines::flag(Kind::Lifecycle)
                            ),
                        ),
                    }
                }
                context.session.lifecycle_done();
            }
            Job::Shutdown(done) => {
                let result = match instance.as_mut() {
                    // The instance was replaced or never made: there is no
                    // state to shut down.
                    None => Ok(()),
                    Some(guest) => match guest.on_shutdown(CancelToken::new()).await {
                        Ok(Ok(())) => Ok(()),
                        Ok(Err(error)) => Err(encode::guest_error_text(&error)),
                        Err(fault) => Err(fault.to_string()),
                    },
                };
                let _ = done.send(result);
            }
        }
    }
}

fn replace(instance: &mut Option<Instance<Session>>, lane: &str, why: &str) {
    if instance.take().is_some() {
        crate::guest_log!(Level::Warning, "guest instance discarded; the next request gets a fresh one (its in-memory state is lost)",
            "lane" => lane, "reason" => why);
    }
}

/// How much earlier than the request's deadline [`ensure`] gives up on a
/// fresh instance's `init`.
const INIT_MARGIN: std::time::Duration = std::time::Duration::from_millis(100);

/// The lane's instance, made (and initialised) when missing. A guest whose
/// `init` spins or blocks is given up on at `until` (the deadline of the
/// work that needs the instance), so a replacement instance can never hold
/// a lane for good.
async fn ensure<'a>(
    context: &LaneContext,
    instance: &'a mut Option<Instance<Session>>,
    until: tokio::time::Instant,
) -> Result<&'a mut Instance<Session>, Fault> {
    if instance.is_none() {
        let make = async {
            let mut fresh = context
                .runtime
                .instantiate(context.session.clone(), &context.sandbox)
                .await?;
            match fresh.init(&context.init).await? {
                Ok(()) => Ok(fresh),
                Err(error) => Err(Fault::Start(format!(
                    "the guest's init failed: {}",
                    encode::guest_error_text(&error)
                ))),
            }
        };
        // Given up on a little before `until`: the request's own deadline
        // fires at `until` too, and its answer ("stopped after its
        // deadline") would hide the reason, a fresh instance whose init
        // never returned.
        let give_up = until
            .checked_sub(INIT_MARGIN)
            .unwrap_or(until)
            .max(tokio::time::Instant::now());
        let fresh = tokio::time::timeout_at(give_up, make).await.map_err(|_| {
            Fault::Start(
                "a fresh guest instance's init did not return before the request's deadline (it is spinning or blocked)".into(),
            )
        })??;
        *instance = Some(fresh);
    }
    instance
        .as_mut()
        .ok_or_else(|| Fault::Start("no instance".into()))
}

enum Served {
    Answered(Result<Value, RpcError>),
    Faulted(Result<Value, RpcError>, Fault),
    /// Cancelled and still running after the grace: dropped mid-call.
    Abandoned,
}

async fn serve(
    context: &LaneContext,
    guest: &mut Instance<Session>,
    request: &Arc<RequestState>,
    work: Work,
) -> Served {
    let grace = context.deadlines.cancel_grace;
    let cancel = request.cancel.clone();
    crate::receipts::watch(&request.receipt, || guest.memory_gauge());
    let call = crate::receipts::metered(&request.receipt, execute(context, guest, request, work));
    tokio::select! {
        biased;
        served = call => served,
        () = async {
            cancel.cancelled().await;
            // A cancelled guest gets the grace to stop cleanly; one that ran
            // past the shim's own deadline has had its time.
            if !request.expired.load(std::sync::atomic::Ordering::Acquire) {
                tokio::time::sleep(grace).await;
            }
        } => Served::Abandoned,
    }
}

async fn execute(
    context: &LaneContext,
    guest: &mut Instance<Session>,
    request: &Arc<RequestState>,
    work: Work,
) -> Served {
    let scope = request.clone();
    let cancel = request.cancel.clone();
    macro_rules! finish {
        ($outcome:expr, $convert:expr) => {
            match $outcome {
                Ok(Ok(value)) => Served::Answered($convert(value)),
                Ok(Err(error)) => Served::Answered(Err(guest_error(error, &request.cancel))),
                Err(fault) => Served::Faulted(answer_fault(context, request, None, &fault), fault),
            }
        };
    }
    match work {
        Work::Tool { call, cx } => {
            // With dynamic_tools the result is checked against the snapshot
            // the call is pinned to (held for the whole call).
            let pinned = context
                .session
                .setup()
                .is_some_and(|s| s.has(crate::protocol::handshake::feature::Feature::DynamicTools))
                .then(|| {
                    context
                        .guest
                        .dynamic
                        .resolve(call.catalog_revision, &call.name)
                        .ok()
                })
                .flatten();
            let name = call.name.clone();
            let outcome = guest.call_tool(scope, cancel, call, cx).await;
            match outcome {
                Ok(Ok(mut result)) => {
                    let failure = &mut ToolFailure::Result(&mut result);
                    explain_tool_failure(&context.sandbox, &name, failure);
                    let entry = match &pinned {
                        Some(snapshot) => snapshot.entry(&name),
                        None => context.guest.catalog.tools.get(&name),
                    };
                    let shape = ToolShape {
                        name: &name,
                        output_schema: entry.and_then(|e| e.output_schema.as_ref()),
                        artifacts: context.artifacts,
                    };
                    Served::Answered(
                        encode::tool_result(context.api, &shape, result)
                            .map_err(|err| invalid_result(&err.0)),
                    )
                }
                // A failed tool is a result the model reads, not an RPC
                // error (docs/protocol.md#tool-results).
                Ok(Err(GuestError::Failed(mut text))) => {
                    let failure = &mut ToolFailure::Text(&mut text);
                    explain_tool_failure(&context.sandbox, &name, failure);
                    Served::Answered(Ok(encode::tool_failure(context.api, &text)))
                }
                Ok(Err(error)) => Served::Answered(Err(guest_error(error, &request.cancel))),
                Err(fault) => {
                    Served::Faulted(answer_fault(context, request, Some(&name), &fault), fault)
                }
            }
        }
        Work::Command {
            name,
            arguments,
            cx,
        } => {
            let outcome = guest
                .execute_command(scope, cancel, &name, &arguments, cx)
                .await;
            finish!(outcome, |result: CommandResult| Ok(encode::command_result(
                &result
            )))
        }
        Work::Hook { hook, payload, cx } => {
            let outcome = guest.run_hook(scope, cancel, &hook, payload, cx).await;
            finish!(outcome, |result: HookResult| encode::hook_result(
                &hook, result
            )
            .map_err(|err| invalid_result(&err.0)))
        }
        Work::Context { prompt, cx } => {
            let outcome = guest
                .collect_context(scope, cancel, prompt.as_deref(), cx)
                .await;
            finish!(outcome, |items: Vec<ContextItem>| Ok(
                encode::context_items(&items)
            ))
        }
        Work::Status { surface, cx } => {
            let outcome = guest.collect_status(scope, cancel, &surface, cx).await;
            finish!(outcome, |item: Option<StatusItem>| Ok(item
                .map(|i| encode::status_item(&i))
                .unwrap_or(Value::Null)))
        }
        Work::Render {
            request: render,
            cx,
        } => {
            let outcome = guest.render_tool(scope, cancel, render, cx).await;
            finish!(outcome, |segments: Vec<Segment>| encode::segments(
                &segments
            )
            .map_err(|err| invalid_result(&err.0)))
        }
        Work::Menu { cx } => {
            let outcome = guest.collect_menu(scope, cancel, cx).await;
            finish!(outcome, |menu: Option<String>| match menu {
                Some(text) => encode::menu(&text).map_err(|err| invalid_result(&err.0)),
                None => Err(RpcError::method_not_found("the extension offers no menu")),
            })
        }
    }
}

/// The answer for a request whose guest faulted; tool calls get an
/// `is_error` result the model can read.
fn answer_fault(
    context: &LaneContext,
    request: &RequestState,
    tool: Option<&str>,
    fault: &Fault,
) -> Result<Value, RpcError> {
    log_fault(request.id, fault);
    match tool {
        Some(name) => Ok(encode::tool_failure(
            context.api,
            &format!("tool {name} failed: {fault}"),
        )),
        // The SDK's reply carries no data; the reason is in the record
        // `log_fault` just wrote.
        None => Err(RpcError::internal("internal error")),
    }
}

fn log_fault(request_id: u64, fault: &Fault) {
    match fault {
        Fault::Trap { message, backtrace } => crate::guest_log!(Level::Error, "guest trapped",
            "request_id" => request_id, "error" => message, "backtrace" => backtrace),
        Fault::StackOverflow {
            trap, backtrace, ..
        } => crate::guest_log!(Level::Error, "guest trapped",
            "request_id" => request_id, "error" => fault.to_string(), "trap" => trap, "backtrace" => backtrace),
        other => {
            crate::guest_log!(Level::Error, "guest failed", "request_id" => request_id, "error" => other.to_string())
        }
    }
}

/// What the shim answers when `kind`'s deadline passes: an `is_error`
/// result for tool calls (the model learns the tool timed out), an error
/// naming the deadline and the user's policy key otherwise.
pub fn deadline_answer(api: ApiVersion, kind: Kind, limit: Duration) -> Result<Value, RpcError> {
    let text = format!(
        "octet-wasm stopped the guest after its deadline of {} ms ({})",
        limit.as_millis(),
        Deadlines::advice(kind, limit)
    );
    match kind {
        Kind::Tool => Ok(encode::tool_failure(api, &text)),
        _ => Err(
            RpcError::server("request deadline exceeded").with_data(json!({
                "deadline_ms": limit.as_millis() as u64,
                "raise_with": Deadlines::flag(kind),
                "error": text,
            })),
        ),
    }
}

#[cfg(test)]
#[path = "lanes_tests.rs"]
mod tests;
