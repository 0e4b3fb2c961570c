//! The last check on a frame before it reaches stdout.
//!
//! octet parses every line the extension writes with serde_json and kills
//! the extension over any line it cannot parse (docs/protocol.md#fatal). Guest
//! JSON is checked where it enters (`protocol::guest_json`), so this guard
//! is defence in depth: it refuses what the host would die of, should a
//! boundary check ever be missing, and is never reached when they work.

use super::MAX_FRAME_BYTES;
use super::message::RpcError;
use serde_json::{Value, json};

/// Deepest nesting of arrays and objects a frame may have.
///
/// serde_json, which octet reads every line with, refuses the 128th level.
/// Guest JSON may nest at most 64 levels and the deepest envelope adds 4
/// (an initialize result's `result.tools[i].parameters`), so a frame built
/// from checked parts stays at 68 or less; 100 leaves room for envelopes
/// to grow while staying far from the host's limit.
pub const MAX_FRAME_DEPTH: usize = 100;

/// Every frame the shim writes starts like this: the encoders serialise
/// `jsonrpc` first.
const ENVELOPE_START: &str = "{\"jsonrpc\":\"2.0\",";

/// Why a frame may not be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsendable {
    /// More than [`MAX_FRAME_BYTES`] before the line feed.
    TooLarge { bytes: usize },
    /// Nested deeper than [`MAX_FRAME_DEPTH`].
    TooDeep,
    /// Not a JSON-RPC object (only an encoder failure could produce one).
    NotJsonRpc,
}

impl std::fmt::Display for Unsendable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsendable::TooLarge { bytes } => write!(
                f,
                "frame of {bytes} bytes exceeds the 1 MiB frame limit ({MAX_FRAME_BYTES} bytes before the line feed)"
            ),
            Unsendable::TooDeep => write!(
                f,
                "frame is nested deeper than {MAX_FRAME_DEPTH} levels, the most octet-wasm writes (octet cannot read a frame nested 128 levels deep)"
            ),
            Unsendable::NotJsonRpc => f.write_str("frame is not a JSON-RPC 2.0 object"),
        }
    }
}

impl Unsendable {
    /// The small -32603 error that answers a request whose response was
    /// refused (the SDK's answer to an oversized frame,
    /// docs/protocol.md#frame-size), naming the bound in `data`.
    pub fn rpc_error(&self) -> RpcError {
        let data = match self {
            Unsendable::TooLarge { bytes } => {
                json!({ "limit": "frame", "limit_bytes": MAX_FRAME_BYTES, "frame_bytes": bytes })
            }
            Unsendable::TooDeep => {
                json!({ "limit": "frame_depth", "limit_depth": MAX_FRAME_DEPTH })
            }
            Unsendable::NotJsonRpc => Value::Null,
        };
        let error = RpcError::internal(self.to_string());
        if data.is_null() {
            error
        } else {
            error.with_data(data)
        }
    }
}

/// Whether `line` (without its LF) is a frame the host can read.
pub fn check_frame(line: &str) -> Result<(), Unsendable> {
    if line.len() > MAX_FRAME_BYTES {
        return Err(Unsendable::TooLarge { bytes: line.len() });
    }
    if !line.starts_with(ENVELOPE_START) || !line.ends_with('}') {
        return Err(Unsendable::NotJsonRpc);
    }
    if exceeds_depth(line, MAX_FRAME_DEPTH) {
        return Err(Unsendable::TooDeep);
    }
    Ok(())
}

/// Whether JSON `text` nests arrays and objects deeper than `limit`.
///
/// Counts containers, not the scalars inside them: `{"n":0}` is 1 level,
/// `[[1]]` 2, a bare scalar 0, as serde_json's recursion limit counts.
/// Brackets inside strings (escaped quotes included) do not count. Scans
/// the text without parsing it, so it is safe on text nested far past any
/// parser's limit; on text that is not JSON the answer means nothing.
pub fn exceeds_depth(text: &str, limit: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::message::{encode_notification, encode_response};

    fn nested(levels: usize) -> Value {
        (0..levels).fold(json!(0), |inner, _| json!({ "n": inner }))
    }

    #[test]
    fn depth_counts_containers_outside_strings() {
        assert!(!exceeds_depth("0", 0));
        assert!(exceeds_depth("[]", 0));
        assert!(!exceeds_depth("[[1]]", 2));
        assert!(exceeds_depth("[[1]]", 1));
        assert!(!exceeds_depth(r#"["[[[[\"[[[[", "]]]]"]"#, 1));
        assert!(exceeds_depth(r#"[[["\\"],[[1]]]]"#, 3));
        let text = nested(64).to_string();
        assert!(!exceeds_depth(&text, 64));
        assert!(exceeds_depth(&text, 63));
        // Far past any parser's recursion limit, without recursing.
        let deep = "[".repeat(1_000_000);
        assert!(exceeds_depth(&deep, MAX_FRAME_DEPTH));
    }

    /// serde_json (what octet parses with) reads 127 levels and refuses
    /// the 128th; the frame bound must stay below that, counting alike.
    #[test]
    fn the_frame_bound_is_below_serde_jsons_limit() {
        const { assert!(MAX_FRAME_DEPTH < 127) };
        for levels in [126, 127] {
            let text = nested(levels).to_string();
            assert!(serde_json::from_str::<Value>(&text).is_ok(), "{levels}");
        }
        let text = nested(128).to_string();
        let error = serde_json::from_str::<Value>(&text).unwrap_err();
        assert!(error.to_string().contains("recursion limit"), "{error}");
    }

    #[test]
    fn frames_within_the_bounds_pass() {
        // The notification's params add one level, so the value may nest
        // one less than the frame.
        let line = encode_notification("x", &nested(MAX_FRAME_DEPTH - 1));
        assert_eq!(check_frame(&line), Ok(()));
        let line = encode_response(1, &Ok(nested(MAX_FRAME_DEPTH - 1)));
        assert_eq!(check_frame(&line), Ok(()));
    }

    #[test]
    fn deep_large_and_foreign_frames_are_refused() {
        let line = encode_notification("x", &nested(MAX_FRAME_DEPTH));
        assert_eq!(check_frame(&line), Err(Unsendable::TooDeep));
        let line = encode_response(1, &Ok(nested(200)));
        assert_eq!(check_frame(&line), Err(Unsendable::TooDeep));
        let big = encode_response(1, &Ok(json!("x".repeat(MAX_FRAME_BYTES))));
        assert_eq!(
            check_frame(&big),
            Err(Unsendable::TooLarge { bytes: big.len() })
        );
        for foreign in ["{}", "", "[1]", "{\"jsonrpc\":\"2.0\",\"id\":1"] {
            assert_eq!(
                check_frame(foreign),
                Err(Unsendable::NotJsonRpc),
                "{foreign}"
            );
        }
    }

    #[test]
    fn refusals_read_as_sentences_and_answer_with_the_bound() {
        let error = Unsendable::TooDeep.rpc_error();
        assert_eq!(error.code, -32603);
        assert!(
            error.message.contains("deeper than 100 levels"),
            "{}",
            error.message
        );
        assert_eq!(error.data.as_ref().unwrap()["limit_depth"], 100);
        let error = Unsendable::TooLarge { bytes: 2_000_000 }.rpc_error();
        assert!(
            error
                .message
                .starts_with("frame of 2000000 bytes exceeds the 1 MiB")
        );
        assert_eq!(error.data.as_ref().unwrap()["limit"], "frame");
        // The replacement itself is always a frame the host reads.
        for why in [Unsendable::TooDeep, Unsendable::NotJsonRpc] {
            let line = encode_response(7, &Err(why.rpc_error()));
            assert_eq!(check_frame(&line), Ok(()), "{line}");
        }
    }

    /// Whatever serde_json writes, the host's serde_json reads back: guest
    /// numbers at the edges of f64 and u64/i64, negative zero, escapes.
    #[test]
    fn encoded_guest_values_parse_back() {
        for text in [
            "1.7976931348623157e308",
            "5e-324",
            "-0",
            "18446744073709551615",
            "-9223372036854775808",
            "123456789012345678901234567890",
            "1e-400",
            r#""\u0000\u001f\u2028\u2029\ud83d\ude00""#,
            r#"{"a":1,"a":2}"#,
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            let line = encode_response(1, &Ok(value.clone()));
            assert_eq!(check_frame(&line), Ok(()), "{text}");
            let back: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(back["result"], value, "{text}");
        }
    }
}
