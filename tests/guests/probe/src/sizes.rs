//! Tools that test size limits: memory, result size, part count, depth, and
//! structured content against an output schema.

use std::hint::black_box;

use octet_guest::prelude::*;
use serde::Deserialize;

use crate::object_schema;

#[derive(Deserialize)]
struct Bytes {
    bytes: usize,
}

#[derive(Deserialize)]
struct Count {
    count: usize,
}

#[derive(Deserialize)]
struct Depth {
    depth: usize,
}

#[derive(Deserialize)]
struct Structured {
    value: Value,
}

/// Chunk `grow_forever` allocates at a time.
const CHUNK: usize = 1 << 20;

pub fn register(ext: &mut Extension) {
    let bytes = || object_schema(json!({"bytes": {"type": "integer", "minimum": 0}}));
    // alloc {bytes} → `allocated <bytes> bytes` after allocating and writing
    // them; when memory cannot grow that far, error `failed` (is_error) —
    // the guest sees the failure, the host is unaffected
    ext.tool(
        Tool::new("alloc", "Allocate and touch that many bytes").parameters(bytes()),
        |args: Bytes| -> Result<String> {
            let mut buffer: Vec<u8> = Vec::new();
            buffer.try_reserve_exact(args.bytes).map_err(|error| {
                Error::failed(format!(
                    "allocation of {} bytes failed: {error}",
                    args.bytes
                ))
            })?;
            buffer.resize(args.bytes, 0xA5);
            Ok(format!("allocated {} bytes", black_box(buffer).len()))
        },
    );
    // grow_forever {} → allocates 1 MiB chunks with infallible allocation
    // until memory cannot grow: an out-of-memory abort, i.e. a trap
    ext.tool(
        Tool::new("grow_forever", "Allocate until memory runs out")
            .parameters(object_schema(json!({}))),
        |_: Value| -> String {
            let mut chunks: Vec<Vec<u8>> = Vec::new();
            loop {
                chunks.push(black_box(vec![0x5A; CHUNK]));
            }
        },
    );
    // big_result {bytes} → a text part of that many bytes (`x` repeated)
    ext.tool(
        Tool::new("big_result", "Return a text of that many bytes").parameters(bytes()),
        |args: Bytes| "x".repeat(args.bytes),
    );
    // many_parts {count} → that many text parts (`part 1`, `part 2`, ...);
    // count 0 gives an empty content list
    ext.tool(
        Tool::new("many_parts", "Return that many text parts").parameters(object_schema(
            json!({"count": {"type": "integer", "minimum": 0}}),
        )),
        |args: Count| {
            (1..=args.count).fold(ToolResult::default(), |result, i| {
                result.with_text(format!("part {i}"))
            })
        },
    );
    // nested {depth} → text `nested <depth>` with metadata nested that deep:
    // {"n":{"n":...{"n":0}}} (`depth` objects)
    ext.tool(
        Tool::new("nested", "Return metadata nested that deep").parameters(object_schema(
            json!({"depth": {"type": "integer", "minimum": 0}}),
        )),
        |args: Depth| {
            let metadata = (0..args.depth).fold(json!(0), |inner, _| json!({"n": inner}));
            ToolResult::text(format!("nested {}", args.depth)).metadata(metadata)
        },
    );
    // structured {value} → structured content = value, text = value as JSON;
    // the tool declares an output schema, so the shim validates value
    ext.tool(
        Tool::new("structured", "Return the value as structured content")
            .parameters(json!({
                "type": "object",
                "properties": {"value": {}},
                "required": ["value"],
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {"count": {"type": "integer"}},
                "required": ["count"],
            })),
        |args: Structured| ToolResult::text(args.value.to_string()).structured(args.value),
    );
}
