//! Usage receipts: what each request cost, for the user who runs the
//! extension.
//!
//! For every request after `initialize`, one JSON line records
//! its method (and declared tool name), the wall time from admission to
//! the answer, the CPU time spent polling the guest call, the fuel it used
//! (when fuel is metered), the instance's linear memory (the peak: a wasm
//! memory never shrinks), the bytes of the request and answer frames, and
//! how it ended; a summary line follows at exit
//! (docs/choices.md#usage-receipts). No params, results or error texts are
//! written: only sizes, names the protocol or the catalog fixes, and codes.
//!
//! Who decides: only the user, with `receipts = true` in their policy file
//! (globally or in an `[extension."<name>"]` table). Nothing the bundle
//! controls (the manifest's args and env, the component's metadata, files
//! in the extension directory) switches them on or moves them: they are
//! written under `<home>/.local/state/octet-wasm/receipts/`, the home from
//! the user database ([`crate::user_dirs`]), in a new file per process
//! ([`writer`]), and not at all when the guest could reach that directory.
//!
//! When off, each hook is one load of an unset `OnceLock` (the request's
//! slot or the process's writer): no allocation, no system call.

pub mod record;
pub mod report;
pub mod writer;

use crate::runtime::{Fault, Sandbox};
use crate::wire::message::RpcError;
use record::{Outcome, Totals};
use serde_json::Value;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// Where receipts go, as people write it.
pub const DIR_TEXT: &str = "~/.local/state/octet-wasm/receipts";

/// Longest tool name recorded (longer ones are cut at a character
/// boundary): a receipt line stays small whatever the catalog says.
const MAX_TOOL_NAME: usize = 128;

/// The extension the user's policy switched receipts on for (set by `run`
/// from the policy, before serving).
static WANTED: OnceLock<String> = OnceLock::new();

/// The open receipts file of this process, once [`start`] opened it.
static ACTIVE: OnceLock<Active> = OnceLock::new();

struct Active {
    state: Mutex<State>,
    started: Instant,
}

struct State {
    writer: writer::Writer,
    totals: Totals,
    /// The summary is written: the file is complete, nothing follows it
    /// (a pool thread may still settle a request as the process exits).
    closed: bool,
}

/// `run` calls this when the user's policy says `receipts = true` for
/// `extension` (octet's `OCTET_EXTENSION_NAME`, `None` when unset).
/// Nothing is opened yet: that waits for the sandbox ([`start`]).
pub fn want(extension: Option<&str>, signer: Option<&crate::signing::Publisher>) {
    let _ = WANTED.set(writer::file_stem(extension.unwrap_or("")));
    if let Some(signer) = signer {
        let _ = SIGNER.set(signer.clone());
    }
}

/// Who signed the component this process serves, when a signature covers
/// it (`crate::signing`): the start line records it.
static SIGNER: OnceLock<crate::signing::Publisher> = OnceLock::new();

/// Opens this process's receipts file once the sandbox is known and
/// before the guest serves any request; refuses, with a warning, when the
/// directory lies inside the extension directory, the workspace, the
/// scratch directory or a directory granted to the guest. The shim serves
/// the same either way.
pub fn start(sandbox: &Sandbox) {
    let Some(extension) = WANTED.get() else {
        return;
    };
    let reach = crate::runtime::cache::Reach::from_env(true);
    match writer::Writer::open(extension, &reach, sandbox) {
        Ok(mut writer) => {
            writer.line(&record::start_line(extension, SIGNER.get()));
            crate::log!(crate::log::Level::Info, "usage receipts on (the user's policy)",
                "file" => writer.path().display().to_string());
            let active = Active {
                state: Mutex::new(State {
                    writer,
                    totals: Totals::default(),
                    closed: false,
                }),
                started: Instant::now(),
            };
            let _ = ACTIVE.set(active);
        }
        Err(why) => {
            crate::log!(crate::log::Level::Warning, "usage receipts not written; the extension is served as usual",
                "reason" => why)
        }
    }
}

/// Writes the summary record; `run` calls it once the protocol is done.
pub fn finish() {
    let Some(active) = ACTIVE.get() else { return };
    let mut state = active.state.lock().unwrap_or_else(|e| e.into_inner());
    if state.closed {
        return;
    }
    state.closed = true;
    let State { writer, totals, .. } = &mut *state;
    let line = record::summary_line(
        WANTED.get().map_or("", String::as_str),
        totals,
        writer.dropped(),
        writer.cap(),
        active.started.elapsed(),
    );
    writer.summary(&line);
}

/// What is known of one request while it runs; lives in the request's
/// [`Slot`] only when receipts are on.
#[derive(Debug)]
pub struct Pending {
    method: String,
    tool: Option<String>,
    admitted: Instant,
    at_ms: u64,
    bytes_in: usize,
    cpu_ns: AtomicU64,
    /// The instance's linear memory, kept current by its limiter.
    memory: OnceLock<Arc<AtomicUsize>>,
    fuel: OnceLock<u64>,
    fault: OnceLock<&'static str>,
}

/// Where a request keeps its receipt while it runs (in the protocol's
/// request state; empty when receipts are off). The receipts layer sees
/// only this, never the protocol's types.
pub type Slot = OnceLock<Box<Pending>>;

fn pending(slot: &Slot) -> Option<&Pending> {
    slot.get().map(|boxed| &**boxed)
}

/// The request was admitted to run on the guest: start its receipt.
/// `tool`: the declared tool a `tool/call` names (admitted only under a
/// name the catalog declares).
pub fn admitted(slot: &Slot, method: &str, bytes_in: usize, tool: Option<&str>) {
    if ACTIVE.get().is_none() {
        return;
    }
    let tool = tool.map(|name| bounded(name, MAX_TOOL_NAME).to_owned());
    let _ = slot.set(Box::new(Pending {
        method: method.to_owned(),
        tool,
        admitted: Instant::now(),
        at_ms: record::unix_ms(),
        bytes_in,
        cpu_ns: AtomicU64::new(0),
        memory: OnceLock::new(),
        fuel: OnceLock::new(),
        fault: OnceLock::new(),
    }));
}

/// The guest call starts on an instance whose memory `gauge` reports.
pub fn watch(slot: &Slot, gauge: impl FnOnce() -> Arc<AtomicUsize>) {
    if let Some(pending) = pending(slot) {
        let _ = pending.memory.set(gauge());
    }
}

/// `call` with the CPU time of every poll added to the request's receipt
/// (the thread's CPU clock around each poll: the guest's own execution and
/// the host calls it makes inline, wherever the task runs).
pub async fn metered<F: Future>(slot: &Slot, call: F) -> F::Output {
    let Some(pending) = pending(slot) else {
        return call.await;
    };
    let mut call = std::pin::pin!(call);
    std::future::poll_fn(|cx| {
        let before = thread_cpu_ns();
        let polled = call.as_mut().poll(cx);
        let spent = thread_cpu_ns().saturating_sub(before);
        pending.cpu_ns.fetch_add(spent, Ordering::Relaxed);
        polled
    })
    .await
}

/// The guest call returned (`fault`: it faulted), with the fuel it used
/// when fuel is metered.
pub fn called(slot: &Slot, fuel_used: impl FnOnce() -> Option<u64>, fault: Option<&Fault>) {
    let Some(pending) = pending(slot) else {
        return;
    };
    if let Some(fuel) = fuel_used() {
        let _ = pending.fuel.set(fuel);
    }
    if let Some(fault) = fault {
        let _ = pending.fault.set(record::fault_name(fault));
    }
}

/// How the request ended, decided at its terminal claim before the answer
/// is written (`expired`: the shim's deadline answered it; `cancelled`:
/// the host cancelled it); `None` when it has no receipt.
pub fn ending(
    slot: &Slot,
    expired: bool,
    cancelled: bool,
    answer: &Result<Value, RpcError>,
) -> Option<Outcome> {
    let pending = pending(slot)?;
    Some(if pending.fault.get().is_some() {
        Outcome::Trap
    } else if expired {
        Outcome::Deadline
    } else if cancelled {
        Outcome::Cancelled
    } else {
        outcome_of(answer)
    })
}

/// How an answer reads as an outcome.
fn outcome_of(answer: &Result<Value, RpcError>) -> Outcome {
    match answer {
        Ok(value) if value.get("is_error") == Some(&Value::Bool(true)) => Outcome::ToolError,
        Ok(_) => Outcome::Result,
        Err(error) => Outcome::Error(error.code),
    }
}

/// A request the shim answers itself, never running the guest (a refusal,
/// an unknown method, bad params, a default for what the guest does not
/// handle), while its answer is written.
pub struct Direct {
    id: u64,
    method: String,
    started: Instant,
    at_ms: u64,
    bytes_in: usize,
    outcome: Outcome,
}

/// Starts the receipt of a request answered without the guest; `None`
/// when receipts are off.
pub fn direct(
    id: u64,
    method: &str,
    bytes_in: usize,
    answer: &Result<Value, RpcError>,
) -> Option<Direct> {
    ACTIVE.get()?;
    Some(Direct {
        id,
        // The host's method name, possibly one the shim does not know.
        method: bounded(method, MAX_TOOL_NAME).to_owned(),
        started: Instant::now(),
        at_ms: record::unix_ms(),
        bytes_in,
        outcome: outcome_of(answer),
    })
}

impl Direct {
    /// The answer was written (`bytes_out` bytes; 0: it could not be).
    pub fn written(self, bytes_out: usize) {
        write(record::Request {
            kind: record::REQUEST.to_owned(),
            id: self.id,
            method: self.method,
            tool: None,
            at_ms: self.at_ms,
            wall_us: micros(self.started.elapsed().as_nanos()),
            cpu_us: 0,
            fuel: None,
            memory_bytes: None,
            bytes_in: self.bytes_in as u64,
            bytes_out: bytes_out as u64,
            outcome: self.outcome.name().to_owned(),
            code: self.outcome.code(),
            fault: None,
            by_shim: true,
        });
    }
}

/// Writes the receipt of request `id`, answered with a frame of
/// `bytes_out` bytes and ended as `outcome`.
pub fn settled(slot: &Slot, id: u64, outcome: Outcome, bytes_out: usize) {
    let Some(pending) = pending(slot) else {
        return;
    };
    write(record::Request {
        kind: record::REQUEST.to_owned(),
        id,
        method: pending.method.clone(),
        tool: pending.tool.clone(),
        at_ms: pending.at_ms,
        wall_us: micros(pending.admitted.elapsed().as_nanos()),
        cpu_us: pending.cpu_ns.load(Ordering::Relaxed) / 1_000,
        fuel: pending.fuel.get().copied(),
        memory_bytes: pending
            .memory
            .get()
            .map(|gauge| gauge.load(Ordering::Relaxed) as u64),
        bytes_in: pending.bytes_in as u64,
        bytes_out: bytes_out as u64,
        outcome: outcome.name().to_owned(),
        code: outcome.code(),
        fault: pending.fault.get().map(|name| (*name).to_owned()),
        by_shim: false,
    });
}

fn write(entry: record::Request) {
    let Some(active) = ACTIVE.get() else { return };
    let line = entry.to_line();
    let mut state = active.state.lock().unwrap_or_else(|e| e.into_inner());
    if state.closed {
        return;
    }
    state.totals.add(&entry);
    state.writer.line(&line);
}

fn micros(nanos: u128) -> u64 {
    u64::try_from(nanos / 1_000).unwrap_or(u64::MAX)
}

/// `text` cut to at most `max` bytes at a character boundary.
fn bounded(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// This thread's CPU time in nanoseconds.
fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec the call writes to.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return 0;
    }
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_at_character_boundaries() {
        assert_eq!(bounded("echo", 128), "echo");
        assert_eq!(bounded("ééé", 3), "é");
        assert_eq!(bounded(&"x".repeat(300), MAX_TOOL_NAME).len(), 128);
    }

    #[test]
    fn the_thread_cpu_clock_advances_with_work() {
        let before = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_ns() > before);
    }

    #[test]
    fn without_receipts_the_hooks_leave_a_request_alone() {
        // No `start` ran in this test process: nothing is recorded.
        let slot = Slot::new();
        admitted(&slot, "tool/call", 10, Some("t"));
        assert!(slot.get().is_none());
        assert_eq!(ending(&slot, false, false, &Ok(Value::Null)), None);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(runtime.block_on(metered(&slot, async { 7 })), 7);
        settled(&slot, 1, Outcome::Result, 10);
    }
}
