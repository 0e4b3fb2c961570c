//! A guest with no directory granted meets bare OS errors ("No such file or
//! directory (os error 44)"); the tool's failure and the shim's log then name
//! the manifest key that grants one (issue 26, author friction 1). A guest
//! that has the workspace gets its own error unchanged.

use crate::support::{Shim, probe_manifest, stderr_text, tool_error};
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::time::Duration;

const GRANT: &str = "`filesystem = \"workspace\"` under `[capabilities]` in extension.toml";
const LOGGED: &str = "a tool failed on a path with no filesystem granted";

fn started(filesystem: &str) -> Shim {
    let mut shim = Shim::probe_with(probe_manifest(ApiVersion::V0_2).filesystem(filesystem));
    shim.initialize();
    shim
}

#[test]
fn without_a_grant_the_failure_and_the_log_name_the_manifest_key() {
    let mut shim = started("none");
    std::fs::write(shim.workspace.join("notes.txt"), "hidden").unwrap();
    for (tool, arguments) in [
        ("read_file", json!({"path": "notes.txt"})),
        ("list_dir", json!({"path": "."})),
        ("write_file", json!({"path": "new.txt", "text": "x"})),
    ] {
        let text = tool_error(&shim.tool(tool, arguments), tool);
        // The guest's own words first, then the grant.
        assert!(text.contains("os error"), "{tool}: {text}");
        assert!(text.contains(GRANT), "{tool}: {text}");
    }
    let record = shim
        .stderr()
        .wait_for_message(Duration::from_secs(5), LOGGED)
        .unwrap_or_else(|| panic!("no {LOGGED:?} record: {}", stderr_text(&shim)));
    assert_eq!(
        record.field("tool").and_then(|v| v.as_str()),
        Some("read_file")
    );
    assert!(
        record
            .field("grant")
            .and_then(|v| v.as_str())
            .is_some_and(|grant| grant.contains(GRANT)),
        "{}",
        record.text
    );
    assert!(!shim.workspace.join("new.txt").exists());
    shim.shutdown();
}

#[test]
fn with_the_workspace_granted_a_missing_file_is_the_guests_own_error() {
    let mut shim = started("workspace");
    let text = tool_error(
        &shim.tool("read_file", json!({"path": "missing.txt"})),
        "read_file",
    );
    assert!(text.contains("os error"), "{text}");
    assert!(!text.contains("octet-wasm:"), "{text}");
    assert!(
        !stderr_text(&shim).contains(LOGGED),
        "{}",
        stderr_text(&shim)
    );
    shim.shutdown();
}
