//! The author tools know API 0.4 (through the real binary): `inspect`
//! shows prompt metadata and the WIT version, `manifest` picks 0.4 for a
//! guest that needs it and refuses an older version that cannot carry its
//! hooks, `check` knows the 0.4 hooks, the hooks octet-wasm cannot serve,
//! and warns about what a 0.2 manifest leaves out.

use crate::support::{component, example_dir, shim_binary};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use tempfile::TempDir;

fn octet_wasm(args: &[&str]) -> Output {
    Command::new(shim_binary())
        .args(args)
        .output()
        .expect("octet-wasm starts")
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 test paths")
}

fn out(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `component` copied into a fresh directory (the manifest goes beside it).
fn copied(name: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new().expect("a temporary directory");
    let to = dir.path().join(format!("{name}.wasm"));
    std::fs::copy(component(name), &to).expect("copy the component");
    (dir, to)
}

#[test]
fn inspect_shows_the_0_4_wit_and_prompt_metadata() {
    let path = component("api04");
    let output = octet_wasm(&["inspect", text(&path), "--json"]);
    assert!(output.status.success(), "{}", out(&output));
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["wit_version"], "0.4.0");
    assert_eq!(report["api_version"], "0.4", "what manifest would select");
    let prompted = report["description"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "prompted"))
        .expect("the prompted tool")
        .clone();
    assert_eq!(
        prompted["prompt_snippet"],
        "prompted: shows what prompt metadata looks like"
    );
    assert_eq!(prompted["prompt_guidelines"][0], "Use it for tests only");
    let human = out(&octet_wasm(&["inspect", text(&path)]));
    for line in [
        "wit          octet:extension@0.4.0",
        "api_version  0.4 (what `manifest` selects)",
        r#"    prompt_snippet "prompted: shows what prompt metadata looks like" (API 0.4)"#,
        r#"    guideline      "Use it for tests only" (API 0.4)"#,
    ] {
        assert!(human.contains(line), "missing {line:?} in\n{human}");
    }
}

#[test]
fn manifest_selects_0_4_for_a_0_4_hook_and_refuses_0_2() {
    let (dir, wasm) = copied("cache-warming");
    let manifest = dir.path().join("extension.toml");
    let output = octet_wasm(&["manifest", text(&wasm), "--out", text(&manifest)]);
    assert!(output.status.success(), "{}", out(&output));
    let written: toml::Table =
        toml::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(written["api_version"].as_str(), Some("0.4"));
    assert_eq!(
        written["contributes"]["hooks"],
        toml::Value::from(vec!["cache_warming_decision"])
    );
    let output = octet_wasm(&["check", text(&manifest)]);
    assert!(output.status.success(), "{}", out(&output));
    assert!(
        out(&output).contains("0 problem(s), 0 warning(s)"),
        "{}",
        out(&output)
    );
    let output = octet_wasm(&["manifest", text(&wasm), "--api-version", "0.2"]);
    assert!(!output.status.success(), "{}", out(&output));
    assert!(
        out(&output).contains(
            "api_version 0.2 cannot carry what the guest uses: hook cache_warming_decision; use 0.4"
        ),
        "{}",
        out(&output)
    );
}

#[test]
fn the_shipped_0_4_examples_check_clean() {
    for name in ["native-hello", "hello-tools", "text-stats", "cache-warming"] {
        let manifest = example_dir(name).join("extension.toml");
        let output = octet_wasm(&["check", text(&manifest)]);
        assert!(output.status.success(), "{name}: {}", out(&output));
        assert!(
            out(&output).contains("0 problem(s), 0 warning(s)"),
            "{name}: {}",
            out(&output)
        );
    }
}

/// `check` on a manifest for `component` with `api_version` and `hooks`.
fn check(component_name: &str, api_version: &str, tools: &[&str], hooks: &[&str]) -> String {
    let commands: &[&str] = if component_name == "api04" {
        &["compose"]
    } else {
        &[]
    };
    let (dir, wasm) = copied(component_name);
    let list = |items: &[&str]| Value::from(items.to_vec()).to_string();
    let manifest = format!(
        "name = \"{component_name}\"\nversion = \"0.1.0\"\napi_version = \"{api_version}\"\n\n[entrypoint]\ncommand = \"octet-wasm\"\nargs = [\"run\", \"{}\"]\n\n[capabilities]\nfilesystem = \"workspace\"\nprocess = false\nnetwork = false\n\n[contributes]\ntools = {}\ncommands = {}\nhooks = {}\n",
        wasm.file_name().unwrap().to_string_lossy(),
        list(tools),
        list(commands),
        list(hooks),
    );
    let path = dir.path().join("extension.toml");
    std::fs::write(&path, manifest).unwrap();
    out(&octet_wasm(&["check", text(&path)]))
}

#[test]
fn check_knows_which_hooks_each_version_has() {
    let report = check("cache-warming", "0.2", &[], &["cache_warming_decision"]);
    assert!(
        report.contains(
            "\"cache_warming_decision\" is an API 0.4 hook; octet rejects it in a 0.2 manifest"
        ),
        "{report}"
    );
    let report = check(
        "cache-warming",
        "0.4",
        &[],
        &["cache_warming_decision", "session_tree"],
    );
    assert!(
        report.contains(
            "octet-wasm cannot serve \"session_tree\": it needs protocol feature session_entries"
        ),
        "{report}"
    );
    let report = check(
        "cache-warming",
        "0.4",
        &[],
        &["cache_warming_decision", "sparkle"],
    );
    assert!(
        report.contains("\"sparkle\" is not a hook of API 0.1, 0.2 or 0.4"),
        "{report}"
    );
}

#[test]
fn check_warns_that_a_0_2_manifest_leaves_prompt_metadata_out() {
    let tools = crate::api_04_services::TOOLS;
    let report = check("api04", "0.2", &tools, &[]);
    assert!(
        report.contains("the guest uses what only API 0.4 carries (prompt metadata on tool prompted, feature tool_composition_v1); on 0.2 octet-wasm leaves it out"),
        "{report}"
    );
    let report = check(
        "api04",
        "0.4",
        &tools,
        &[
            "cache_warming_decision",
            "compaction_strategy",
            "before_provider_request",
            "before_provider_headers",
            "after_provider_response",
        ],
    );
    assert!(!report.contains("only API 0.4 carries"), "{report}");
    assert!(report.contains("0 problem(s)"), "{report}");
}

/// `check` on octet's own native-hello manifest, with `extra_top` before
/// `[entrypoint]` and `extra_caps` under `[capabilities]`.
fn check_native_hello(api_version: &str, extra_top: &str, extra_caps: &str) -> String {
    let (dir, _wasm) = copied("native-hello");
    let manifest = format!(
        "name = \"native-hello\"\nversion = \"0.1.0\"\napi_version = \"{api_version}\"\n{extra_top}\n[entrypoint]\ncommand = \"octet-wasm\"\nargs = [\"run\", \"native-hello.wasm\"]\n\n[capabilities]\nfilesystem = \"none\"\nprocess = false\nnetwork = false\n{extra_caps}\n[contributes]\ntools = [\"hello\"]\n"
    );
    let path = dir.path().join("extension.toml");
    std::fs::write(&path, manifest).unwrap();
    out(&octet_wasm(&["check", text(&path)]))
}

#[test]
fn check_knows_the_0_4_manifest_keys() {
    // octet's native-hello manifest pins the host version.
    let report = check_native_hello("0.4", "requires_octet = \"=0.8.2\"\n", "");
    assert!(report.contains("0 problem(s), 0 warning(s)"), "{report}");
    let grant = "builtin_tool_overrides = [\"read\"]\n";
    let report = check_native_hello("0.4", "", grant);
    assert!(
        report.contains(
            "octet-wasm does not negotiate builtin_tool_overrides_v1, so octet keeps its own read"
        ) && report.contains("0 problem(s), 1 warning(s)"),
        "{report}"
    );
    let report = check_native_hello("0.2", "", grant);
    assert!(
        report.contains("only API 0.4 manifests can grant built-in tool overrides")
            && report.contains("1 problem(s)"),
        "{report}"
    );
}
