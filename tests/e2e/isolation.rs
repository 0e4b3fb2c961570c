//! Guest output never reaches the protocol stream (docs/protocol.md#streams):
//! whatever a guest prints goes to stderr or nowhere, and stdout carries only
//! frames.

use crate::support::{Shim, raws, tool_text};
use octet_hostsim::ApiVersion;
use serde_json::json;

/// Floods the guest's `stream` with 2 MB (more than one frame's worth,
/// without a newline: any leak to stdout is fatal) and checks that only the
/// reply arrives and the shim keeps serving.
fn flood(stream: &str) {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let reply = shim.tool(&format!("{stream}_flood"), json!({"bytes": 2_000_000}));
    assert!(
        reply.before.is_empty(),
        "frames before the reply: {:?}",
        raws(&reply.before)
    );
    assert_eq!(
        tool_text(&reply),
        format!("wrote 2000000 bytes to {stream}"),
        "{}",
        reply.frame.raw
    );
    shim.assert_alive_and_silent(&format!("a {stream} flood"));
    shim.shutdown();
}

#[test]
fn guest_stdout_never_reaches_the_protocol_stream() {
    flood("stdout");
}

#[test]
fn guest_stderr_output_does_not_disturb_the_protocol() {
    flood("stderr");
}
