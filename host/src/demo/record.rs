//! Recordings: every frame of a session, both ways, with its time, as JSON
//! lines, so `octet-wasm replay` can play the host's side again.
//!
//! ```text
//! {"octet_wasm_recording":1,"extension":"showcase","api_version":"0.2","workspace":"/tmp/w",...}
//! {"t_us":1520,"from":"host","frame":{"jsonrpc":"2.0","id":1,"method":"initialize",...}}
//! {"t_us":48211,"from":"extension","frame":{"jsonrpc":"2.0","id":1,"result":{...}}}
//! ```
//!
//! Only the user starts a recording (`demo --record`): a bundle's manifest
//! reaches `run`, which never records, so it can neither switch recording
//! on nor choose where it goes. A recording can hold secrets, so the
//! values the host handed out (`secret/get` answers, answers to
//! `input/request` with `secret: true`) are masked ([`mask`]: as many `*`
//! as the value has characters) wherever they appear, in the answer and in
//! any later frame that echoes them verbatim. The mask keeps the length so
//! that a replay, whose guest receives the mask, answers as the recorded
//! one did when it only measured or echoed the secret; the length is all
//! that is kept. A guest that transforms a secret (hashes, encodes it)
//! defeats the search, so a recording is written readable only by the
//! user.

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What a secret reads as in a recording, and so in a replay.
pub fn mask(secret: &str) -> String {
    "*".repeat(secret.chars().count())
}

/// Secrets shorter than this are redacted where they are handed out, not
/// searched for in other frames (a one-letter secret would blank every
/// frame).
const MIN_ECHO_REDACTION: usize = 4;

/// The recording format's version.
const FORMAT: u64 = 1;

/// The first line: what was recorded.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Header {
    pub octet_wasm_recording: u64,
    pub octet_wasm_version: String,
    pub extension: String,
    pub api_version: String,
    /// The manifest's `[entrypoint].args`.
    pub entrypoint_args: Vec<String>,
    pub extension_dir: PathBuf,
    pub manifest: PathBuf,
    /// The workspace the frames name; a replay substitutes its own.
    pub workspace: PathBuf,
    /// Milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
}

/// Who wrote a frame.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum From {
    Host,
    Extension,
}

/// One frame of a recording.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Entry {
    /// Microseconds since the session started.
    pub t_us: u64,
    pub from: From,
    pub frame: Value,
}

/// Writes a recording as the session goes.
pub struct Recorder {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    started: Instant,
    /// Values to blank wherever they appear.
    secrets: Vec<String>,
}

impl Recorder {
    /// Creates `path` readable only by the user (a recording can hold what
    /// the extension saw) and writes the header.
    pub fn create(path: &Path, header: &Header) -> anyhow::Result<Recorder> {
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("cannot create the recording {}", path.display()))?;
        let mut recorder = Recorder {
            path: path.to_path_buf(),
            out: std::io::BufWriter::new(file),
            started: Instant::now(),
            secrets: Vec::new(),
        };
        recorder.line(&serde_json::to_value(header)?)?;
        Ok(recorder)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// From now on, `value` is blanked wherever it appears.
    pub fn redact(&mut self, value: &str) {
        if value.len() >= MIN_ECHO_REDACTION && !self.secrets.iter().any(|s| s == value) {
            self.secrets.push(value.to_owned());
        }
    }

    /// Records one frame; `secret_answer` blanks the answer's `value`
    /// outright (a `secret/get` or secret `input/request` reply).
    pub fn frame(&mut self, from: From, frame: &Value, secret_answer: bool) -> anyhow::Result<()> {
        let mut frame = frame.clone();
        if secret_answer && let Some(Value::String(value)) = frame.pointer_mut("/result/value") {
            *value = mask(value);
        }
        blank(&mut frame, &self.secrets);
        let entry = Entry {
            t_us: u64::try_from(self.started.elapsed().as_micros()).unwrap_or(u64::MAX),
            from,
            frame,
        };
        self.line(&serde_json::to_value(entry)?)
    }

    fn line(&mut self, value: &Value) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.out, value)?;
        self.out.write_all(b"\n")?;
        // Flushed per frame: a session that dies still leaves what it saw.
        self.out
            .flush()
            .with_context(|| format!("cannot write the recording {}", self.path.display()))
    }
}

/// Replaces every occurrence of a secret in every string of `value`.
fn blank(value: &mut Value, secrets: &[String]) {
    if secrets.is_empty() {
        return;
    }
    match value {
        Value::String(text) => {
            for secret in secrets {
                if text.contains(secret.as_str()) {
                    *text = text.replace(secret.as_str(), &mask(secret));
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| blank(item, secrets)),
        Value::Object(map) => map.values_mut().for_each(|item| blank(item, secrets)),
        _ => {}
    }
}

/// A recording read back.
pub struct Recording {
    pub header: Header,
    pub entries: Vec<Entry>,
}

impl Recording {
    pub fn read(path: &Path) -> anyhow::Result<Recording> {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot open the recording {}", path.display()))?;
        let mut lines = BufReader::new(file).lines();
        let first = lines
            .next()
            .transpose()?
            .with_context(|| format!("{} is empty", path.display()))?;
        let header: Header = serde_json::from_str(&first).with_context(|| {
            format!(
                "{} does not start with an octet-wasm recording header",
                path.display()
            )
        })?;
        if header.octet_wasm_recording != FORMAT {
            bail!(
                "{} is a recording of format {}; this octet-wasm reads format {FORMAT}",
                path.display(),
                header.octet_wasm_recording
            );
        }
        let mut entries = Vec::new();
        for (n, line) in lines.enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let entry: Entry = serde_json::from_str(&line).with_context(|| {
                format!("{} line {}: not a recorded frame", path.display(), n + 2)
            })?;
            entries.push(entry);
        }
        Ok(Recording { header, entries })
    }
}

/// Replaces `from` by `to` at the start of every string of `value` that
/// is `from` or a path under it (a workspace moved between sessions).
pub fn rebase_paths(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(text) => {
            if let Some(rest) = text.strip_prefix(from)
                && (rest.is_empty() || rest.starts_with('/'))
            {
                *text = format!("{to}{rest}");
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| rebase_paths(item, from, to)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|item| rebase_paths(item, from, to)),
        _ => {}
    }
}

/// An object's members, for building frames in a fixed order.
pub fn object(members: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
    let mut map = Map::new();
    for (key, value) in members {
        map.insert(key.to_owned(), value);
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn header() -> Header {
        Header {
            octet_wasm_recording: FORMAT,
            octet_wasm_version: "0".into(),
            extension: "x".into(),
            api_version: "0.2".into(),
            entrypoint_args: vec!["run".into(), "x.wasm".into()],
            extension_dir: "/e".into(),
            manifest: "/e/extension.toml".into(),
            workspace: "/w".into(),
            started_unix_ms: 1,
        }
    }

    #[test]
    fn secrets_are_blanked_where_answered_and_where_echoed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut recorder = Recorder::create(&path, &header()).unwrap();
        recorder.redact("hunter22");
        recorder.redact("ab");
        recorder
            .frame(
                From::Host,
                &json!({"id": "shim:1", "result": {"value": "hunter22"}}),
                true,
            )
            .unwrap();
        recorder
            .frame(
                From::Extension,
                &json!({"id": 2, "result": {"content": [{"type": "text", "text": "token hunter22, ab"}]}}),
                false,
            )
            .unwrap();
        drop(recorder);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("hunter22"), "{text}");
        assert!(text.contains("token ********, ab"), "{text}");
        let recording = Recording::read(&path).unwrap();
        assert_eq!(recording.entries.len(), 2);
        assert_eq!(recording.entries[0].frame["result"]["value"], "********");
        assert_eq!(recording.entries[1].from, From::Extension);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "only the user reads a recording");
    }

    #[test]
    fn paths_under_the_workspace_are_rebased() {
        let mut value = json!({"workspace": "/w", "file": "/w/a/b", "other": "/wx", "n": ["/w/c"]});
        rebase_paths(&mut value, "/w", "/new");
        assert_eq!(
            value,
            json!({"workspace": "/new", "file": "/new/a/b", "other": "/wx", "n": ["/new/c"]})
        );
    }
}
