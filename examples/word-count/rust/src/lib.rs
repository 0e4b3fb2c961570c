//! word-count (API 0.2): the file-reading reference. One tool,
//! `word_count {path}`, that reads a text file of the workspace (granted by
//! `filesystem = "workspace"`) and returns its line, word, character and
//! byte counts, as text and as structured content.
//!
//! Files are ordinary `std::fs` calls: relative paths resolve in the
//! workspace. The same extension exists in JavaScript and C with the same
//! answers, word for word (`tests/e2e/word_count.rs`).

use std::io::ErrorKind;

use octet_guest::prelude::*;

/// Files above this size are refused rather than read into memory.
const MAX_BYTES: u64 = 1 << 20;

/// A relative path that stays in the workspace: not empty, not absolute, no
/// `..` component.
fn checked_path(args: &Value) -> Result<String> {
    let Some(path) = args.get("path").and_then(Value::as_str) else {
        return Err(Error::invalid_params("path must be a string"));
    };
    if path.is_empty() || path.starts_with('/') || path.split('/').any(|part| part == "..") {
        return Err(Error::invalid_params(
            "path must be relative to the workspace, without `..`",
        ));
    }
    Ok(path.to_owned())
}

/// ASCII whitespace separates words (the same set in every language).
fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

fn word_count(args: Value) -> Result<ToolResult> {
    let path = checked_path(&args)?;
    let metadata = match std::fs::metadata(&path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == ErrorKind::NotFound => {
            return Err(Error::failed(format!(
                "{path}: no such file in the workspace"
            )));
        }
        Err(_) => return Err(Error::failed(format!("{path} cannot be read"))),
    };
    if metadata.is_dir() {
        return Err(Error::failed(format!("{path} is a directory, not a file")));
    }
    if metadata.len() > MAX_BYTES {
        return Err(Error::failed(format!("{path} is larger than 1 MiB")));
    }
    let bytes =
        std::fs::read(&path).map_err(|_| Error::failed(format!("{path} cannot be read")))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| Error::failed(format!("{path} is not UTF-8 text")))?;
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let words = bytes
        .split(|&b| is_space(b))
        .filter(|word| !word.is_empty())
        .count();
    let chars = text.chars().count();
    Ok(ToolResult::text(format!(
        "{path}: {lines} lines, {words} words, {chars} characters, {} bytes",
        bytes.len()
    ))
    .structured(json!({"lines": lines, "words": words, "chars": chars, "bytes": bytes.len()})))
}

fn setup(ext: &mut Extension) {
    ext.tool(
        Tool::new(
            "word_count",
            "Count the lines, words, characters and bytes of a text file in the workspace",
        )
        .parameters(json!({
            "type": "object",
            "properties": {"path": {"type": "string", "description": "A file in the workspace, relative to its root"}},
            "required": ["path"],
            "additionalProperties": false,
        }))
        .output_schema(json!({
            "type": "object",
            "properties": {
                "lines": {"type": "integer"},
                "words": {"type": "integer"},
                "chars": {"type": "integer"},
                "bytes": {"type": "integer"},
            },
            "required": ["lines", "words", "chars", "bytes"],
        })),
        word_count,
    );
}

octet_guest::extension!(setup);
