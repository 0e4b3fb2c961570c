//! The demo's side of the wire: every frame it writes or reads goes
//! through here, so the transcript, the recording and the checker see the
//! same frames, and every request of the extension gets the local host's
//! answer.

use super::record::{self, Recorder};
use super::services::LocalHost;
use super::transcript::say;
use octet_hostsim::{Frame, FrameKind, Session, SimError};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How long the demo waits for any one answer of the extension.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A warning that carries the reason of an error answered without one;
/// otherwise the reason is the first new error record with an `error`
/// (the shim's "request handler failed", "guest trapped", or an SDK's own
/// "command handler failed").
const REASON_WARNING: &str = "the guest returned an invalid result";

/// Frames longer than this are cut in the transcript unless `--full`.
const SHOWN_BYTES: usize = 400;

pub struct Wire {
    pub session: Session,
    pub host: LocalHost,
    pub recorder: Option<Recorder>,
    full: bool,
    next_id: u64,
    /// How many stderr lines there were when each request was sent: the
    /// shim may log a failure before `wait` begins.
    log_marks: std::collections::HashMap<u64, usize>,
}

impl Wire {
    pub fn new(session: Session, host: LocalHost, recorder: Option<Recorder>, full: bool) -> Wire {
        Wire {
            session,
            host,
            recorder,
            full,
            next_id: 1,
            log_marks: std::collections::HashMap::new(),
        }
    }

    fn send(&mut self, frame: &Value, secret: bool) -> anyhow::Result<()> {
        if let Some(recorder) = &mut self.recorder {
            recorder.frame(record::From::Host, frame, secret)?;
        }
        self.session.send(frame)?;
        Ok(())
    }

    fn recv(&mut self, timeout: Duration) -> Result<Frame, SimError> {
        let frame = self.session.recv(timeout)?;
        if let Some(recorder) = &mut self.recorder
            && let Err(err) = recorder.frame(record::From::Extension, &frame.value, false)
        {
            say(&format!("  (recording stopped: {err:#})"));
            self.recorder = None;
        }
        Ok(frame)
    }

    /// Sends a request with the next id; returns the id.
    pub fn request(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        say(&format!("→ {method} {}", brief(&params)));
        let frame = record::object([
            ("jsonrpc", json!("2.0")),
            ("id", json!(id)),
            ("method", json!(method)),
            ("params", params),
        ]);
        self.log_marks
            .insert(id, self.session.stderr().lines().len());
        self.send(&frame, false)?;
        Ok(id)
    }

    pub fn notify(&mut self, method: &str, params: Value) -> anyhow::Result<()> {
        say(&format!("→ {method} {params}"));
        let frame = record::object([
            ("jsonrpc", json!("2.0")),
            ("method", json!(method)),
            ("params", params),
        ]);
        self.send(&frame, false)
    }

    /// A request and its response.
    pub fn exchange(&mut self, method: &str, params: Value) -> anyhow::Result<Frame> {
        let id = self.request(method, params)?;
        self.wait(id)
    }

    /// `tool/call` params; with `dynamic_tools` negotiated they name the
    /// catalog revision the call is for, as octet's do.
    pub fn tool_params(&self, name: &str, arguments: &Value, context: &Value) -> Value {
        let mut params = json!({"name": name, "arguments": arguments, "context": context});
        if self.session.features().contains("dynamic_tools") {
            params["catalog_revision"] = json!(self.host.revision);
        }
        params
    }

    /// Reads frames until the response to `id`, answering every request
    /// of the extension on the way.
    pub fn wait(&mut self, id: u64) -> anyhow::Result<Frame> {
        let deadline = Instant::now() + TIMEOUT;
        let log_mark = self
            .log_marks
            .remove(&id)
            .unwrap_or_else(|| self.session.stderr().lines().len());
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.recv(left)?;
            say(&format!("← {}", self.shown(&frame.raw)));
            match &frame.kind {
                FrameKind::Response { id: got, .. } if *got == id => {
                    self.explain(&frame, log_mark);
                    return Ok(frame);
                }
                FrameKind::Request {
                    id: child,
                    method,
                    params,
                } => {
                    let answer = self.host.answer(method, params);
                    say(&format!("  host: {}", answer.note));
                    if answer.secret
                        && let (Some(recorder), Ok(result)) = (&mut self.recorder, &answer.outcome)
                        && let Some(value) = result["value"].as_str()
                    {
                        recorder.redact(value);
                    }
                    let (member, body) = match &answer.outcome {
                        Ok(result) => ("result", result.clone()),
                        Err((code, message)) => {
                            ("error", json!({"code": code, "message": message}))
                        }
                    };
                    let reply = record::object([
                        ("jsonrpc", json!("2.0")),
                        ("id", child.to_json()),
                        (member, body),
                    ]);
                    let shown = if answer.secret {
                        json!({"jsonrpc": "2.0", "id": child.to_json(), "result": {"value": "(the secret)"}})
                    } else {
                        reply.clone()
                    };
                    say(&format!("→ {}", self.shown(&shown.to_string())));
                    self.send(&reply, answer.secret)?;
                }
                _ => {}
            }
        }
    }

    /// Under an error answered without `data`, the reason the shim logged.
    fn explain(&self, frame: &Frame, log_mark: usize) {
        let Some(Err(error)) = frame.outcome() else {
            return;
        };
        if error.data.is_some() {
            return;
        }
        // The record and the response travel on different pipes.
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            let lines = self.session.stderr().lines();
            let reason = lines.iter().skip(log_mark).find_map(|line| {
                let error = line.field("error")?.as_str()?;
                let telling =
                    line.level() == Some("error") || line.message() == Some(REASON_WARNING);
                (telling && error != error_message(frame)).then(|| error.to_owned())
            });
            if let Some(reason) = reason {
                say(&format!("  why (the shim's log): {reason}"));
                return;
            }
            if Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn shown(&self, raw: &str) -> String {
        if self.full || raw.len() <= SHOWN_BYTES {
            return raw.to_owned();
        }
        let mut end = SHOWN_BYTES;
        while !raw.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes; --full shows all)", &raw[..end], raw.len())
    }

    /// Whether every frame passed octet's checks.
    pub fn finish(&mut self) -> anyhow::Result<()> {
        self.session
            .check_clean()
            .map_err(|err| anyhow::anyhow!("the shim wrote a frame octet would reject: {err}"))
    }
}

fn error_message(frame: &Frame) -> &str {
    match frame.outcome() {
        Some(Err(error)) => &error.message,
        _ => "",
    }
}

/// The params as shown: the execution context and the long initialize
/// members are elided, since they repeat on every request.
fn brief(params: &Value) -> Value {
    let mut shown = params.clone();
    if let Value::Object(map) = &mut shown {
        for key in [
            "context",
            "host",
            "extension",
            "capabilities",
            "contributes",
        ] {
            if map.contains_key(key) {
                map.insert(key.into(), json!("…"));
            }
        }
    }
    shown
}
