//! The benchmark guest: `burn {n}` does `n` rounds of a xorshift loop (pure
//! CPU, no allocation), so 1 and 2 calls in flight show real parallelism.
//! Declares concurrency 2, so the shim runs a pool of two instances.

use octet_guest::prelude::*;
use serde::Deserialize;

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
}

octet_guest::extension!(setup);
