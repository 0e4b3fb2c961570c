//! The native floor: the smallest reasonable native octet extension serving
//! the same `hello_world` tool as examples/hello-world (API 0.1: a
//! notification, then the greeting), written directly against the wire with
//! serde_json. Every octet-wasm figure in BENCHMARKS.md is a ratio to it.

use serde_json::{Value, json};
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (message["id"].as_u64(), message["method"].as_str()) else {
            continue;
        };
        let result = match method {
            "initialize" => json!({
                "api_version": "0.1",
                "tools": [{"name": "hello_world", "description": "Greet someone from an executable extension",
                    "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}}],
                "commands": [],
            }),
            "tool/call" => {
                let name = message["params"]["arguments"]["name"]
                    .as_str()
                    .unwrap_or("tinkerer")
                    .to_owned();
                let note = json!({"jsonrpc": "2.0", "method": "notification",
                    "params": {"level": "success", "message": format!("hello_world greeted {name}")}});
                write_frame(&mut out, &note);
                json!({"content": format!("Hello, {name}!"), "is_error": false, "metadata": {}})
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
