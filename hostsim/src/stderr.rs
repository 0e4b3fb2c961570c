//! The stderr collector: reads the extension's stderr on a background thread
//! (so the extension never blocks on a full pipe), keeps a bounded number of
//! lines and parses those that are JSON objects as structured log records
//! (docs/protocol.md#stderr).

use super::reader::{Line, LineSplitter};
use serde_json::{Map, Value};
use std::io::Read;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The host force-splits stderr lines at this many bytes
/// (docs/protocol.md#stderr).
const STDERR_SPLIT_BYTES: usize = 1_048_575;
/// Lines kept; later ones are counted but dropped so a flooding guest cannot
/// exhaust the test's memory.
const MAX_KEPT_LINES: usize = 20_000;
/// Bytes kept of one line.
const MAX_KEPT_LINE_BYTES: usize = 64 * 1024;

/// One stderr line.
#[derive(Clone, Debug, PartialEq)]
pub struct StderrLine {
    /// The line (lossy UTF-8, CR removed, at most 64 KiB kept).
    pub text: String,
    /// The line as a JSON log record, when it is a JSON object.
    pub record: Option<Map<String, Value>>,
}

impl StderrLine {
    /// The record's `message`, when this line is a structured log record.
    pub fn message(&self) -> Option<&str> {
        self.record.as_ref()?.get("message")?.as_str()
    }

    /// The record's `level`, when this line is a structured log record.
    pub fn level(&self) -> Option<&str> {
        self.record.as_ref()?.get("level")?.as_str()
    }

    /// A field of the structured record.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.record.as_ref()?.get(name)
    }
}

#[derive(Debug, Default)]
struct State {
    lines: Vec<StderrLine>,
    dropped_lines: usize,
    total_bytes: u64,
    closed: bool,
}

/// A shared view of everything the extension wrote to stderr so far.
#[derive(Clone, Debug, Default)]
pub struct StderrLog {
    shared: Arc<(Mutex<State>, Condvar)>,
}

impl StderrLog {
    fn state(&self) -> MutexGuard<'_, State> {
        self.shared
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// All kept lines so far.
    pub fn lines(&self) -> Vec<StderrLine> {
        self.state().lines.clone()
    }

    /// The kept lines that are JSON log records.
    pub fn records(&self) -> Vec<Map<String, Value>> {
        self.state()
            .lines
            .iter()
            .filter_map(|line| line.record.clone())
            .collect()
    }

    /// Bytes read from stderr so far (including dropped lines).
    pub fn total_bytes(&self) -> u64 {
        self.state().total_bytes
    }

    /// Lines dropped beyond the kept bound.
    pub fn dropped_lines(&self) -> usize {
        self.state().dropped_lines
    }

    /// Whether stderr has been closed by the extension.
    pub fn is_closed(&self) -> bool {
        self.state().closed
    }

    /// Waits until a line matching `matches` has been read (looking at lines
    /// already read first), or `timeout` passes, or stderr closes.
    pub fn wait_for(
        &self,
        timeout: Duration,
        mut matches: impl FnMut(&StderrLine) -> bool,
    ) -> Option<StderrLine> {
        let deadline = Instant::now() + timeout;
        let mut state = self.state();
        let mut checked = 0;
        loop {
            if let Some(found) = state.lines[checked..].iter().find(|line| matches(line)) {
                return Some(found.clone());
            }
            checked = state.lines.len();
            let now = Instant::now();
            if state.closed || now >= deadline {
                return None;
            }
            state = self
                .shared
                .1
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// Waits for a structured record whose `message` equals `message`.
    pub fn wait_for_message(&self, timeout: Duration, message: &str) -> Option<StderrLine> {
        self.wait_for(timeout, |line| line.message() == Some(message))
    }

    fn push(&self, bytes: &[u8]) {
        let mut state = self.state();
        state.total_bytes += bytes.len() as u64 + 1;
        let kept: Vec<u8> = bytes
            .iter()
            .take(MAX_KEPT_LINE_BYTES)
            .copied()
            .filter(|b| *b != b'\r')
            .collect();
        if kept.is_empty() {
            return;
        }
        if state.lines.len() >= MAX_KEPT_LINES {
            state.dropped_lines += 1;
            return;
        }
        let text = String::from_utf8_lossy(&kept).into_owned();
        let record = match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(record)) => Some(record),
            _ => None,
        };
        state.lines.push(StderrLine { text, record });
        self.shared.1.notify_all();
    }

    fn close(&self) {
        self.state().closed = true;
        self.shared.1.notify_all();
    }
}

/// Reads `stderr` to EOF into `log`.
pub(crate) fn run_stderr_reader(mut stderr: impl Read, log: StderrLog) {
    let mut splitter = LineSplitter::new(STDERR_SPLIT_BYTES);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => splitter.push(&chunk[..read], &mut |line| {
                let (Line::Complete(bytes) | Line::Overlong(bytes)) = line;
                log.push(&bytes);
            }),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let partial = splitter.into_partial();
    if !partial.is_empty() {
        log.push(&partial);
    }
    log.close();
}
