//! Tools that make the shim write without end, for the bounds on stderr and
//! on reverse notifications (issue 17, hole 6), and one that reads a FIFO
//! (hole 7).
//!
//! - `log_flood {count, bytes, in_fields?}` → `count` `log` records whose
//!   message (or, with `in_fields`, one field) is `bytes` long, then
//!   `logged <count> records`;
//! - `notice_flood {kind, count, pace?}` → up to `count` notifications
//!   (`notify`), status or context contributions (`status`, `context`),
//!   output progress (`output`) or status progress (`progress`), stopping at
//!   the first refusal: `sent <n>` or `sent <n>; refused: <error>` (the
//!   shim drops what exceeds its budget and answers `Ok`, so a flood says
//!   `sent <count>`); with `pace`, 5 ms between two (under 200 a second, so
//!   only the per-request bound applies); with `bytes`, each message (or
//!   output's data) padded to that many bytes;
//! - `flood_then_trap {bytes}` → `bytes` on stdout and on stderr, then a
//!   panic whose message is `bytes` long (a trap);
//! - `fifo_read {path}` → opens `path` read-write (so opening a FIFO does
//!   not wait for a writer) and reads it, `read <n> bytes`: shows that a
//!   read cannot block in the host (wasmtime-wasi reads with `pread`, which
//!   a FIFO refuses). Blocking opens use `read_file` and `write_file`.

use std::io::{Read, Write};

use octet_guest::prelude::*;
use octet_guest::{LogLevel, OutputStream, ProgressStatus};
use serde::Deserialize;

use crate::object_schema;

#[derive(Deserialize)]
struct LogFlood {
    count: u64,
    bytes: usize,
    #[serde(default)]
    in_fields: bool,
}

#[derive(Deserialize)]
struct NoticeFlood {
    kind: String,
    count: u64,
    #[serde(default)]
    pace: bool,
    #[serde(default)]
    bytes: usize,
}

#[derive(Deserialize)]
struct Bytes {
    bytes: usize,
}

#[derive(Deserialize)]
struct Path {
    path: String,
}

pub fn register(ext: &mut Extension) {
    ext.tool(
        Tool::new("log_flood", "Write many or long log records").parameters(json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0},
                "bytes": {"type": "integer", "minimum": 0},
                "in_fields": {"type": "boolean"},
            },
            "required": ["count", "bytes"],
        })),
        |args: LogFlood| {
            let text = "l".repeat(args.bytes);
            for _ in 0..args.count {
                if args.in_fields {
                    octet_guest::log(LogLevel::Info, "flood", json!({"payload": text}));
                } else {
                    octet_guest::log(LogLevel::Info, &text, None);
                }
            }
            format!("logged {} records", args.count)
        },
    );
    ext.tool(
        Tool::new("notice_flood", "Send notifications until refused").parameters(json!({
            "type": "object",
            "properties": {
                "kind": {"type": "string"},
                "count": {"type": "integer", "minimum": 0},
                "pace": {"type": "boolean"},
                "bytes": {"type": "integer", "minimum": 0},
            },
            "required": ["kind", "count"],
        })),
        |args: NoticeFlood| -> Result<String> {
            let mut sent = 0;
            while sent < args.count {
                let mut message = format!("notice {sent} ");
                if message.len() < args.bytes {
                    message.extend(std::iter::repeat_n('n', args.bytes - message.len()));
                }
                let outcome = match args.kind.as_str() {
                    "notify" => octet_guest::notify(NotifyLevel::Info, message),
                    "status" => octet_guest::contribute_status(StatusItem::new("status", message)),
                    "context" => {
                        octet_guest::contribute_context(ContextItem::new("probe", message))
                    }
                    "output" => octet_guest::progress_output(OutputStream::Stdout, message),
                    "progress" => octet_guest::progress(
                        ProgressStatus::new("step").step(sent + 1, args.count),
                    ),
                    other => return Err(Error::invalid_params(format!("unknown kind {other}"))),
                };
                match outcome {
                    Ok(()) => sent += 1,
                    Err(error) => return Ok(format!("sent {sent}; refused: {error}")),
                }
                if args.pace && octet_guest::sleep(std::time::Duration::from_millis(5)) {
                    return Err(Error::cancelled());
                }
            }
            Ok(format!("sent {}", args.count))
        },
    );
    ext.tool(
        Tool::new("flood_then_trap", "Flood stdout and stderr, then panic").parameters(
            object_schema(json!({"bytes": {"type": "integer", "minimum": 0}})),
        ),
        |args: Bytes| -> String {
            let text = "t".repeat(args.bytes);
            let _ = std::io::stdout().write_all(text.as_bytes());
            let _ = std::io::stderr().write_all(text.as_bytes());
            panic!("{text}")
        },
    );
    ext.tool(
        Tool::new("fifo_read", "Open a file read-write and read it")
            .parameters(object_schema(json!({"path": {"type": "string"}}))),
        |args: Path| -> Result<String> {
            let mut file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&args.path)
                .map_err(|e| Error::failed(format!("open {}: {e}", args.path)))?;
            let mut buffer = [0u8; 64];
            let read = file
                .read(&mut buffer)
                .map_err(|e| Error::failed(format!("read {}: {e}", args.path)))?;
            Ok(format!("read {read} bytes"))
        },
    );
}
