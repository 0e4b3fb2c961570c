//! Tools that take time or stack: runaway loops, cooperative waits, deep
//! recursion.

use std::hint::black_box;
use std::time::Duration;

use octet_guest::prelude::*;
use serde::Deserialize;

use crate::object_schema;

#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

#[derive(Deserialize)]
struct SleepThenEcho {
    ms: u64,
    text: String,
}

#[derive(Deserialize)]
struct Depth {
    depth: u64,
}

pub fn register(ext: &mut Extension) {
    // spin {} → loops forever and never looks at cancellation
    ext.tool(
        Tool::new("spin", "Loop forever, ignoring cancellation")
            .parameters(object_schema(json!({}))),
        |_: Value| -> String { spin() },
    );
    // spin_polite {} → loops until cancelled, then error `cancelled`
    ext.tool(
        Tool::new("spin_polite", "Loop until the request is cancelled")
            .parameters(object_schema(json!({}))),
        |_: Value| -> Result<String> {
            let mut n = 0u64;
            while !octet_guest::is_cancelled() {
                n = black_box(n.wrapping_add(1));
            }
            Err(Error::cancelled())
        },
    );
    // sleep {ms} → `slept <ms> ms`, or error `cancelled` when cancelled first
    ext.tool(
        Tool::new("sleep", "Wait cooperatively").parameters(object_schema(
            json!({"ms": {"type": "integer", "minimum": 0}}),
        )),
        |args: Sleep| -> Result<String> {
            wait(args.ms)?;
            Ok(format!("slept {} ms", args.ms))
        },
    );
    // sleep_then_echo {ms, text} → text after the wait, or error `cancelled`
    ext.tool(
        Tool::new(
            "sleep_then_echo",
            "Wait cooperatively, then return the text",
        )
        .parameters(object_schema(json!({
            "ms": {"type": "integer", "minimum": 0},
            "text": {"type": "string"},
        }))),
        |args: SleepThenEcho| -> Result<String> {
            wait(args.ms)?;
            Ok(args.text)
        },
    );
    // recurse {depth} → `depth <depth>` after non-tail recursion that deep
    // (a large depth overflows the stack: a trap)
    ext.tool(
        Tool::new("recurse", "Recurse to the depth").parameters(object_schema(
            json!({"depth": {"type": "integer", "minimum": 0}}),
        )),
        |args: Depth| format!("depth {}", recurse(args.depth)),
    );
}

fn wait(ms: u64) -> Result<()> {
    if octet_guest::sleep(Duration::from_millis(ms)) {
        Err(Error::cancelled())
    } else {
        Ok(())
    }
}

pub fn spin() -> ! {
    let mut n = 0u64;
    loop {
        n = black_box(n.wrapping_add(1));
    }
}

/// Non-tail recursion with a frame the optimiser cannot remove.
fn recurse(depth: u64) -> u64 {
    let frame = black_box([depth; 16]);
    if depth == 0 {
        0
    } else {
        black_box(recurse(depth - 1) + 1 + frame[15] - depth)
    }
}
