//! Structured diagnostics on stderr, one JSON object per line.
//!
//! octet reads the extension's stderr as free text, one diagnostic per line
//! (docs/protocol.md#stderr); the SDK convention is `{"level", "message", ...fields}`
//! and we keep it so both look alike in the host's logs. stdout is never
//! touched here: it belongs to the wire writer alone.
//!
//! Two kinds of record:
//! - the shim's own ([`write`], [`log!`](crate::log!)): what the shim does
//!   on its own account or at the host's request; written whole, each line
//!   bounded ([`line`]);
//! - guest-driven ([`guest`], [`guest_log!`](crate::guest_log!)): anything
//!   the guest can make the shim write as often or as long as it likes (its
//!   stdout and stderr, `log` records, trap reports with its messages and
//!   function names). They draw on one budget for the whole process
//!   ([`budget`]) and what does not fit is counted in summary records.
//!
//! The budget is process state because stderr is: every instance, lane and
//! runtime writes to the same stream.
//!
//! The final summary of dropped records is written at exit by a libc
//! `atexit` handler, registered when the first record is dropped: the shim
//! ends both by `std::process::exit` (after `shutdown`) and by returning
//! from `main` (end of input), and both run it. [`flush_summary`] writes it
//! earlier for a caller that wants to; it is written once either way.

pub mod bucket;
pub mod budget;
pub mod line;

pub use line::MAX_LINE_BYTES;

use budget::{GuestBudget, Limit, Summary};
use serde_json::{Map, Value, json};
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::Instant;

/// Severity of a record, in increasing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warning = 2,
    Error = 3,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }

    /// Parses the `OCTET_WASM_LOG` setting.
    pub fn parse(text: &str) -> Option<Level> {
        match text.trim().to_ascii_lowercase().as_str() {
            "debug" => Some(Level::Debug),
            "info" => Some(Level::Info),
            "warning" | "warn" => Some(Level::Warning),
            "error" => Some(Level::Error),
            _ => None,
        }
    }
}

static MIN_LEVEL: AtomicU8 = AtomicU8::new(Level::Info as u8);

static GUEST_BUDGET: LazyLock<Mutex<GuestBudget>> =
    LazyLock::new(|| Mutex::new(GuestBudget::new(Instant::now())));

/// Sets the lowest level that is written.
pub fn set_min_level(level: Level) {
    MIN_LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Whether records of `level` are written at all.
pub fn enabled(level: Level) -> bool {
    level as u8 >= MIN_LEVEL.load(Ordering::Relaxed)
}

/// Writes one of the shim's own records. `fields` must be a JSON object
/// (other values are put under `"fields"`); `level` and `message` always
/// come first.
pub fn write(level: Level, message: &str, fields: Value) {
    if enabled(level) {
        emit(&render(level, message, fields));
    }
}

/// Writes one guest-driven record if the guest budget holds it; otherwise
/// counts it as dropped.
pub fn guest(level: Level, message: &str, fields: Value) {
    if !enabled(level) {
        return;
    }
    let line = render(level, message, fields);
    let decision = lock_budget().admit(line.len() as u64, Instant::now());
    if !decision.write {
        summarise_at_exit();
    }
    if let Some(summary) = decision.summary {
        write_summary(&summary);
    }
    if decision.write {
        emit(&line);
    }
}

/// Counts guest output dropped before it became a record (the
/// per-instance output cap), so the summaries cover it too.
pub fn guest_dropped(bytes: usize) {
    let summary = lock_budget().dropped(bytes as u64, Limit::Instance, Instant::now());
    summarise_at_exit();
    if let Some(summary) = summary {
        write_summary(&summary);
    }
}

/// Writes the final summary of dropped guest records, if any were dropped;
/// at most once. Call it right before the process exits, on every path.
pub fn flush_summary() {
    // At exit other threads still run; one may hold the lock for a moment,
    // but the exiting thread must never wait on it for good.
    let deadline = Instant::now() + std::time::Duration::from_millis(200);
    let mut budget = loop {
        match GUEST_BUDGET.try_lock() {
            Ok(budget) => break budget,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => break poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::yield_now();
            }
            Err(std::sync::TryLockError::WouldBlock) => return,
        }
    };
    let summary = budget.at_exit();
    drop(budget);
    if let Some(summary) = summary {
        write_summary(&summary);
    }
}

fn summarise_at_exit() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    extern "C" fn at_exit() {
        flush_summary();
    }
    REGISTERED.call_once(|| {
        // SAFETY: `at_exit` is a plain function that captures nothing and
        // does not unwind (nothing in `flush_summary` panics).
        if unsafe { libc::atexit(at_exit) } != 0 {
            write(
                Level::Warning,
                "cannot register the exit summary of dropped guest diagnostics",
                Value::Null,
            );
        }
    });
}

fn lock_budget() -> std::sync::MutexGuard<'static, GuestBudget> {
    GUEST_BUDGET.lock().unwrap_or_else(|e| e.into_inner())
}

fn write_summary(summary: &Summary) {
    // A summary is the shim's own record: it is written whatever the level
    // filter says about warnings, and never counted against the budget.
    let line = render(
        Level::Warning,
        "guest diagnostics over budget; dropped and counted",
        json!({
            "phase": summary.phase,
            "dropped_records": summary.dropped.records,
            "dropped_bytes": summary.dropped.bytes,
            "total_dropped_records": summary.total.records,
            "total_dropped_bytes": summary.total.bytes,
            "limit": summary.limit.as_str(),
            "rate_bytes_per_second": budget::RATE_BYTES_PER_SECOND,
            "burst_bytes": budget::BURST_BYTES,
            "lifetime_bytes": budget::LIFETIME_BYTES,
        }),
    );
    emit(&line);
}

/// The record as one bounded line, newline included.
fn render(level: Level, message: &str, fields: Value) -> String {
    let mut record = Map::new();
    record.insert("level".into(), Value::from(level.as_str()));
    record.insert("message".into(), Value::from(message));
    match fields {
        Value::Object(map) => {
            for (key, value) in map {
                if key != "level" && key != "message" {
                    record.insert(key, value);
                }
            }
        }
        Value::Null => {}
        other => {
            record.insert("fields".into(), other);
        }
    }
    let mut line = line::render(record);
    line.push('\n');
    line
}

fn emit(line: &str) {
    // A failed stderr write has nowhere to be reported; dropping it is the
    // only option and never affects the protocol stream.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `log!(Level::Info, "message", "key" => value, ...)`: one of the shim's
/// own records.
#[macro_export]
macro_rules! log {
    ($level:expr, $message:expr $(, $key:literal => $value:expr)* $(,)?) => {{
        if $crate::log::enabled($level) {
            #[allow(unused_mut)]
            let mut fields = ::serde_json::Map::new();
            $( fields.insert($key.to_string(), ::serde_json::json!($value)); )*
            $crate::log::write($level, &$message, ::serde_json::Value::Object(fields));
        }
    }};
}

/// `guest_log!(Level::Error, "guest trapped", "error" => message, ...)`: a
/// record the guest can cause at will, or that carries its text; charged to
/// the guest budget.
#[macro_export]
macro_rules! guest_log {
    ($level:expr, $message:expr $(, $key:literal => $value:expr)* $(,)?) => {{
        if $crate::log::enabled($level) {
            #[allow(unused_mut)]
            let mut fields = ::serde_json::Map::new();
            $( fields.insert($key.to_string(), ::serde_json::json!($value)); )*
            $crate::log::guest($level, &$message, ::serde_json::Value::Object(fields));
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_end_in_one_newline_and_stay_bounded() {
        let line = render(Level::Info, &"m".repeat(100_000), json!({"k": "v"}));
        assert!(line.ends_with('\n') && line.len() <= MAX_LINE_BYTES + 1);
        assert_eq!(line.matches('\n').count(), 1);
        let parsed: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["k"], "v");
    }

    #[test]
    fn fields_cannot_replace_level_or_message() {
        let line = render(
            Level::Info,
            "real",
            json!({"level": "error", "message": "fake", "x": 1}),
        );
        assert_eq!(line, "{\"level\":\"info\",\"message\":\"real\",\"x\":1}\n");
    }

    #[test]
    fn parses_levels() {
        assert_eq!(Level::parse("WARN"), Some(Level::Warning));
        assert_eq!(Level::parse("nope"), None);
    }
}
