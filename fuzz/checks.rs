//! The properties the fuzz targets check, shared with the host's corpus
//! replay test (`tests/e2e/fuzz_corpus.rs` includes this file), so CI checks
//! every committed seed and regression without cargo-fuzz.
//!
//! Each check panics on a violated property; any input is allowed.

use octet_wasm::protocol::handshake::initialize::check_params;
use octet_wasm::wire::frame::{Frame, FrameReader};
use octet_wasm::wire::message::{Inbound, Rejection, classify, encode_response, parse_line};
use serde_json::Value;
use std::io::BufReader;

/// The frame reader against a reference model: whatever the bytes and
/// however the reader's buffer splits them, the frames must be exactly the
/// model's (split at LF, one CR before the LF dropped, blank lines skipped,
/// lines past the limit reported as `TooLong` with their length), and no
/// `Line` may ever exceed the limit.
///
/// Two leading bytes choose the limit (0..64) and the buffer size (1..16),
/// so both the limit arithmetic and chunk boundaries (a CR in one chunk,
/// its LF in the next) are explored.
pub fn frame_reader(data: &[u8]) {
    let [limit, capacity, input @ ..] = data else {
        return;
    };
    let limit = usize::from(*limit % 64);
    let capacity = usize::from(*capacity % 16) + 1;
    let mut reader = FrameReader::new(BufReader::with_capacity(capacity, input), limit);
    let mut frames = Vec::new();
    while let Some(frame) = reader.next_frame().expect("reading a slice never fails") {
        if let Frame::Line(line) = &frame {
            assert!(line.len() <= limit, "a line over the limit was returned");
            assert!(!line.contains(&b'\n'), "a line contains LF");
            assert!(!line.is_empty(), "a blank line was returned");
        }
        frames.push(frame);
    }
    assert_eq!(
        frames,
        frame_model(input, limit),
        "frames differ from the model"
    );
}

/// The reference model of `FrameReader`.
fn frame_model(input: &[u8], limit: usize) -> Vec<Frame> {
    let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    // A trailing LF leaves an empty last piece that is not a line.
    if pieces.last().is_some_and(|p| p.is_empty()) {
        pieces.pop();
    }
    pieces
        .into_iter()
        .map(|piece| piece.strip_suffix(b"\r").unwrap_or(piece))
        .filter(|line| !line.is_empty())
        .map(|line| {
            if line.len() > limit {
                Frame::TooLong { bytes: line.len() }
            } else {
                Frame::Line(line.to_vec())
            }
        })
        .collect()
}

/// Message parsing and `initialize` param checking: no input may panic, and
/// the parser's answers must be consistent with the input (a request or an
/// answerable rejection carries the line's own numeric id, never another,
/// and the answer is a frame the host accepts).
pub fn message(data: &[u8]) {
    let json = serde_json::from_slice::<Value>(data).ok();
    let line_id = json
        .as_ref()
        .and_then(|v| v.get("id"))
        .and_then(Value::as_u64);
    let parsed = parse_line(data);
    // The in-place read of a request and the general path (the whole line
    // into a `Value`, then sorted) agree on every line: same message, same
    // rejection, same "not JSON" text.
    if let Ok(text) = std::str::from_utf8(data) {
        let general = match serde_json::from_str::<Value>(text) {
            Ok(value) => classify(value).map(|mut message| {
                if let Inbound::Request { bytes, .. } = &mut message {
                    *bytes = data.len();
                }
                message
            }),
            Err(err) => Err(Rejection::Log {
                reason: format!("invalid protocol input: not JSON ({err})"),
            }),
        };
        assert_eq!(
            parsed, general,
            "the in-place read disagrees with the general path"
        );
    }
    match parsed {
        Ok(Inbound::Request { id, params, .. }) => {
            assert_eq!(Some(id), line_id, "a request id that is not the line's");
            // Params kept as text agree with the line's own params.
            let value = params.value();
            if let Some(line_params) = json.as_ref().and_then(|v| v.get("params")) {
                assert_eq!(
                    value.as_ref(),
                    line_params,
                    "params that are not the line's"
                );
            }
            for env in [None, Some("0.1"), Some("0.2"), Some("")] {
                let _ = check_params(&value, env);
            }
        }
        Err(Rejection::Answer { id, error }) => {
            assert_eq!(
                Some(id),
                line_id,
                "an answer to an id that is not the line's"
            );
            let frame = encode_response(id, &Err(error));
            assert!(!frame.contains('\n'), "the answer spans lines");
            let value: Value = serde_json::from_str(&frame).expect("the answer is JSON");
            assert_eq!(value["jsonrpc"], "2.0");
            assert_eq!(value["id"].as_u64(), Some(id));
            assert!(value["error"]["code"].is_i64() && value["error"]["message"].is_string());
        }
        Ok(Inbound::Notification { params, .. }) => {
            let _ = check_params(&params, Some("0.2"));
        }
        Ok(Inbound::Response { .. }) | Err(Rejection::Log { .. }) => {}
    }
    // Any JSON value is also tried directly as `initialize` params, so the
    // checker sees objects the envelope would not have carried.
    if let Some(value) = json {
        for env in [None, Some("0.1"), Some("0.2")] {
            let _ = check_params(&value, env);
        }
    }
}

/// Guest JSON at the boundary (`protocol::guest_json`): whatever text a
/// guest hands over, either it is refused, or the value it parses to is
/// nested no deeper than the bound, re-encodes into text serde_json reads
/// back to the same value (octet reads frames with serde_json), and fits
/// in a frame the writer's guard passes. The first byte picks the bound
/// (0..=70), so the tighter protocol bounds are explored too.
pub fn guest_json(data: &[u8]) {
    use octet_wasm::protocol::guest_json::{MAX_GUEST_JSON_DEPTH, parse_within};
    use octet_wasm::wire::guard::{check_frame, exceeds_depth};
    let [bound, input @ ..] = data else {
        return;
    };
    let limit = usize::from(*bound % 71).min(MAX_GUEST_JSON_DEPTH);
    let Ok(text) = std::str::from_utf8(input) else {
        return;
    };
    let Ok(value) = parse_within(text, "fuzzed JSON", limit) else {
        return;
    };
    let encoded = serde_json::to_string(&value).expect("a parsed value encodes");
    assert!(
        !exceeds_depth(&encoded, limit),
        "accepted JSON nested deeper than {limit}"
    );
    let reread: Value = serde_json::from_str(&encoded).expect("what the shim writes parses again");
    assert_eq!(
        reread, value,
        "the value changed on its way through the wire"
    );
    let frame =
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"structured_content":{encoded}}}}}"#);
    if frame.len() <= octet_wasm::wire::MAX_FRAME_BYTES {
        check_frame(&frame).expect("a frame of accepted guest JSON passes the guard");
    }
}
