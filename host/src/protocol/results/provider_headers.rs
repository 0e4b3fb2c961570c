//! The header changes a `before_provider_headers` hook returns
//! (docs/api-0.4.md): what octet will put on an HTTP request to a model
//! provider, so each name must be an HTTP token and each value an HTTP field
//! value (RFC 9110 §5.1, §5.5), and the whole must fit its bound as the
//! frame carries it. Counting the bytes of names and values alone let 300,000
//! empty values (1.2 MB of `"",` in the frame) count as nothing; the bound
//! here is on the JSON the frame will hold, and the number of values is
//! bounded on its own.
//!
//! A refusal is the tool author's to read: it names the header, the value
//! and the rule, and the request is answered `invalid handler result`.

use super::error::{ResultError, fail};
use crate::runtime::types::HeaderEdit;
use serde_json::{Map, Value, json};

/// Most header names one result changes (the first-party adapter's bound).
pub const MAX_HEADER_NAMES: usize = 256;
/// Most values over all the headers of one result: a request header rarely
/// repeats, and 1,024 leaves four per name at the most names.
pub const MAX_HEADER_VALUES: usize = 1_024;
/// Most bytes of the `provider_headers` object as JSON in the frame: every
/// quote, comma and `null` counts (the adapter's 64 KiB, counted as sent).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Longest header name.
pub const MAX_HEADER_NAME_BYTES: usize = 256;

/// The `provider_headers` object for the frame, or why the edits are refused.
pub fn provider_headers(edits: &[HeaderEdit]) -> Result<Value, ResultError> {
    if edits.len() > MAX_HEADER_NAMES {
        return fail(format!(
            "provider_headers changes {} headers; the limit is {MAX_HEADER_NAMES}",
            edits.len()
        ));
    }
    let total_values: usize = edits
        .iter()
        .filter_map(|e| e.values.as_ref())
        .map(Vec::len)
        .sum();
    if total_values > MAX_HEADER_VALUES {
        return fail(format!(
            "provider_headers carry {total_values} values; the limit is {MAX_HEADER_VALUES} over all headers"
        ));
    }
    let mut object = Map::new();
    let mut seen = std::collections::BTreeSet::new();
    for edit in edits {
        check_name(&edit.name)?;
        // Header names are case-insensitive.
        if !seen.insert(edit.name.to_ascii_lowercase()) {
            return fail(format!("provider header {} is changed twice", edit.name));
        }
        let value = match &edit.values {
            None => Value::Null,
            Some(values) if values.is_empty() => {
                return fail(format!(
                    "provider header {} has an empty list of values (none deletes it)",
                    edit.name
                ));
            }
            Some(values) => {
                for (index, value) in values.iter().enumerate() {
                    check_value(value).map_err(|why| {
                        ResultError(format!(
                            "value {} of provider header {} is not an HTTP field value (RFC 9110 §5.5): {why}",
                            index + 1,
                            edit.name
                        ))
                    })?;
                }
                match values.as_slice() {
                    [one] => json!(one),
                    many => json!(many),
                }
            }
        };
        object.insert(edit.name.clone(), value);
    }
    let object = Value::Object(object);
    let bytes = serde_json::to_string(&object).map_or(usize::MAX, |text| text.len());
    if bytes > MAX_HEADER_BYTES {
        return fail(format!(
            "provider_headers take {bytes} bytes as JSON in the frame; the limit is 64 KiB"
        ));
    }
    Ok(object)
}

/// An HTTP token (RFC 9110 §5.6.2 `tchar`) of 1 to 256 bytes.
fn check_name(name: &str) -> Result<(), ResultError> {
    let token = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !token || !(1..=MAX_HEADER_NAME_BYTES).contains(&name.len()) {
        return fail(format!(
            "provider header name {name:?} is not an HTTP token (RFC 9110 §5.6.2) of 1 to {MAX_HEADER_NAME_BYTES} bytes"
        ));
    }
    Ok(())
}

/// RFC 9110 §5.5: visible ASCII and obs-text (0x80-0xFF, which every
/// non-ASCII UTF-8 byte is), with spaces and tabs only inside. Every other
/// control (NUL, CR, LF, VT, ESC, DEL, ...) is refused: CR and LF would
/// split the request, the others are what servers and proxies disagree on.
fn check_value(value: &str) -> Result<(), String> {
    let bytes = value.as_bytes();
    if let Some(at) = bytes
        .iter()
        .position(|&b| !(b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b) || b >= 0x80))
    {
        return Err(format!(
            "it holds the control character {} at byte {at} (only visible characters, spaces and tabs may appear)",
            control_name(bytes[at])
        ));
    }
    if bytes.first().is_some_and(|&b| b == b' ' || b == b'\t')
        || bytes.last().is_some_and(|&b| b == b' ' || b == b'\t')
    {
        return Err("it starts or ends with a space or tab".into());
    }
    Ok(())
}

/// `0x0B (VT)`: the byte and its usual name.
fn control_name(byte: u8) -> String {
    const C0: [&str; 32] = [
        "NUL", "SOH", "STX", "ETX", "EOT", "ENQ", "ACK", "BEL", "BS", "HT", "LF", "VT", "FF", "CR",
        "SO", "SI", "DLE", "DC1", "DC2", "DC3", "DC4", "NAK", "SYN", "ETB", "CAN", "EM", "SUB",
        "ESC", "FS", "GS", "RS", "US",
    ];
    let name = C0.get(usize::from(byte)).copied().unwrap_or("DEL");
    format!("0x{byte:02X} ({name})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(name: &str, values: Option<Vec<String>>) -> HeaderEdit {
        HeaderEdit {
            name: name.into(),
            values,
        }
    }

    fn one(name: &str, value: &str) -> Vec<HeaderEdit> {
        vec![edit(name, Some(vec![value.to_owned()]))]
    }

    fn refusal(edits: &[HeaderEdit]) -> String {
        provider_headers(edits).unwrap_err().0
    }

    #[test]
    fn sets_and_deletes_in_the_wire_shape() {
        let edits = vec![
            edit("x-one", Some(vec!["1".into()])),
            edit("x-two", Some(vec!["a".into(), "b".into()])),
            edit("x-gone", None),
        ];
        assert_eq!(
            provider_headers(&edits).unwrap(),
            json!({"x-one": "1", "x-two": ["a", "b"], "x-gone": null})
        );
    }

    #[test]
    fn every_control_character_is_refused_with_its_name() {
        for (value, named) in [
            ("a\u{b}b", "0x0B (VT)"),
            ("\u{1b}[31m", "0x1B (ESC)"),
            ("a\u{7f}", "0x7F (DEL)"),
            ("a\0b", "0x00 (NUL)"),
            ("1\r\nInjected: 1", "0x0D (CR)"),
            ("1\nx", "0x0A (LF)"),
        ] {
            let text = refusal(&one("x-a", value));
            assert!(
                text.starts_with("value 1 of provider header x-a is not an HTTP field value"),
                "{text}"
            );
            assert!(text.contains(named), "{value:?}: {text}");
        }
        for c in (0u8..0x20).filter(|&c| c != b'\t').chain([0x7f]) {
            let value = format!("a{}b", char::from(c));
            assert!(provider_headers(&one("x-a", &value)).is_err(), "{c:#x}");
        }
    }

    #[test]
    fn spaces_and_tabs_only_inside() {
        for value in [" a", "a ", "\ta", "a\t", " "] {
            assert!(
                refusal(&one("x-a", value)).contains("starts or ends with a space or tab"),
                "{value:?}"
            );
        }
        let inside = "gzip;\tq=1, br é\u{ff}\u{10ffff}";
        assert_eq!(
            provider_headers(&one("x-a", inside)).unwrap()["x-a"],
            inside
        );
        assert_eq!(provider_headers(&one("x-a", "")).unwrap()["x-a"], "");
        let visible: String = (0x21u8..=0x7e).map(char::from).collect();
        assert!(provider_headers(&one("x-a", &visible)).is_ok());
    }

    #[test]
    fn names_are_tokens() {
        for name in ["bad name", "", "x:y", "x\u{b}", "é", &"n".repeat(257)] {
            assert!(
                refusal(&one(name, "1")).contains("is not an HTTP token"),
                "{name:?}"
            );
        }
        assert!(provider_headers(&one(&"n".repeat(256), "1")).is_ok());
        assert!(provider_headers(&one("!#$%&'*+-.^_`|~09azAZ", "1")).is_ok());
        let twice = vec![edit("X-A", None), edit("x-a", None)];
        assert!(refusal(&twice).contains("changed twice"));
        assert!(refusal(&[edit("x", Some(vec![]))]).contains("empty list"));
        let many: Vec<_> = (0..257).map(|i| edit(&format!("h{i}"), None)).collect();
        assert!(refusal(&many).contains("changes 257 headers"));
    }

    /// Empty values cost nothing by their length but three bytes each in
    /// the frame; both the count and the frame bytes stop them.
    #[test]
    fn empty_values_count_as_the_frame_carries_them() {
        let flood = vec![edit("x-a", Some(vec![String::new(); 300_000]))];
        assert_eq!(
            refusal(&flood),
            "provider_headers carry 300000 values; the limit is 1024 over all headers"
        );
        let at_limit = vec![edit("x-a", Some(vec![String::new(); MAX_HEADER_VALUES]))];
        assert!(provider_headers(&at_limit).is_ok());
        // 1,024 values of 62 bytes: 65 bytes each in JSON (quotes and comma), past 64 KiB
        // with the envelope, while names and values alone are 63,491 bytes.
        let long = vec![edit("x-a", Some(vec!["v".repeat(62); MAX_HEADER_VALUES]))];
        let text = refusal(&long);
        assert!(text.contains("bytes as JSON in the frame"), "{text}");
        let fits = vec![edit("x-a", Some(vec!["v".repeat(60); MAX_HEADER_VALUES]))];
        let encoded = serde_json::to_string(&provider_headers(&fits).unwrap()).unwrap();
        assert!(encoded.len() <= MAX_HEADER_BYTES, "{}", encoded.len());
    }
}
