//! A confused deputy through the workspace: a guest must not leave links
//! that octet or the user's other tools would follow out of the granted
//! directory. The shim refuses every symlink and hard link
//! (`runtime/links.rs`), whatever the target.

use crate::support::{Shim, expect_result, probe_manifest, tool_text};
use octet_hostsim::ApiVersion;
use serde_json::json;
use std::path::Path;

fn workspace_probe(filesystem: &str) -> Shim {
    let mut shim = Shim::probe_with(probe_manifest(ApiVersion::V0_2).filesystem(filesystem));
    shim.initialize();
    shim
}

/// Asks the guest to make a link and asserts the refusal and that nothing
/// appeared on the host.
fn assert_link_refused(shim: &mut Shim, tool: &str, target: &str, link: &str, host_link: &Path) {
    let reply = shim.tool(tool, json!({"target": target, "link": link}));
    let result = expect_result(&reply);
    assert_eq!(
        result["is_error"], true,
        "{tool} {link} -> {target} should be refused: {}",
        reply.frame.raw
    );
    let text = tool_text(&reply);
    assert!(
        text.to_lowercase().contains("not permitted"),
        "{tool} refusal should say the operation is not permitted: {text}"
    );
    assert!(
        std::fs::symlink_metadata(host_link).is_err(),
        "{tool} left {} on the host",
        host_link.display()
    );
}

#[test]
fn symlinks_with_absolute_targets_are_refused() {
    let mut shim = workspace_probe("workspace");
    let ws = shim.workspace.clone();
    for (target, name) in [
        ("/etc/passwd", "passwd"),
        ("/", "root"),
        (ws.to_str().unwrap(), "self"),
    ] {
        assert_link_refused(&mut shim, "symlink", target, name, &ws.join(name));
        let absolute = ws.join(format!("abs-{name}"));
        assert_link_refused(
            &mut shim,
            "symlink",
            target,
            absolute.to_str().unwrap(),
            &absolute,
        );
    }
    shim.assert_alive_and_silent("refused absolute symlinks");
}

#[test]
fn symlinks_with_relative_targets_are_refused_inside_and_out() {
    let mut shim = workspace_probe("workspace");
    let ws = shim.workspace.clone();
    std::fs::write(ws.join("inside.txt"), "inside").unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    for (target, name) in [
        ("../secret.txt", "up"),
        ("../../../../etc/shadow", "far-up"),
        ("sub/../../secret.txt", "sneaky"),
        ("inside.txt", "inside-link"),
    ] {
        assert_link_refused(&mut shim, "symlink", target, name, &ws.join(name));
    }
    // From inside a subdirectory, one level up is still the workspace: the
    // shim does not judge targets, it refuses them all.
    assert_link_refused(
        &mut shim,
        "symlink",
        "../inside.txt",
        "sub/up",
        &ws.join("sub/up"),
    );
    shim.assert_alive_and_silent("refused relative symlinks");
}

#[test]
fn hard_links_are_refused() {
    let mut shim = workspace_probe("workspace");
    let ws = shim.workspace.clone();
    std::fs::write(ws.join("inside.txt"), "inside").unwrap();
    let outside = ws.parent().unwrap().join("outside.txt");
    std::fs::write(&outside, "outside").unwrap();
    // A pre-existing outward symlink (made by the user, not the guest):
    // hard-linking it would copy it under a name the guest chooses.
    std::os::unix::fs::symlink(&outside, ws.join("users-link")).unwrap();
    for (target, name) in [
        ("inside.txt", "copy.txt"),
        ("../outside.txt", "escape.txt"),
        ("users-link", "copied-link"),
    ] {
        assert_link_refused(&mut shim, "hard_link", target, name, &ws.join(name));
    }
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside");
    shim.assert_alive_and_silent("refused hard links");
}

#[test]
fn links_are_refused_with_an_unrestricted_filesystem_too() {
    let mut shim = workspace_probe("unrestricted");
    let ws = shim.workspace.clone();
    let link = ws.join("passwd");
    assert_link_refused(
        &mut shim,
        "symlink",
        "/etc/passwd",
        link.to_str().unwrap(),
        &link,
    );
    shim.assert_alive_and_silent("a refused link with an unrestricted filesystem");
}
