//! One record, one bounded stderr line.
//!
//! octet reads stderr a line at a time and splits lines at 1 MiB; a record
//! longer than that would arrive as pieces of broken JSON, and a long one
//! costs the host memory and the user's log. So every record, the shim's
//! own and the guest's, is cut to [`MAX_LINE_BYTES`]: it stays a JSON
//! object, every field that fits is kept whole, the long ones share what is
//! left (each cut with `…`), and a `truncated` field says how long the line
//! was and how many bytes were cut.

use serde_json::{Map, Value};

/// Longest line a record becomes, newline excluded.
pub const MAX_LINE_BYTES: usize = 16 * 1024;

/// Room kept for `,"truncated":{"line_bytes":N,"cut_bytes":N}`.
const MARKER_RESERVE: usize = 96;
/// Entries at most this long (as `"key":value,`) are never cut.
const SMALL_ENTRY: usize = 256;
/// Longest key kept whole; guest-chosen keys can be anything.
const MAX_KEY_BYTES: usize = 128;
/// What a cut string ends with.
const ELLIPSIS: &str = "…";

/// The record as one line of at most [`MAX_LINE_BYTES`] bytes.
pub fn render(record: Map<String, Value>) -> String {
    let full = serde_json::to_string(&record).unwrap_or_default();
    if full.len() <= MAX_LINE_BYTES {
        return full;
    }
    let mut kept = compact(record, MAX_LINE_BYTES - MARKER_RESERVE);
    let cut = full
        .len()
        .saturating_sub(serde_json::to_string(&kept).map_or(0, |s| s.len()));
    kept.insert(
        "truncated".into(),
        serde_json::json!({ "line_bytes": full.len(), "cut_bytes": cut }),
    );
    serde_json::to_string(&kept).unwrap_or_default()
}

/// Keeps what fits in `budget` bytes (braces included): small entries
/// whole, in order while they fit; then the long ones, shortest first, each
/// cut to an equal share of what remains, so one huge field cannot starve
/// the others.
fn compact(record: Map<String, Value>, budget: usize) -> Map<String, Value> {
    let entries: Vec<(String, Value, usize)> = record
        .into_iter()
        .map(|(key, value)| {
            let key = cut_key(key);
            let size = entry_len(&key, &value);
            (key, value, size)
        })
        .collect();
    let mut remaining = budget.saturating_sub(2);
    let mut keep: Vec<Option<Value>> = vec![None; entries.len()];
    let mut long = Vec::new();
    for (index, (_, value, size)) in entries.iter().enumerate() {
        if *size <= SMALL_ENTRY {
            if *size <= remaining {
                remaining -= size;
                keep[index] = Some(value.clone());
            }
        } else {
            long.push(index);
        }
    }
    long.sort_by_key(|&index| entries[index].2);
    let mut left = long.len();
    for index in long {
        let (key, value, size) = &entries[index];
        let share = remaining / left.max(1);
        left -= 1;
        if *size <= share {
            remaining -= size;
            keep[index] = Some(value.clone());
            continue;
        }
        // `"key":"…",`: the key, its colon and comma, the quotes.
        let overhead = json_string_len(key) + 4;
        let Some(room) = share.checked_sub(overhead + ELLIPSIS.len()) else {
            continue;
        };
        let text = match value {
            Value::String(text) => cut_to(text, room),
            other => cut_to(&other.to_string(), room),
        };
        remaining -= entry_len(key, &Value::String(text.clone()));
        keep[index] = Some(Value::String(text));
    }
    entries
        .into_iter()
        .zip(keep)
        .filter_map(|((key, _, _), value)| value.map(|value| (key, value)))
        .collect()
}

fn cut_key(key: String) -> String {
    if key.len() <= MAX_KEY_BYTES {
        return key;
    }
    let mut end = MAX_KEY_BYTES;
    while !key.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{ELLIPSIS}", &key[..end])
}

/// `"key":value,` as serialised.
fn entry_len(key: &str, value: &Value) -> usize {
    json_string_len(key) + 2 + serde_json::to_string(value).map_or(0, |s| s.len())
}

fn json_string_len(text: &str) -> usize {
    2 + text.chars().map(escaped_len).sum::<usize>()
}

/// Bytes serde_json writes for `c` inside a string.
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    }
}

/// The longest prefix of `text` whose escaped form fits `room` bytes, with
/// the ellipsis after it.
fn cut_to(text: &str, room: usize) -> String {
    let mut used = 0;
    let mut end = 0;
    for (index, c) in text.char_indices() {
        let size = escaped_len(c);
        if used + size > room {
            break;
        }
        used += size;
        end = index + c.len_utf8();
    }
    format!("{}{ELLIPSIS}", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    fn parse(line: &str) -> Map<String, Value> {
        record(serde_json::from_str(line).expect("a cut line is still JSON"))
    }

    #[test]
    fn short_records_are_untouched() {
        let line = render(record(json!({"level": "info", "message": "hi", "n": 1})));
        assert_eq!(line, r#"{"level":"info","message":"hi","n":1}"#);
    }

    #[test]
    fn one_huge_message_is_cut_with_its_length_reported() {
        let message = "x".repeat(2 << 20);
        let line = render(record(
            json!({"level": "info", "message": message, "source": "guest"}),
        ));
        assert!(line.len() <= MAX_LINE_BYTES, "{} bytes", line.len());
        let parsed = parse(&line);
        assert_eq!(parsed["level"], "info");
        assert_eq!(parsed["source"], "guest", "small fields survive");
        let kept = parsed["message"].as_str().unwrap();
        assert!(
            kept.ends_with(ELLIPSIS) && kept.len() > 8 * 1024,
            "{}",
            kept.len()
        );
        let full = 2 + r#""level":"info","message":"","source":"guest""#.len() + (2 << 20);
        assert_eq!(parsed["truncated"]["line_bytes"], json!(full));
        let cut = parsed["truncated"]["cut_bytes"].as_u64().unwrap() as usize;
        assert!(cut > (2 << 20) - MAX_LINE_BYTES && cut < 2 << 20, "{cut}");
    }

    #[test]
    fn long_fields_share_the_room_and_short_ones_stay_whole() {
        let line = render(record(json!({
            "level": "error",
            "message": "guest trapped",
            "error": "e".repeat(50_000),
            "backtrace": "b".repeat(3_000),
            "request_id": 7,
        })));
        assert!(line.len() <= MAX_LINE_BYTES);
        let parsed = parse(&line);
        assert_eq!(parsed["request_id"], 7);
        assert_eq!(parsed["message"], "guest trapped");
        assert_eq!(
            parsed["backtrace"].as_str().unwrap().len(),
            3_000,
            "the shorter long field fits its share whole"
        );
        assert!(parsed["error"].as_str().unwrap().len() > 8 * 1024);
        let keys: Vec<&String> = parsed.keys().collect();
        assert_eq!(
            keys,
            [
                "level",
                "message",
                "error",
                "backtrace",
                "request_id",
                "truncated"
            ],
            "order is kept"
        );
    }

    #[test]
    fn nested_values_many_fields_and_escapes_stay_bounded() {
        let mut fields = Map::new();
        fields.insert("level".into(), json!("info"));
        fields.insert("message".into(), json!("many"));
        for i in 0..5_000 {
            fields.insert(format!("field{i}"), json!("\u{1}\"\\ quoted"));
        }
        fields.insert("nested".into(), json!({"deep": vec!["\u{0}"; 20_000]}));
        fields.insert("k".repeat(10_000), json!(1));
        let line = render(fields);
        assert!(line.len() <= MAX_LINE_BYTES, "{} bytes", line.len());
        let parsed = parse(&line);
        assert_eq!(parsed["message"], "many");
        assert!(parsed["truncated"]["cut_bytes"].as_u64().unwrap() > 100_000);
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let line = render(record(
            json!({"level": "info", "message": "é".repeat(20_000)}),
        ));
        assert!(line.len() <= MAX_LINE_BYTES);
        assert!(parse(&line)["message"].as_str().unwrap().starts_with("éé"));
    }
}
