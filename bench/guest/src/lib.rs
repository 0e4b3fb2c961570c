//! The benchmark guest: `burn {n}` does `n` rounds of a xorshift loop (pure
//! CPU, no allocation), so 1 and 2 calls in flight show real parallelism.
//! Declares concurrency 2, so the shim runs a pool of two instances.
//!
//! `hello_world {name}` answers "Hello, {name}!" like examples/hello-world
//! but sends no notification: the per-call benchmark (`bench/hello`, API
//! 0.1) runs it at full speed, where hello-world's notifications would hit
//! the shim's bound of 200 a second.

use octet_guest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Hello {
    name: String,
}

#[derive(Deserialize)]
struct Burn {
    n: u64,
}

fn burn(n: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

fn setup(ext: &mut Extension) {
    ext.max_concurrency(2);
    ext.tool(
        Tool::new("burn", "Spin the CPU for n rounds").parameters(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}},
            "required": ["n"],
        })),
        |args: Burn| format!("{}", burn(std::hint::black_box(args.n))),
    );
    ext.tool(
        Tool::new("hello_world", "Greet someone, without a notification").parameters(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
            "additionalProperties": false,
        })),
        |args: Hello| format!("Hello, {}!", args.name),
    );
}

octet_guest::extension!(setup);
