//! Guest output never reaches the protocol stream (§1.1): whatever a guest
//! prints goes to stderr or nowhere, and stdout carries only frames.

use crate::support::{Shim, raws, tool_text};
use octet_wasm::hostsim::ApiVersion;
use serde_json::json;

#[test]
fn guest_stdout_never_reaches_the_protocol_stream() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    // More than one frame's worth, without a newline: any leak is fatal.
    let reply = shim.tool("stdout_flood", json!({"bytes": 2_000_000}));
    assert!(
        reply.before.is_empty(),
        "frames before the reply: {:?}",
        raws(&reply.before)
    );
    assert_eq!(
        tool_text(&reply),
        "wrote 2000000 bytes to stdout",
        "{}",
        reply.frame.raw
    );
    shim.assert_alive_and_silent("a stdout flood");
    shim.shutdown();
}

#[test]
fn guest_stderr_output_does_not_disturb_the_protocol() {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let reply = shim.tool("stderr_flood", json!({"bytes": 2_000_000}));
    assert!(
        reply.before.is_empty(),
        "frames before the reply: {:?}",
        raws(&reply.before)
    );
    assert_eq!(
        tool_text(&reply),
        "wrote 2000000 bytes to stderr",
        "{}",
        reply.frame.raw
    );
    shim.assert_alive_and_silent("a stderr flood");
    shim.shutdown();
}
