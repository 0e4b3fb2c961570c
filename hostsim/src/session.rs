//! One running extension generation seen from the host side: write frames,
//! read checked frames, answer child requests, stop the process.

use super::checker::{FrameChecker, Violation};
use super::frame::{ChildId, Frame, FrameKind, RpcError, envelope};
use super::reader::{StdoutEvent, run_stdout_reader};
use super::stderr::{StderrLog, run_stderr_reader};
use serde_json::{Value, json};
use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::io::{self, Write};
use std::process::{Child, ChildStdin, ExitStatus};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Why a session operation did not produce what was asked for.
#[derive(Debug)]
pub enum SimError {
    /// Nothing arrived in time.
    Timeout {
        waited: Duration,
        waiting_for: String,
    },
    /// stdout closed.
    Eof,
    /// The extension broke one of octet's fatal rules; the host would have
    /// killed it here.
    Violation(Violation),
    /// Writing to the extension or polling it failed.
    Io(io::Error),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Timeout {
                waited,
                waiting_for,
            } => write!(f, "timed out after {waited:?} waiting for {waiting_for}"),
            SimError::Eof => write!(f, "extension stdout closed"),
            SimError::Violation(violation) => violation.fmt(f),
            SimError::Io(error) => write!(f, "I/O error talking to the extension: {error}"),
        }
    }
}

impl std::error::Error for SimError {}

impl From<io::Error> for SimError {
    fn from(error: io::Error) -> Self {
        SimError::Io(error)
    }
}

/// The answer to one host request and what the extension sent before it.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The response frame.
    pub frame: Frame,
    /// Notifications and child requests that arrived first, in order.
    pub before: Vec<Frame>,
}

impl Reply {
    /// The response's `result` or `error`.
    pub fn outcome(&self) -> &Result<Value, RpcError> {
        match &self.frame.kind {
            FrameKind::Response { outcome, .. } => outcome,
            _ => unreachable!("a Reply always holds a response frame"),
        }
    }

    /// The `result`, if the request succeeded.
    pub fn result(&self) -> Option<&Value> {
        self.outcome().as_ref().ok()
    }

    /// The `error`, if the request failed.
    pub fn error(&self) -> Option<&RpcError> {
        self.outcome().as_ref().err()
    }
}

/// A running extension process driven by the simulated host.
///
/// Dropping the session kills the process if it is still running (octet's
/// kill-on-drop).
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<StdoutEvent>,
    /// Checked frames taken off the channel but not yet handed out.
    pending: VecDeque<Frame>,
    checker: Arc<Mutex<FrameChecker>>,
    stderr: StderrLog,
    violations: Vec<Violation>,
    stdout_closed: bool,
    next_id: u64,
    threads: Vec<JoinHandle<()>>,
}

impl Session {
    /// Takes over a spawned child whose three standard streams are pipes.
    pub fn start(mut child: Child) -> io::Result<Session> {
        let taken = |what: &str| io::Error::other(format!("child {what} is not piped"));
        let stdin = child.stdin.take().ok_or_else(|| taken("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| taken("stdout"))?;
        let stderr = child.stderr.take().ok_or_else(|| taken("stderr"))?;
        let checker = Arc::new(Mutex::new(FrameChecker::new()));
        let (sender, events) = channel();
        let stderr_log = StderrLog::default();
        let stdout_thread = {
            let checker = Arc::clone(&checker);
            thread::Builder::new()
                .name("hostsim-stdout".into())
                .spawn(move || run_stdout_reader(stdout, checker, sender))?
        };
        let stderr_thread = {
            let log = stderr_log.clone();
            thread::Builder::new()
                .name("hostsim-stderr".into())
                .spawn(move || run_stderr_reader(stderr, log))?
        };
        Ok(Session {
            child,
            stdin: Some(stdin),
            events,
            pending: VecDeque::new(),
            checker,
            stderr: stderr_log,
            violations: Vec::new(),
            stdout_closed: false,
            next_id: 1,
            threads: vec![stdout_thread, stderr_thread],
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything the extension wrote to stderr so far.
    pub fn stderr(&self) -> &StderrLog {
        &self.stderr
    }

    fn checker(&self) -> MutexGuard<'_, FrameChecker> {
        self.checker
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The features negotiated by the initialize exchange.
    pub fn features(&self) -> BTreeSet<String> {
        self.checker().features().clone()
    }

    /// Gives access to the checker, e.g. to set manifest facts by hand.
    pub fn with_checker<T>(&self, f: impl FnOnce(&mut FrameChecker) -> T) -> T {
        f(&mut self.checker())
    }

    // ----- writing -----------------------------------------------------

    /// Writes raw bytes to stdin as they are (for bad-input tests). Lines
    /// that happen to be valid requests are still registered with the
    /// checker so their responses are expected.
    pub fn send_raw(&mut self, bytes: &[u8]) -> Result<(), SimError> {
        for line in bytes.split(|b| *b == b'\n') {
            if let Ok(value) = serde_json::from_slice::<Value>(line) {
                self.note_outgoing(&value);
            }
        }
        self.write(bytes)
    }

    /// Writes one frame (compact JSON plus LF).
    pub fn send(&mut self, frame: &Value) -> Result<(), SimError> {
        self.note_outgoing(frame);
        let mut line = serde_json::to_vec(frame).map_err(io::Error::from)?;
        line.push(b'\n');
        self.write(&line)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), SimError> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin already closed"))?;
        stdin.write_all(bytes)?;
        stdin.flush()?;
        Ok(())
    }

    /// Tells the checker about a host frame about to be written.
    fn note_outgoing(&self, frame: &Value) {
        let mut checker = self.checker();
        match (frame.get("id"), frame.get("method").and_then(Value::as_str)) {
            (Some(id), Some(method)) => {
                if let Some(id) = id.as_u64() {
                    let params = frame.get("params").unwrap_or(&Value::Null);
                    checker.host_sent_request(id, method, params);
                }
            }
            (Some(id), None) => {
                if let Some(id) = ChildId::from_json(id) {
                    checker.host_settled_child(&id);
                }
            }
            _ => {}
        }
    }

    /// Sends a request with the next id from the host's counter (which
    /// starts at 1) and returns that id.
    pub fn request(&mut self, method: &str, params: Value) -> Result<u64, SimError> {
        let id = self.next_id;
        self.request_with_id(id, method, params)?;
        Ok(id)
    }

    /// Sends a request with a chosen id (the counter moves past it).
    pub fn request_with_id(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
    ) -> Result<(), SimError> {
        self.next_id = self.next_id.max(id + 1);
        self.send(&envelope([
            ("id", Value::from(id)),
            ("method", Value::from(method)),
            ("params", params),
        ]))
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> Result<(), SimError> {
        self.send(&envelope([
            ("method", Value::from(method)),
            ("params", params),
        ]))
    }

    /// Sends `$/cancelRequest` for a host request id (API 0.2).
    pub fn cancel(&mut self, id: u64, reason: &str) -> Result<(), SimError> {
        self.notify("$/cancelRequest", json!({"id": id, "reason": reason}))
    }

    /// Sends `$/cancelRequest` for one of the extension's own child requests
    /// (the host abandons it, e.g. because its parent settled).
    pub fn cancel_child(&mut self, id: &ChildId, reason: &str) -> Result<(), SimError> {
        self.checker().host_settled_child(id);
        self.notify(
            "$/cancelRequest",
            json!({"id": id.to_json(), "reason": reason}),
        )
    }

    /// Answers a child request with a result.
    pub fn respond(&mut self, id: &ChildId, result: Value) -> Result<(), SimError> {
        self.send(&envelope([("id", id.to_json()), ("result", result)]))
    }

    /// Answers a child request with an error.
    pub fn respond_error(
        &mut self,
        id: &ChildId,
        code: i64,
        message: &str,
    ) -> Result<(), SimError> {
        self.send(&envelope([
            ("id", id.to_json()),
            ("error", json!({"code": code, "message": message})),
        ]))
    }

    /// Closes stdin (transport loss / final teardown,
    /// docs/protocol.md#end-of-input).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    // ----- reading -----------------------------------------------------

    /// The next checked frame. A rule violation is returned as
    /// [`SimError::Violation`] (and remembered, see [`Session::violations`]).
    pub fn recv(&mut self, timeout: Duration) -> Result<Frame, SimError> {
        if let Some(frame) = self.pending.pop_front() {
            return Ok(frame);
        }
        if self.stdout_closed {
            return Err(SimError::Eof);
        }
        let event = match self.events.recv_timeout(timeout) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => {
                return Err(SimError::Timeout {
                    waited: timeout,
                    waiting_for: "a frame on stdout".into(),
                });
            }
            Err(RecvTimeoutError::Disconnected) => StdoutEvent::Eof,
        };
        self.take_event(event)
    }

    fn take_event(&mut self, event: StdoutEvent) -> Result<Frame, SimError> {
        match event {
            StdoutEvent::Frame(frame) => Ok(*frame),
            StdoutEvent::Violation(violation) => {
                self.violations.push((*violation).clone());
                Err(SimError::Violation(*violation))
            }
            StdoutEvent::Eof => {
                self.stdout_closed = true;
                Err(SimError::Eof)
            }
        }
    }

    /// Waits for the response to host request `id`. Notifications and child
    /// requests that arrive first are collected in [`Reply::before`]; child
    /// requests are left unanswered (see [`Session::wait_response_with`]).
    pub fn wait_response(&mut self, id: u64, timeout: Duration) -> Result<Reply, SimError> {
        self.wait_response_with(id, timeout, |_| None)
    }

    /// Like [`Session::wait_response`], but every child request is offered
    /// to `answer`; when it returns a result, that result is sent back.
    pub fn wait_response_with(
        &mut self,
        id: u64,
        timeout: Duration,
        mut answer: impl FnMut(&Frame) -> Option<Value>,
    ) -> Result<Reply, SimError> {
        let deadline = Instant::now() + timeout;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = match self.recv(left) {
                Err(SimError::Timeout { .. }) => {
                    return Err(SimError::Timeout {
                        waited: timeout,
                        waiting_for: format!(
                            "the response to request {id} (frames before it: {})",
                            raws(&before)
                        ),
                    });
                }
                other => other?,
            };
            match &frame.kind {
                FrameKind::Response { id: got, .. } if *got == id => {
                    return Ok(Reply { frame, before });
                }
                FrameKind::Request { id: child, .. } => {
                    if let Some(result) = answer(&frame) {
                        let child = child.clone();
                        self.respond(&child, result)?;
                    }
                }
                _ => {}
            }
            before.push(frame);
        }
    }

    /// Sends a request and waits for its response.
    pub fn call(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Reply, SimError> {
        let id = self.request(method, params)?;
        self.wait_response(id, timeout)
    }

    /// Reads frames until stdout closes (or `timeout` passes) and returns
    /// them; any violation ends the read with an error.
    pub fn read_to_eof(&mut self, timeout: Duration) -> Result<Vec<Frame>, SimError> {
        let deadline = Instant::now() + timeout;
        let mut frames = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left) {
                Ok(frame) => frames.push(frame),
                Err(SimError::Eof) => return Ok(frames),
                Err(SimError::Timeout { .. }) => {
                    return Err(SimError::Timeout {
                        waited: timeout,
                        waiting_for: format!("stdout to close (frames so far: {})", raws(&frames)),
                    });
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Collects frames and violations the reader has already produced
    /// without waiting, then reports the first violation seen in the whole
    /// session, if any.
    pub fn check_clean(&mut self) -> Result<(), Violation> {
        while let Ok(event) = self.events.try_recv() {
            if let Ok(frame) = self.take_event(event) {
                self.pending.push_back(frame);
            }
        }
        match self.violations.first() {
            Some(violation) => Err(violation.clone()),
            None => Ok(()),
        }
    }

    /// Every violation returned so far.
    pub fn violations(&self) -> &[Violation] {
        &self.violations
    }

    // ----- process -----------------------------------------------------

    /// Waits for the process to exit.
    pub fn wait_exit(&mut self, timeout: Duration) -> Result<ExitStatus, SimError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                return Err(SimError::Timeout {
                    waited: timeout,
                    waiting_for: "the process to exit".into(),
                });
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// The exit status, if the process has exited.
    pub fn try_exit_status(&mut self) -> Result<Option<ExitStatus>, SimError> {
        Ok(self.child.try_wait()?)
    }

    /// Kills the process (SIGKILL) and reaps it.
    pub fn kill(&mut self) -> Result<ExitStatus, SimError> {
        if let Some(status) = self.child.try_wait()? {
            return Ok(status);
        }
        self.child.kill()?;
        Ok(self.child.wait()?)
    }
}

fn raws(frames: &[Frame]) -> String {
    if frames.is_empty() {
        return "none".into();
    }
    frames
        .iter()
        .map(|frame| frame.raw.as_str())
        .collect::<Vec<_>>()
        .join(" | ")
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stdin = None;
        // Kill-on-drop, as octet does; the reader threads end with the pipes.
        let _ = self.kill();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::{ApiVersion, InitializeParams, Launch, ManifestSpec, Rule};

    /// A shell script standing in for an extension: answers `initialize`,
    /// logs, echoes its environment check, then writes garbage.
    const FAKE_EXTENSION: &str = r#"
read line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"api_version":"0.1","tools":[],"commands":[]}}'
printf '{"level":"info","message":"ready","cwd_is_workspace":%s}\n' "$( [ "$PWD" = "$OCTET_WORKSPACE" ] && echo true || echo false )" >&2
read line
printf '{"jsonrpc":"2.0","method":"notification","params":{"message":"%s"}}\n' "$OCTET_EXTENSION_NAME"
read line
printf 'hello from the guest\n'
read line
printf 'unterminated'
"#;

    fn spawn(dir: &std::path::Path) -> Session {
        Launch::new("/bin/sh")
            .args(["-c", FAKE_EXTENSION])
            .manifest_path(dir.join("extension.toml"))
            .workspace(dir)
            .scratch(dir)
            .name("fake")
            .spawn()
            .expect("spawn /bin/sh")
    }

    #[test]
    fn drives_a_fake_extension_and_catches_its_violations() {
        let dir = std::env::temp_dir().canonicalize().expect("temp dir");
        let mut session = spawn(&dir);
        let manifest = ManifestSpec::new("fake", ApiVersion::V0_1).notifications(true);
        let params = InitializeParams::new(&manifest, &dir.join("extension.toml"), &dir).to_json();
        let timeout = Duration::from_secs(10);
        let reply = session
            .call("initialize", params, timeout)
            .expect("initialize");
        assert_eq!(
            reply.result().map(|r| &r["api_version"]),
            Some(&json!("0.1"))
        );
        let record = session
            .stderr()
            .wait_for_message(timeout, "ready")
            .expect("stderr record");
        assert_eq!(record.field("cwd_is_workspace"), Some(&json!(true)));

        session.notify("poke", json!({})).expect("poke");
        let frame = session.recv(timeout).expect("notification");
        assert_eq!(frame.method(), Some("notification"));
        assert_eq!(frame.params()["message"], "fake");

        session.notify("poke", json!({})).expect("poke");
        match session.recv(timeout) {
            Err(SimError::Violation(violation)) => {
                assert_eq!(violation.rule, Rule::NotJson);
                assert_eq!(violation.line, "hello from the guest");
            }
            other => panic!("expected a violation, got {other:?}"),
        }
        session.close_stdin();
        match session.recv(timeout) {
            Err(SimError::Violation(violation)) => assert_eq!(violation.rule, Rule::Unterminated),
            other => panic!("expected an unterminated line, got {other:?}"),
        }
        assert!(matches!(session.recv(timeout), Err(SimError::Eof)));
        assert!(session.wait_exit(timeout).expect("exit").success());
        assert_eq!(session.violations().len(), 2);
        assert!(session.check_clean().is_err());
    }
}
