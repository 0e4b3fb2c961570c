//! Start-up misbehaviour on demand: a test writes one word into
//! `.probe-start` in the workspace, and the next instance's `describe`
//! (the setup function) or `init` spins or blocks.
//!
//! - `spin-describe` / `spin-init`: a busy loop that never returns;
//! - `block-describe` / `block-init`: opens the FIFO `.probe-fifo` (made by
//!   the test) for reading, which blocks in the host until a writer comes.
//!
//! Without the file (every other test, and `inspect`, which has no
//! filesystem) nothing happens.

use octet_guest::prelude::*;

/// The mode file, relative to the workspace (the guest's `.`).
const MODE_FILE: &str = ".probe-start";
const FIFO: &str = ".probe-fifo";

fn mode() -> String {
    std::fs::read_to_string(MODE_FILE)
        .map(|text| text.trim().to_owned())
        .unwrap_or_default()
}

fn misbehave(mode: &str) {
    if mode.starts_with("spin-") {
        let mut x: u64 = 1;
        loop {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
    if mode.starts_with("block-") {
        let _ = std::fs::read(FIFO);
    }
}

/// Called first in the probe's setup, which runs inside `describe`.
pub fn register(ext: &mut Extension) {
    let now = mode();
    if now.ends_with("-describe") {
        misbehave(&now);
    }
    ext.on_init(|| {
        let now = mode();
        if now.ends_with("-init") {
            misbehave(&now);
        }
    });
}
