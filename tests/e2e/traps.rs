//! Guest traps inside a tool call become tool errors, and the next call
//! still works (the instance is replaced).

use crate::support::{Shim, expect_result, tool_text};
use octet_hostsim::ApiVersion;
use serde_json::json;

fn trap_then_recover(tool: &str, api_version: ApiVersion) {
    let mut shim = Shim::probe(api_version);
    shim.initialize();
    let reply = shim.tool(tool, json!({}));
    let result = expect_result(&reply);
    assert_eq!(result["is_error"], true, "{tool}: {}", reply.frame.raw);
    assert!(
        !tool_text(&reply).is_empty(),
        "{tool}: the error result has no text: {}",
        reply.frame.raw
    );
    let reply = shim.tool("echo", json!({"text": "after the trap"}));
    assert_eq!(
        expect_result(&reply)["is_error"],
        false,
        "{}",
        reply.frame.raw
    );
    assert_eq!(tool_text(&reply), "after the trap");
    shim.shutdown();
}

#[test]
fn a_panic_is_a_tool_error() {
    trap_then_recover("panic", ApiVersion::V0_2);
}

#[test]
fn unreachable_is_a_tool_error() {
    trap_then_recover("unreachable", ApiVersion::V0_2);
}

#[test]
fn a_panic_is_a_tool_error_on_api_0_1() {
    trap_then_recover("panic", ApiVersion::V0_1);
}
