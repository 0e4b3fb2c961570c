//! text-stats (API 0.4): octet's typescript-hello example, whose one tool
//! `text_stats` counts characters, words, lines and UTF-8 bytes of the text
//! it is given, here as a sandboxed component. Serves two calls at once.
//!
//! A call checks for cancellation, reports one progress status when the
//! host negotiated progress, waits `delayMs` cooperatively, then answers
//! `characters=… words=… lines=… utf8_bytes=…` with the counts as the
//! TypeScript original computes them (code points; whitespace-separated
//! tokens of the trimmed text; pieces between CRLF, CR or LF, 0 for empty
//! text; bytes).

use std::time::Duration;

use octet_guest::prelude::*;

/// Longest text accepted, in code points (the schema's `maxLength`).
const MAX_TEXT_CHARS: usize = 65_536;
/// Longest delay accepted, in milliseconds (the schema's `maximum`).
const MAX_DELAY_MS: u64 = 2_000;

/// What JavaScript's `\s` matches: Unicode White_Space plus U+FEFF.
fn is_js_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The four counts of `text`, in the original's words.
pub fn stats(text: &str) -> String {
    let characters = text.chars().count();
    let words = text
        .trim_matches(is_js_space)
        .split(is_js_space)
        .filter(|word| !word.is_empty())
        .count();
    let lines = if text.is_empty() {
        0
    } else {
        text.replace("\r\n", "\n").split(['\r', '\n']).count()
    };
    format!(
        "characters={characters} words={words} lines={lines} utf8_bytes={}",
        text.len()
    )
}

/// The arguments as the schema allows them: `text`, and `delayMs` from 0
/// to 2000; nothing else.
fn arguments(value: &Value) -> Result<(String, u64)> {
    let object = value
        .as_object()
        .ok_or_else(|| Error::invalid_params("arguments must be an object"))?;
    if let Some(key) = object.keys().find(|k| *k != "text" && *k != "delayMs") {
        return Err(Error::invalid_params(format!("unknown argument {key:?}")));
    }
    let text = object
        .get("text")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_params("text must be a string"))?;
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(Error::invalid_params(format!(
            "text must be at most {MAX_TEXT_CHARS} characters"
        )));
    }
    let delay = match object.get("delayMs") {
        None => 0,
        Some(value) => value
            .as_u64()
            .filter(|ms| *ms <= MAX_DELAY_MS)
            .ok_or_else(|| {
                Error::invalid_params(format!(
                    "delayMs must be an integer from 0 to {MAX_DELAY_MS}"
                ))
            })?,
    };
    Ok((text.to_owned(), delay))
}

fn text_stats(args: Value) -> Result<String> {
    let (text, delay) = arguments(&args)?;
    octet_guest::check_cancelled()?;
    if octet_guest::has_feature("request_progress") {
        octet_guest::progress("Counting supplied text")?;
    }
    if delay > 0 && octet_guest::sleep(Duration::from_millis(delay)) {
        return Err(Error::cancelled());
    }
    Ok(stats(&text))
}

fn setup(ext: &mut Extension) {
    let schema = json!({
        "type": "object",
        "properties": {
            "text": {"type": "string", "maxLength": MAX_TEXT_CHARS},
            "delayMs": {"type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS},
        },
        "required": ["text"],
        "additionalProperties": false,
    });
    ext.max_concurrency(2).uses_progress();
    ext.tool(
        Tool::new(
            "text_stats",
            "Count characters, words, lines and UTF-8 bytes in supplied text locally",
        )
        .parameters(schema),
        text_stats,
    );
}

octet_guest::extension!(setup);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_the_original() {
        assert_eq!(
            stats("hello world\n🦀"),
            "characters=13 words=3 lines=2 utf8_bytes=16"
        );
        assert_eq!(stats(""), "characters=0 words=0 lines=0 utf8_bytes=0");
        assert_eq!(stats("   "), "characters=3 words=0 lines=1 utf8_bytes=3");
        assert_eq!(
            stats("a\r\nb\rc\nd\n"),
            "characters=9 words=4 lines=5 utf8_bytes=9"
        );
        assert_eq!(
            stats("\u{feff}x\u{3000}y"),
            "characters=4 words=2 lines=1 utf8_bytes=8"
        );
    }

    #[test]
    fn refuses_what_the_schema_refuses() {
        for bad in [
            json!({}),
            json!({"text": 1}),
            json!({"text": "x", "delayMs": 2001}),
            json!({"text": "x", "delayMs": -1}),
            json!({"text": "x", "other": true}),
            json!({"text": "x".repeat(MAX_TEXT_CHARS + 1)}),
            json!(["x"]),
        ] {
            assert!(arguments(&bad).is_err(), "{bad}");
        }
        assert!(arguments(&json!({"text": "x", "delayMs": 2000})).is_ok());
    }
}
