//! The native floor: the smallest reasonable native octet extension serving
//! the same `hello_world` tool as examples/hello-world (API 0.1), written
//! directly against the wire with serde_json: a borrowed parse of each
//! request (members as `&RawValue`, parsed further only where read), the
//! call's frames written from templates with serde_json escaping the
//! strings, one `write` per frame. Every octet-wasm figure in
//! BENCHMARKS.md is a ratio to it.
//!
//! It sends the frames the guest under test sends through the shim:
//! - by default those of examples/hello-world: a `notification`, then the
//!   greeting. The shim lets an extension send at most 200 notifications a
//!   second (a token bucket, burst 200); past it the notification is
//!   dropped (counted) and the greeting still answers. The floor applies
//!   the same bucket and drops the same way, so both send the same frames
//!   at any call rate;
//! - with `--quiet`, only the greeting (the bench guest's `hello_world`,
//!   `bench/hello`).

use serde_json::value::RawValue;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::time::Instant;

/// The shim's bound on reverse notifications (host/src/protocol/reverse.rs).
const NOTICES_PER_SECOND: f64 = 200.0;

/// A JSON object parsed one level deep, borrowing its members' text.
type Members<'a> = BTreeMap<&'a str, &'a RawValue>;

/// `frame` as a JSON string member value (escaped by serde_json).
fn push_string(frame: &mut Vec<u8>, text: &str) {
    let _ = serde_json::to_writer(&mut *frame, text);
}

fn main() {
    let quiet = std::env::args().any(|a| a == "--quiet");
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut tokens = NOTICES_PER_SECOND;
    let mut refilled = Instant::now();
    let mut frame: Vec<u8> = Vec::with_capacity(256);
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Members<'_>>(&line) else {
            continue;
        };
        let id = message
            .get("id")
            .and_then(|raw| serde_json::from_str::<u64>(raw.get()).ok());
        let method = message
            .get("method")
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
        let (Some(id), Some(method)) = (id, method) else {
            continue;
        };
        let result = match method.as_str() {
            "initialize" => json!({
                "api_version": "0.1",
                "tools": [{"name": "hello_world", "description": "Greet someone from an executable extension",
                    "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}}],
                "commands": [],
            }),
            "tool/call" => {
                let name = message
                    .get("params")
                    .and_then(|raw| serde_json::from_str::<Members<'_>>(raw.get()).ok())
                    .and_then(|params| {
                        let arguments: Members<'_> =
                            serde_json::from_str(params.get("arguments")?.get()).ok()?;
                        serde_json::from_str::<String>(arguments.get("name")?.get()).ok()
                    })
                    .unwrap_or_else(|| "tinkerer".to_owned());
                if !quiet {
                    let now = Instant::now();
                    tokens = (tokens
                        + now.duration_since(refilled).as_secs_f64() * NOTICES_PER_SECOND)
                        .min(NOTICES_PER_SECOND);
                    refilled = now;
                    if tokens >= 1.0 {
                        tokens -= 1.0;
                        frame.clear();
                        frame.extend_from_slice(
                        br#"{"jsonrpc":"2.0","method":"notification","params":{"level":"success","message":"#,
                    );
                        push_string(&mut frame, &format!("hello_world greeted {name}"));
                        frame.extend_from_slice(b"}}\n");
                        write_raw(&mut out, &frame);
                    }
                }
                frame.clear();
                frame.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                let _ = write!(frame, "{id}");
                frame.extend_from_slice(br#","result":{"content":"#);
                push_string(&mut frame, &format!("Hello, {name}!"));
                frame.extend_from_slice(b",\"is_error\":false,\"metadata\":{}}}\n");
                write_raw(&mut out, &frame);
                continue;
            }
            "shutdown" => {
                write_frame(&mut out, &json!({"jsonrpc": "2.0", "id": id, "result": {}}));
                return;
            }
            _ => {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("method not found: {method}")}});
                write_frame(&mut out, &error);
                continue;
            }
        };
        write_frame(
            &mut out,
            &json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }
}

#[allow(
    clippy::print_stdout,
    reason = "the floor's stdout is its protocol stream"
)]
fn write_frame(out: &mut impl Write, frame: &Value) {
    let _ = serde_json::to_writer(&mut *out, frame);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// Writes one encoded frame (LF included) with one `write`.
fn write_raw(out: &mut impl Write, frame: &[u8]) {
    let _ = out.write_all(frame);
    let _ = out.flush();
}
