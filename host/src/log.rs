//! Structured diagnostics on stderr, one JSON object per line.
//!
//! octet reads the extension's stderr as free text, one diagnostic per line
//! (protocol-core §1.8); the SDK convention is `{"level", "message", ...fields}`
//! and we keep it so both look alike in the host's logs. stdout is never
//! touched here: it belongs to the wire writer alone.

use serde_json::{Map, Value};
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

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

/// Longest string value kept in a record; longer ones are cut (with a marker)
/// so one record stays one bounded stderr line (the host force-splits lines at
/// 1 MiB).
const MAX_FIELD_BYTES: usize = 16 * 1024;

/// Sets the lowest level that is written.
pub fn set_min_level(level: Level) {
    MIN_LEVEL.store(level as u8, Ordering::Relaxed);
}

/// Whether records of `level` are written at all.
pub fn enabled(level: Level) -> bool {
    level as u8 >= MIN_LEVEL.load(Ordering::Relaxed)
}

/// Writes one record. `fields` must be a JSON object (other values are put
/// under `"fields"`); `level` and `message` always come first.
pub fn write(level: Level, message: &str, fields: Value) {
    if !enabled(level) {
        return;
    }
    let mut record = Map::new();
    record.insert("level".into(), Value::from(level.as_str()));
    record.insert("message".into(), Value::from(truncate(message)));
    match fields {
        Value::Object(map) => {
            for (key, value) in map {
                if key != "level" && key != "message" {
                    record.insert(key, bound(value));
                }
            }
        }
        Value::Null => {}
        other => {
            record.insert("fields".into(), bound(other));
        }
    }
    let mut line = Value::Object(record).to_string();
    line.push('\n');
    // A failed stderr write has nowhere to be reported; dropping it is the
    // only option and never affects the protocol stream.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

fn bound(value: Value) -> Value {
    match value {
        Value::String(text) if text.len() > MAX_FIELD_BYTES => Value::String(truncate(&text)),
        other => other,
    }
}

/// Cuts `text` to at most [`MAX_FIELD_BYTES`] on a character boundary.
pub fn truncate(text: &str) -> String {
    if text.len() <= MAX_FIELD_BYTES {
        return text.to_owned();
    }
    let mut end = MAX_FIELD_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [{} bytes cut]", &text[..end], text.len() - end)
}

/// `log!(Level::Info, "message", "key" => value, ...)`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_char_boundary() {
        let text = "é".repeat(MAX_FIELD_BYTES);
        let cut = truncate(&text);
        assert!(cut.len() < text.len());
        assert!(cut.contains("bytes cut"));
    }

    #[test]
    fn parses_levels() {
        assert_eq!(Level::parse("WARN"), Some(Level::Warning));
        assert_eq!(Level::parse("nope"), None);
    }
}
