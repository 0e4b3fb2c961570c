//! `octet-wasm replay RECORDING COMPONENT`: plays the host's side of a
//! recording (`demo --record`) against a component, usually a new build of
//! the recorded one, and reports every frame of the extension that differs.
//!
//! The host's frames go out as recorded, each after the extension frames
//! recorded before it have arrived and after the delay the recording shows
//! before it (at most [`MAX_GAP`]), so cancellations still land while a
//! call runs. The host's answers to the extension's own requests are
//! matched by order and method, with the extension's new request ids. The
//! recorded workspace is replaced by the replay's wherever a frame names
//! it. Responses are matched by id, requests and notifications by method
//! in order; frames are compared as JSON values.
//!
//! A replay is as deterministic as the guest: what it reads from the clock
//! (`wasi:clocks`), from randomness (`wasi:random`), from the workspace or
//! the environment can differ from the recording, and timing-dependent
//! output (progress while a call runs, a call that finishes before its
//! cancellation arrives) can too. Secrets were masked in the recording
//! ([`super::record::mask`]), so the guest now receives the mask: a guest
//! that only measures or echoes a secret answers as recorded, one that
//! uses its content does not.

use super::record::{From, Recording, rebase_paths};
use super::scratch_dir;
use super::transcript::{heading, say};
use anyhow::Context as _;
use octet_hostsim::{ApiVersion, Frame, Launch, Session, SimError};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest recorded pause a replay waits out before a host frame.
pub const MAX_GAP: Duration = Duration::from_secs(10);
/// How long a replay waits for an expected response or request.
const WAIT_FOR_ANSWER: Duration = Duration::from_secs(30);
/// How long it waits for an expected notification once nothing else is
/// outstanding.
const WAIT_FOR_NOTIFICATION: Duration = Duration::from_secs(2);

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The recording (`octet-wasm demo --record FILE`).
    recording: PathBuf,
    /// The component to play it against (.wasm), e.g. a new build of the
    /// recorded extension.
    component: PathBuf,
    /// The workspace (default: a fresh empty directory); frames naming the
    /// recorded workspace name this one instead.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Print differing frames whole (default: cut at 400 bytes).
    #[arg(long)]
    full: bool,
}

/// What kind of frame, for matching a new frame to a recorded one.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    Response(u64),
    Request(String),
    Notification(String),
}

fn key(frame: &Value) -> Option<Key> {
    match (frame.get("method").and_then(Value::as_str), frame.get("id")) {
        (Some(method), Some(_)) => Some(Key::Request(method.to_owned())),
        (Some(method), None) => Some(Key::Notification(method.to_owned())),
        (None, Some(id)) => id.as_u64().map(Key::Response),
        (None, None) => None,
    }
}

/// One frame that is not as recorded.
struct Difference {
    what: String,
    recorded: Option<Value>,
    now: Option<Value>,
}

struct Replayer {
    session: Session,
    full: bool,
    /// The recorded workspace and the replay's, as text.
    recorded_workspace: String,
    workspace: String,
    /// Recorded child id → the id the extension uses now.
    child_ids: HashMap<String, Value>,
    /// Host request id → method, for naming responses.
    methods: HashMap<u64, String>,
    /// Frames received and not matched yet.
    received: Vec<Frame>,
    compared: usize,
    differences: Vec<Difference>,
    /// When the last frame was sent or received.
    last_event: Instant,
}

/// Plays the recording; `Ok(true)` when every frame was as recorded.
pub fn run(args: &ReplayArgs) -> anyhow::Result<bool> {
    let recording = Recording::read(&args.recording)?;
    let header = &recording.header;
    let component = args
        .component
        .canonicalize()
        .with_context(|| format!("component {} not found", args.component.display()))?;
    let dir = component
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    let api = ApiVersion::parse(&header.api_version).with_context(|| {
        format!(
            "the recording's api_version {:?} is unknown",
            header.api_version
        )
    })?;
    let (workspace, temporary) = match &args.workspace {
        Some(dir) => (
            dir.canonicalize()
                .with_context(|| format!("--workspace {} not found", dir.display()))?,
            false,
        ),
        None => (scratch_dir("replay-workspace")?, true),
    };
    let scratch = scratch_dir("replay-scratch")?;
    // The recorded `run` options (limits, deadlines) with the new component.
    let options = match header.entrypoint_args.first().map(String::as_str) {
        Some("run") => header.entrypoint_args.iter().skip(2).cloned().collect(),
        _ => Vec::new(),
    };
    let shim = std::env::current_exe().context("cannot locate the octet-wasm binary")?;
    let session = Launch::new(shim)
        .arg("run")
        .arg(&component)
        .args(&options)
        .extension_dir(&dir)
        .manifest_path(&header.manifest)
        .workspace(&workspace)
        .scratch(&scratch)
        .api_version(api)
        .name(&header.extension)
        .spawn()
        .context("cannot start the extension")?;
    heading(&format!(
        "octet-wasm replay: {} ({} frames, API {}) against {}",
        args.recording.display(),
        recording.entries.len(),
        header.api_version,
        component.display()
    ));
    let mut replayer = Replayer {
        session,
        full: args.full,
        recorded_workspace: header.workspace.to_string_lossy().into_owned(),
        workspace: workspace.to_string_lossy().into_owned(),
        child_ids: HashMap::new(),
        methods: HashMap::new(),
        received: Vec::new(),
        compared: 0,
        differences: Vec::new(),
        last_event: Instant::now(),
    };
    let played = replayer.play(&recording);
    if temporary {
        let _ = std::fs::remove_dir_all(&workspace);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    played?;
    Ok(replayer.report())
}

impl Replayer {
    fn play(&mut self, recording: &Recording) -> anyhow::Result<()> {
        let mut expected: Vec<Value> = Vec::new();
        let mut previous_t = 0;
        for entry in &recording.entries {
            match entry.from {
                From::Extension => expected.push(entry.frame.clone()),
                From::Host => {
                    self.settle(&mut expected)?;
                    let gap =
                        Duration::from_micros(entry.t_us.saturating_sub(previous_t)).min(MAX_GAP);
                    let since = self.last_event.elapsed();
                    if gap > since {
                        std::thread::sleep(gap - since);
                    }
                    self.send(&entry.frame)?;
                }
            }
            previous_t = entry.t_us;
        }
        self.settle(&mut expected)?;
        // The recorded session ended with shutdown (or stdin closing).
        self.session.close_stdin();
        if self.session.wait_exit(Duration::from_secs(5)).is_err() {
            let _ = self.session.kill();
        }
        for frame in std::mem::take(&mut self.received) {
            self.differences.push(Difference {
                what: format!(
                    "{} not in the recording",
                    describe(&frame.value, &self.methods)
                ),
                recorded: None,
                now: Some(frame.value),
            });
        }
        if let Err(violation) = self.session.check_clean() {
            self.differences.push(Difference {
                what: format!("a frame octet would reject: {violation}"),
                recorded: None,
                now: None,
            });
        }
        Ok(())
    }

    /// A recorded host frame, with the extension's current child ids and
    /// the replay's workspace.
    fn send(&mut self, recorded: &Value) -> anyhow::Result<()> {
        let mut frame = recorded.clone();
        rebase_paths(&mut frame, &self.recorded_workspace, &self.workspace);
        // A response answers one of the extension's requests, and a
        // cancellation may name one: they take the id the extension uses now.
        let target = match frame.get("method").and_then(Value::as_str) {
            None => Some(("/id", true)),
            Some("$/cancelRequest") => Some(("/params/id", false)),
            Some(_) => None,
        };
        if let Some((pointer, required)) = target
            && let Some(id) = frame.pointer_mut(pointer)
        {
            match self.child_ids.get(&id.to_string()) {
                Some(now) => *id = now.clone(),
                None if required => {
                    self.differences.push(Difference {
                        what: format!(
                            "the extension never sent the request {id} the recording answers"
                        ),
                        recorded: Some(recorded.clone()),
                        now: None,
                    });
                    return Ok(());
                }
                None => {}
            }
        }
        if let (Some(id), Some(method)) = (frame["id"].as_u64(), frame["method"].as_str()) {
            self.methods.insert(id, method.to_owned());
        }
        self.session.send(&frame)?;
        self.last_event = Instant::now();
        Ok(())
    }

    /// Receives until every expected frame is matched (or does not come).
    fn settle(&mut self, expected: &mut Vec<Value>) -> anyhow::Result<()> {
        loop {
            self.match_received(expected);
            if expected.is_empty() {
                return Ok(());
            }
            let waiting_for_answer = expected
                .iter()
                .any(|frame| !matches!(key(frame), Some(Key::Notification(_))));
            let timeout = if waiting_for_answer {
                WAIT_FOR_ANSWER
            } else {
                WAIT_FOR_NOTIFICATION
            };
            match self.session.recv(timeout) {
                Ok(frame) => {
                    self.last_event = Instant::now();
                    self.received.push(frame);
                }
                Err(SimError::Timeout { .. } | SimError::Eof) => break,
                Err(SimError::Violation(violation)) => {
                    self.differences.push(Difference {
                        what: format!("a frame octet would reject: {violation}"),
                        recorded: None,
                        now: None,
                    });
                    break;
                }
                Err(SimError::Io(err)) => return Err(err).context("reading the extension"),
            }
        }
        for frame in expected.drain(..) {
            self.differences.push(Difference {
                what: format!("{} did not come", describe(&frame, &self.methods)),
                recorded: Some(frame),
                now: None,
            });
        }
        Ok(())
    }

    /// Pairs expected frames with received ones of the same kind, in order,
    /// and compares each pair.
    fn match_received(&mut self, expected: &mut Vec<Value>) {
        let mut index = 0;
        while index < expected.len() {
            let wanted = key(&expected[index]);
            let Some(position) = self
                .received
                .iter()
                .position(|frame| key(&frame.value) == wanted)
            else {
                index += 1;
                continue;
            };
            let recorded = expected.remove(index);
            let frame = self.received.remove(position);
            let mut now = frame.value;
            rebase_paths(&mut now, &self.workspace, &self.recorded_workspace);
            if let Some(Key::Request(_)) = wanted {
                let (Some(old), Some(new)) = (recorded.get("id"), now.get("id").cloned()) else {
                    continue;
                };
                self.child_ids.insert(old.to_string(), new);
                now["id"] = old.clone();
            }
            self.compared += 1;
            if now != recorded {
                self.differences.push(Difference {
                    what: describe(&recorded, &self.methods),
                    recorded: Some(recorded),
                    now: Some(now),
                });
            }
        }
    }

    fn report(&self) -> bool {
        for difference in &self.differences {
            say(&format!("differs: {}", difference.what));
            for (label, value) in [
                ("recorded", &difference.recorded),
                ("now     ", &difference.now),
            ] {
                if let Some(value) = value {
                    say(&format!("  {label} {}", self.shown(&value.to_string())));
                }
            }
        }
        let same = self.compared
            - self
                .differences
                .iter()
                .filter(|d| d.recorded.is_some() && d.now.is_some())
                .count();
        say(&format!(
            "replay: {} frame(s) of the extension compared, {same} as recorded, {} difference(s)",
            self.compared,
            self.differences.len()
        ));
        self.differences.is_empty()
    }

    fn shown(&self, text: &str) -> String {
        const SHOWN: usize = 400;
        if self.full || text.len() <= SHOWN {
            return text.to_owned();
        }
        let mut end = SHOWN;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes; --full shows all)", &text[..end], text.len())
    }
}

fn describe(frame: &Value, methods: &HashMap<u64, String>) -> String {
    match key(frame) {
        Some(Key::Response(id)) => match methods.get(&id) {
            Some(method) => format!("the reply to {method} (id {id})"),
            None => format!("the reply to request {id}"),
        },
        Some(Key::Request(method)) => format!("the extension's {method} request"),
        Some(Key::Notification(method)) if method == "notification" => "the notification".into(),
        Some(Key::Notification(method)) => format!("the {method} notification"),
        None => "a frame without method or id".into(),
    }
}
