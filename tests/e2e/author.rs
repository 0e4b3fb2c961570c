//! Author tools through the real binary: `new` (projects that build where
//! they are moved), `sdk`, `inspect`, `manifest`,
//! `check`, `embed-metadata`, and `run` honouring the metadata and refusing
//! a tampered component under `--sha256`.

use crate::support::{component, repo_root, shim_binary};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

fn octet_wasm(args: &[&str]) -> Output {
    Command::new(shim_binary())
        .args(args)
        .output()
        .expect("octet-wasm starts")
}

/// Code that clearly reads files under `filesystem = "none"` is a warning
/// naming the file, the line and the grant (the imports alone stay a note),
/// and `--deny filesystem` still leaves it out.
#[test]
fn check_warns_when_the_source_uses_files_the_manifest_does_not_grant() {
    let dir = TempDir::new().unwrap();
    let wasm = copy_component("probe", dir.path());
    let manifest = dir.path().join("extension.toml");
    ok(&[
        "manifest",
        text(&wasm),
        "--out",
        text(&manifest),
        "--deny",
        "filesystem",
    ]);
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(
        dir.path().join("src/lib.rs"),
        r#"// a comment naming std::fs is no use
fn notes() -> String {
    std::fs::read_to_string("notes.txt").unwrap_or_default()
}
"#,
    )
    .unwrap();
    let report = ok(&["check", text(&manifest)]);
    let line = report
        .lines()
        .find(|line| line.starts_with("warning: ") && line.contains("src/lib.rs: line 3: "))
        .unwrap_or_else(|| panic!("no warning for src/lib.rs line 3 in\n{report}"));
    assert!(
        line.contains("`std::fs`") && line.contains("filesystem = \"none\""),
        "{line}"
    );
    assert!(
        report.contains("fix: filesystem = \"workspace\" under [capabilities] in extension.toml"),
        "{report}"
    );
    // The warning replaces the note the imports alone make.
    assert!(
        !report
            .lines()
            .any(|line| line.starts_with("note: ") && line.contains("capabilities.filesystem")),
        "{report}"
    );
    let denied = ok(&["check", text(&manifest), "--deny", "filesystem"]);
    assert!(!denied.contains("src/lib.rs"), "{denied}");
    // Granting the workspace answers it.
    let mut granted = toml_file(&manifest);
    granted["capabilities"]["filesystem"] = toml::Value::from("workspace");
    std::fs::write(&manifest, toml::to_string(&granted).unwrap()).unwrap();
    let report = ok(&["check", text(&manifest)]);
    assert!(!report.contains("src/lib.rs"), "{report}");
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs and expects success.
fn ok(args: &[&str]) -> String {
    let output = octet_wasm(args);
    assert!(
        output.status.success(),
        "octet-wasm {args:?} failed ({}):\n{}\n{}",
        output.status,
        stdout(&output),
        stderr(&output)
    );
    stdout(&output)
}

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 test paths")
}

fn copy_component(name: &str, dir: &Path) -> PathBuf {
    let to = dir.join(format!("{name}.wasm"));
    std::fs::copy(component(name), &to).expect("copy the component");
    to
}

fn toml_file(path: &Path) -> toml::Table {
    toml::from_str(&std::fs::read_to_string(path).expect("read TOML")).expect("valid TOML")
}

#[test]
fn every_author_command_has_help() {
    for command in [
        "new",
        "sdk",
        "inspect",
        "manifest",
        "check",
        "embed-metadata",
    ] {
        let help = ok(&[command, "--help"]);
        assert!(help.contains("Usage: octet-wasm"), "{command}: {help}");
    }
}

#[test]
fn inspect_reports_the_hello_world_component() {
    let path = component("hello-world");
    let report: Value = serde_json::from_str(&ok(&["inspect", text(&path), "--json"])).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(report["size"], json!(bytes.len()));
    assert_eq!(
        report["sha256"],
        json!(octet_wasm::runtime::cache::sha256_hex(&bytes))
    );
    assert_eq!(report["wit_version"], "0.4.0");
    let d = &report["description"];
    assert_eq!(d["name"], "hello-world");
    assert_eq!(d["tools"][0]["name"], "hello_world");
    assert_eq!(d["tools"][0]["parameters"]["required"], json!(["name"]));
    assert_eq!(
        d["commands"][0],
        json!({"name": "hello", "description": "Show a greeting notification", "usage": "/hello [name]"})
    );
    assert_eq!(d["hooks"], json!(["before_prompt", "after_response"]));
    assert_eq!(d["context"], true);
    assert_eq!(d["status_surfaces"], json!(["status"]));
    assert_eq!(d["renderers"], json!(["hello_world"]));
    assert_eq!(d["max_concurrency"], 1);
    let imports: Vec<&str> = report["imports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        imports.contains(&"octet:extension/host@0.4.0"),
        "{imports:?}"
    );
    assert_eq!(
        report["capabilities"],
        json!({"filesystem": false, "network": false, "environment": true})
    );
    let human = ok(&["inspect", text(&path)]);
    for line in [
        "wit          octet:extension@0.4.0",
        "hello_world — Greet someone",
        "/hello — Show a greeting notification",
        "hooks        before_prompt, after_response",
    ] {
        assert!(human.contains(line), "missing {line:?} in\n{human}");
    }
}

#[test]
fn inspect_names_the_probe_capabilities() {
    let path = component("probe");
    let report: Value = serde_json::from_str(&ok(&["inspect", text(&path), "--json"])).unwrap();
    assert_eq!(report["capabilities"]["filesystem"], true);
    assert_eq!(report["capabilities"]["network"], true);
    assert_eq!(report["api_version"], "0.2");
    assert!(report["description"]["max_concurrency"].as_u64().unwrap() > 1);
}

#[test]
fn manifest_with_metadata_matches_the_shipped_hello_world_manifest() {
    let dir = TempDir::new().unwrap();
    let wasm = copy_component("hello-world", dir.path());
    ok(&[
        "embed-metadata",
        text(&wasm),
        "--name",
        "hello-world",
        "--version",
        "0.1.0",
        "--description",
        "A tiny language-neutral octet extension example",
        "--api-version",
        "0.1",
    ]);
    // The project's source beside it: what it calls (notify) is what the
    // manifest grants.
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::copy(
        repo_root().join("examples/hello-world/rust/src/lib.rs"),
        dir.path().join("src/lib.rs"),
    )
    .unwrap();
    let manifest = dir.path().join("extension.toml");
    ok(&["manifest", text(&wasm), "--out", text(&manifest), "--pin"]);
    let written = toml_file(&manifest);
    let shipped = toml_file(&repo_root().join("examples/hello-world/extension.toml"));
    for key in [
        "name",
        "version",
        "api_version",
        "description",
        "capabilities",
        "contributes",
    ] {
        assert_eq!(
            written[key],
            shipped[key],
            "{key} differs:\n{}",
            std::fs::read_to_string(&manifest).unwrap()
        );
    }
    let digest = octet_wasm::runtime::cache::sha256_hex(&std::fs::read(&wasm).unwrap());
    assert_eq!(
        written["entrypoint"]["args"],
        toml::Value::from(vec![
            "run".to_owned(),
            "hello-world.wasm".into(),
            "--sha256".into(),
            digest
        ])
    );
    let report = ok(&["check", text(&manifest)]);
    assert!(report.contains("0 problem(s), 0 warning(s)"), "{report}");
}

/// Rewriting a manifest after a rebuild keeps what the author wrote and
/// updates only what the component determines; a new one grants only what
/// the source beside it uses, sends no notifications it never calls, and
/// pins no digest unless asked (issue 26, author friction 2).
#[test]
fn manifest_updates_keep_the_authors_words_and_grant_only_what_is_used() {
    let dir = TempDir::new().unwrap();
    let wasm = dir.path().join("hello-world.wasm");
    std::fs::copy(component("python/hello-world"), &wasm).unwrap();
    std::fs::write(
        dir.path().join("extension.py"),
        "from octet_guest import Extension\next = Extension()\n",
    )
    .unwrap();
    let manifest = dir.path().join("extension.toml");
    ok(&["manifest", text(&wasm), "--out", text(&manifest)]);
    let fresh = toml_file(&manifest);
    // The interpreter imports files and sockets; the source uses neither.
    assert_eq!(fresh["capabilities"]["filesystem"].as_str(), Some("none"));
    assert_eq!(fresh["capabilities"]["network"].as_bool(), Some(false));
    assert_eq!(fresh["contributes"]["notifications"].as_bool(), Some(false));
    let args = fresh["entrypoint"]["args"].as_array().unwrap();
    assert!(
        !args.iter().any(|a| a.as_str() == Some("--sha256")),
        "{args:?}"
    );

    // The author's edits, then a rewrite after a rebuild.
    let mut edited = fresh.clone();
    edited.insert(
        "description".into(),
        toml::Value::from("Greets, in my own words"),
    );
    edited["capabilities"]["filesystem"] = toml::Value::from("workspace");
    edited["capabilities"]
        .as_table_mut()
        .unwrap()
        .insert("environment".into(), toml::Value::from(vec!["LANG"]));
    edited["contributes"]["notifications"] = toml::Value::from(true);
    edited["contributes"]["tools"] = toml::Value::from(vec!["stale_tool"]);
    edited["entrypoint"]["args"] = toml::Value::from(vec![
        "run".to_owned(),
        "hello-world.wasm".into(),
        "--memory-mib".into(),
        "64".into(),
        "--sha256".into(),
        "0".repeat(64),
    ]);
    let with_comments = format!(
        "# greeter: my first extension\n{}",
        toml::to_string(&edited).unwrap().replace(
            "[capabilities]",
            "# reads the workspace's notes\n[capabilities]"
        )
    );
    std::fs::write(&manifest, with_comments).unwrap();
    ok(&["manifest", text(&wasm), "--out", text(&manifest)]);
    let written = std::fs::read_to_string(&manifest).unwrap();
    assert!(
        written.starts_with("# greeter: my first extension\n"),
        "{written}"
    );
    assert!(
        written.contains("# reads the workspace's notes\n[capabilities]"),
        "{written}"
    );
    let updated = toml_file(&manifest);
    assert_eq!(
        updated["description"].as_str(),
        Some("Greets, in my own words")
    );
    assert_eq!(updated["capabilities"], edited["capabilities"]);
    assert_eq!(
        updated["contributes"]["notifications"].as_bool(),
        Some(true)
    );
    assert_eq!(
        updated["contributes"]["tools"],
        fresh["contributes"]["tools"]
    );
    // The author pinned: the pin follows the rebuild, the options stay.
    let digest = octet_wasm::runtime::cache::sha256_hex(&std::fs::read(&wasm).unwrap());
    assert_eq!(
        updated["entrypoint"]["args"],
        toml::Value::from(vec![
            "run".to_owned(),
            "hello-world.wasm".into(),
            "--memory-mib".into(),
            "64".into(),
            "--sha256".into(),
            digest,
        ])
    );
    // A manifest that is not TOML is refused, not overwritten.
    std::fs::write(&manifest, "name = ").unwrap();
    let output = octet_wasm(&["manifest", text(&wasm), "--out", text(&manifest)]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("cannot update"),
        "{}",
        stderr(&output)
    );
    assert_eq!(std::fs::read_to_string(&manifest).unwrap(), "name = ");
}

#[test]
fn manifest_grants_what_the_probe_imports() {
    let dir = TempDir::new().unwrap();
    let wasm = copy_component("probe", dir.path());
    let manifest = dir.path().join("extension.toml");
    ok(&["manifest", text(&wasm), "--out", text(&manifest)]);
    let written = toml_file(&manifest);
    assert_eq!(written["api_version"].as_str(), Some("0.2"));
    assert_eq!(
        written["capabilities"]["filesystem"].as_str(),
        Some("workspace")
    );
    assert_eq!(written["capabilities"]["network"].as_bool(), Some(true));
    assert_eq!(
        written["contributes"]["tools"].as_array().unwrap().len(),
        crate::support::PROBE_TOOLS.len()
    );
    ok(&["check", text(&manifest)]);
    ok(&[
        "manifest",
        text(&wasm),
        "--out",
        text(&manifest),
        "--deny",
        "network",
    ]);
    assert_eq!(
        toml_file(&manifest)["capabilities"]["network"].as_bool(),
        Some(false)
    );
    // Without --deny, check notes the withheld network; it is no problem.
    let report = ok(&["check", text(&manifest)]);
    assert!(
        report.contains("note: ")
            && report.contains("capabilities.network")
            && report.contains("0 problem(s), 0 warning(s), 1 note(s)"),
        "{report}"
    );
    let report = ok(&["check", text(&manifest), "--deny", "network"]);
    assert!(
        report.contains("0 problem(s), 0 warning(s), 0 note(s)"),
        "{report}"
    );
    // API 0.1 cannot carry a concurrent guest.
    let refused = octet_wasm(&["manifest", text(&wasm), "--api-version", "0.1"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("concurrency"),
        "{}",
        stderr(&refused)
    );
}

/// The hello-world manifest with `edit` applied, checked against the
/// component: the fields reported.
fn check_mismatch(edit: impl FnOnce(&mut toml::Table)) -> String {
    let dir = TempDir::new().unwrap();
    let wasm = copy_component("hello-world", dir.path());
    let mut manifest = toml_file(&repo_root().join("examples/hello-world/extension.toml"));
    edit(&mut manifest);
    let path = dir.path().join("extension.toml");
    std::fs::write(&path, toml::to_string(&manifest).unwrap()).unwrap();
    let output = octet_wasm(&["check", text(&path), text(&wasm)]);
    let report = stdout(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "expected problems:\n{report}{}",
        stderr(&output)
    );
    assert!(
        report.contains(text(&path)),
        "findings name the file:\n{report}"
    );
    assert!(report.contains("fix:"), "findings name the fix:\n{report}");
    report
}

fn contributes(manifest: &mut toml::Table) -> &mut toml::Table {
    manifest["contributes"].as_table_mut().unwrap()
}

#[test]
fn check_catches_each_mismatch_kind() {
    let report = check_mismatch(|m| {
        contributes(m).insert(
            "tools".into(),
            toml::Value::from(vec!["hello_world", "extra"]),
        );
    });
    assert!(
        report.contains("contributes.tools")
            && report.contains("registered tools do not match manifest declarations")
            && report.contains("extra"),
        "{report}"
    );
    let report = check_mismatch(|m| {
        contributes(m).insert("commands".into(), toml::Value::from(Vec::<String>::new()));
    });
    assert!(
        report.contains("contributes.commands") && report.contains("[\"hello\"]"),
        "{report}"
    );
    let report = check_mismatch(|m| {
        contributes(m).insert(
            "commands".into(),
            toml::Value::from(vec!["/hello", "hello"]),
        );
    });
    assert!(report.contains("is not an identifier"), "{report}");
    let report = check_mismatch(|m| {
        contributes(m).insert(
            "tools".into(),
            toml::Value::from(vec!["hello_world", "hello_world"]),
        );
    });
    assert!(report.contains("listed twice"), "{report}");
    let report = check_mismatch(|m| {
        m.insert("homepage".into(), toml::Value::from("https://example.com"));
        contributes(m).insert("sparkles".into(), toml::Value::from(true));
    });
    assert!(
        report.contains("problem: ")
            && report.contains(": homepage: unknown key")
            && report.contains("contributes.sparkles: unknown key"),
        "{report}"
    );
    let report = check_mismatch(|m| {
        m.insert("api_version".into(), toml::Value::from("0.3"));
    });
    assert!(
        report.contains("api_version: \"0.3\" is not a version"),
        "{report}"
    );
    let report = check_mismatch(|m| {
        contributes(m).insert(
            "hooks".into(),
            toml::Value::from(vec!["before_prompt", "after_response", "post_mutation"]),
        );
    });
    assert!(
        report.contains("\"post_mutation\" is an API 0.2 hook"),
        "{report}"
    );
    let report = check_mismatch(|m| {
        m["entrypoint"]["args"] =
            toml::Value::from(vec!["run", "hello-world.wasm", "--sha256", &"0".repeat(64)]);
    });
    assert!(
        report.contains("does not match") && report.contains("octet-wasm refuses to run it"),
        "{report}"
    );
    let report = check_mismatch(|m| {
        m["entrypoint"]["args"] =
            toml::Value::from(vec!["run", "hello-world.wasm", "--memory", "9"]);
    });
    assert!(report.contains("has no option \"--memory\""), "{report}");
    // A description octet-wasm would refuse: a description-less manifest
    // version mismatch is a warning only, so pair it with a problem.
    let report = check_mismatch(|m| {
        m.insert("version".into(), toml::Value::from("one"));
        contributes(m).remove("hooks");
    });
    assert!(
        report.contains("version: \"one\" is not a semantic version"),
        "{report}"
    );
    assert!(
        report.contains("warning: ") && report.contains("octet never calls them"),
        "{report}"
    );
}

/// An import the manifest does not grant is a note (exit 0): it fails only
/// inside the sandbox, and only if the code uses it.
#[test]
fn check_notes_ungranted_capabilities() {
    let dir = TempDir::new().unwrap();
    let wasm = copy_component("probe", dir.path());
    let manifest = dir.path().join("extension.toml");
    ok(&[
        "manifest",
        text(&wasm),
        "--out",
        text(&manifest),
        "--deny",
        "filesystem",
        "--deny",
        "network",
    ]);
    let report = ok(&["check", text(&manifest)]);
    for (field, import) in [
        ("capabilities.filesystem", "wasi:filesystem/"),
        ("capabilities.network", "wasi:sockets/"),
    ] {
        let line = report
            .lines()
            .find(|line| line.contains(field))
            .unwrap_or_else(|| panic!("no {field} in\n{report}"));
        assert!(
            line.starts_with("note: ")
                && line.contains(import)
                && line.contains("fails inside the sandbox"),
            "{line}"
        );
    }
    assert!(
        report.contains("0 problem(s), 0 warning(s), 2 note(s)"),
        "{report}"
    );
    // A real problem beside the notes still fails the check.
    let mut broken = toml_file(&manifest);
    broken.insert("homepage".into(), toml::Value::from("https://example.com"));
    std::fs::write(&manifest, toml::to_string(&broken).unwrap()).unwrap();
    let output = octet_wasm(&["check", text(&manifest)]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("1 problem(s), 0 warning(s), 2 note(s)"),
        "{}",
        stdout(&output)
    );
}

/// Sends `initialize` to `octet-wasm run ARGS...` and returns its reply.
fn initialize_reply(dir: &Path, args: &[&str]) -> (Value, String) {
    let mut child = Command::new(shim_binary())
        .arg("run")
        .args(args)
        .env_clear()
        .env("OCTET_EXTENSION_DIR", dir)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("octet-wasm run starts");
    let params = json!({"api_version": "0.1", "workspace": text(dir), "capabilities": {"filesystem": "none", "process": false, "network": false},
        "contributes": {"tools": ["hello_world"], "commands": ["hello"], "hooks": [], "ui": [], "context": false, "tool_renderers": [], "notifications": false, "confirmations": false}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    (
        serde_json::from_str(&line).expect("one JSON reply"),
        stderr(&output),
    )
}

#[test]
fn run_refuses_a_tampered_component_under_sha256() {
    let dir = TempDir::new().unwrap();
    let wasm = copy_component("hello-world", dir.path());
    let pinned = octet_wasm::runtime::cache::sha256_hex(&std::fs::read(&wasm).unwrap());
    let (reply, _) = initialize_reply(dir.path(), &["hello-world.wasm", "--sha256", &pinned]);
    assert_eq!(reply["result"]["api_version"], "0.1", "{reply}");
    // Still a valid component, only with one more custom section.
    ok(&[
        "embed-metadata",
        text(&wasm),
        "--name",
        "evil",
        "--version",
        "6.6.6",
    ]);
    let (reply, log) = initialize_reply(dir.path(), &["hello-world.wasm", "--sha256", &pinned]);
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert!(
        message.contains("does not match its pinned digest")
            && message.contains(&pinned)
            && message.contains("refusing to run it"),
        "{message}\n{log}"
    );
}

#[test]
fn run_takes_default_limits_from_metadata_and_the_command_line_wins() {
    let dir = TempDir::new().unwrap();
    let wasm = copy_component("hello-world", dir.path());
    ok(&[
        "embed-metadata",
        text(&wasm),
        "--name",
        "hello-world",
        "--version",
        "0.1.0",
        "--memory-mib",
        "1",
    ]);
    let (reply, log) = initialize_reply(dir.path(), &["hello-world.wasm"]);
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("memory"),
        "1 MiB from the metadata applies: {reply}\n{log}"
    );
    let (reply, log) = initialize_reply(dir.path(), &["hello-world.wasm", "--memory-mib", "64"]);
    assert_eq!(
        reply["result"]["api_version"], "0.1",
        "--memory-mib wins: {reply}\n{log}"
    );
}

/// Runs a project's `./build` with this octet-wasm first on PATH (the
/// script asks it for the SDK and runs `check`), `env` added; returns the
/// output of both streams.
fn build_project(project: &Path, env: &[(&str, &Path)]) -> String {
    let root = repo_root();
    let bin_dir = shim_binary().parent().unwrap().to_owned();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut command = Command::new(project.join("build"));
    command
        .env("PATH", path)
        .env_remove("OCTET_WASM_SDK_DIR")
        .env(
            "OCTET_WASM_PYTHON",
            root.join("target/python-venv/bin/python"),
        )
        // Rust: the repository's lock file (copied in) and its guest target
        // directory, so the dependencies are the ones already built, offline.
        .env("CARGO_NET_OFFLINE", "true")
        .env("CARGO_TARGET_DIR", root.join("target").join("guest-build"));
    for (name, value) in env {
        command.env(name, value);
    }
    let build = command.output().expect("./build starts");
    let log = format!("{}\n{}", stdout(&build), stderr(&build));
    assert!(
        build.status.success(),
        "{}: ./build failed ({}):\n{log}",
        project.display(),
        build.status
    );
    assert!(
        log.contains("0 problem(s), 0 warning(s)"),
        "./build runs check:\n{log}"
    );
    log
}

/// Copies a project tree, links as links (moving it, across file systems).
fn move_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            move_tree(&source, &target);
        } else {
            std::fs::copy(&source, &target).unwrap();
        }
    }
    std::fs::remove_dir_all(from).unwrap();
}

/// Every file of the project (links and build output aside) as text.
fn project_texts(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let name = entry.file_name();
        if kind.is_symlink() || name == "target" || name == "node_modules" {
            continue;
        }
        if kind.is_dir() {
            project_texts(&entry.path(), out);
        } else if let Ok(text) = std::fs::read_to_string(entry.path()) {
            out.push((entry.path(), text));
        }
    }
}

/// Installs `lang`'s build toolchain with `scripts/build-guests-<lang>` (as
/// `scripts/test` does before the tests) when it is missing.
fn ensure_toolchain(lang: &str) {
    let root = repo_root();
    let ready = match lang {
        "rust" => return,
        "python" => root
            .join("target/python-venv/bin/componentize-py")
            .is_file(),
        "js" => root
            .join("guest-sdk/js/node_modules/componentize-qjs")
            .is_dir(),
        "c" => {
            Path::new("/usr/include/wasm32-wasi").is_dir()
                && Command::new("clang-19")
                    .arg("--version")
                    .output()
                    .is_ok_and(|output| output.status.success())
        }
        other => panic!("no toolchain check for {other}"),
    };
    if ready {
        return;
    }
    let script = root.join(format!("scripts/build-guests-{lang}"));
    let status = Command::new(&script)
        .arg("hello-world")
        .status()
        .unwrap_or_else(|err| panic!("cannot run {}: {err}", script.display()));
    assert!(
        status.success(),
        "the {lang} toolchain is missing and {} could not install it ({status})",
        script.display()
    );
}

/// The SDK a moved project builds against: a copy from `sdk install` (what
/// `scripts/install` leaves in the user's home), except for C, whose copy
/// would first build the componentize helper from scratch (minutes), so C
/// uses the checkout named by the variable.
fn sdk_for_moved_project(lang: &str, work: &Path) -> PathBuf {
    if lang == "c" {
        return repo_root();
    }
    let copy = work.join("sdk-copy");
    let report = ok(&[
        "sdk",
        "install",
        "--from",
        text(&repo_root()),
        "--to",
        text(&copy),
    ]);
    assert!(report.contains("installed the guest SDKs"), "{report}");
    copy
}

/// `new --lang LANG` inside the checkout (the SDK link is relative), the
/// project's own `./build`, plain `check` passing with notes for the
/// runtime's unused WASI imports; then the project moved out of the
/// checkout builds again against an SDK copy, and its `hello` tool answers
/// through hostsim under the API 0.4 manifest `new` writes (the Rust, JS
/// and C builds against octet:extension@0.4.0).
fn new_project_builds_moves_and_runs(lang: &str, noted: &[&str]) {
    use crate::support::{Shim, expect_error, tool_text};
    use octet_hostsim::{ApiVersion, ManifestSpec};

    ensure_toolchain(lang);
    let root = repo_root();
    let inside = tempfile::Builder::new()
        .prefix("e2e-scaffold-")
        .tempdir_in(root.join("target"))
        .unwrap();
    let name = "my-greeter";
    let project = inside.path().join(name);
    let created = Command::new(shim_binary())
        .args(["new", "--lang", lang, name])
        .current_dir(inside.path())
        .env_remove("OCTET_WASM_SDK_DIR")
        .output()
        .unwrap();
    assert!(created.status.success(), "{}", stderr(&created));
    // Nothing in the project names a place on this machine; the link is
    // relative to the checkout it lives in.
    let mut texts = Vec::new();
    project_texts(&project, &mut texts);
    assert!(texts.len() >= 5, "{texts:?}");
    for (path, body) in &texts {
        assert!(
            !body.contains(text(&root)) && !body.contains("{{"),
            "{}:\n{body}",
            path.display()
        );
    }
    let link = std::fs::read_link(project.join(".octet-sdk")).unwrap();
    assert_eq!(link, PathBuf::from("../../.."), "{}", link.display());
    if lang == "rust" {
        // The repository's lock file: the same dependency versions, offline.
        std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    }
    let log = build_project(&project, &[]);
    let wasm = project.join(format!("{name}.wasm"));
    assert!(wasm.is_file(), "{lang}: no {}\n{log}", wasm.display());

    // Plain check: exit 0; the runtime's unused imports are notes.
    let manifest = project.join("extension.toml");
    let report = ok(&["check", text(&manifest)]);
    assert!(
        report.contains(&format!(
            "0 problem(s), 0 warning(s), {} note(s)",
            noted.len()
        )),
        "{report}"
    );
    for capability in noted {
        assert!(
            report.contains(&format!("capabilities.{capability}")),
            "{report}"
        );
    }
    let written = toml_file(&manifest);
    // API 0.4 by default: octet's current authoring API.
    assert_eq!(written["api_version"].as_str(), Some("0.4"), "{lang}");
    assert_eq!(written["capabilities"]["filesystem"].as_str(), Some("none"));
    assert_eq!(written["capabilities"]["network"].as_bool(), Some(false));
    assert_eq!(written["capabilities"]["process"].as_bool(), Some(false));

    // Moved out of the checkout, the old relative link leads nowhere; the
    // next build links the SDK `octet-wasm sdk path` names there.
    let work = TempDir::new().unwrap();
    let moved = work.path().join("elsewhere").join(name);
    move_tree(&project, &moved);
    std::fs::remove_file(moved.join(format!("{name}.wasm"))).unwrap();
    let sdk = sdk_for_moved_project(lang, work.path());
    build_project(&moved, &[("OCTET_WASM_SDK_DIR", &sdk)]);
    assert_eq!(
        std::fs::read_link(moved.join(".octet-sdk")).unwrap(),
        sdk.canonicalize().unwrap()
    );
    let wasm = moved.join(format!("{name}.wasm"));
    assert!(
        wasm.is_file(),
        "{lang}: no {} after the move",
        wasm.display()
    );

    if lang != "python" {
        let report = ok(&["inspect", text(&wasm)]);
        assert!(
            report
                .lines()
                .any(|line| line.split_whitespace().eq(["wit", "octet:extension@0.4.0"])),
            "{lang}: {report}"
        );
    }
    // Compiled ahead, as an installer would: the interpreters take seconds.
    ok(&["compile", text(&wasm)]);
    let spec = ManifestSpec::new(name, ApiVersion::V0_4)
        .description(written["description"].as_str().unwrap())
        .tools(&["hello"]);
    let mut shim = Shim::start(&moved, &format!("{name}.wasm"), spec);
    let result = shim.initialize();
    assert_eq!(result["api_version"], "0.4", "{lang}: {result}");
    assert_eq!(result["protocol"]["version"], "0.4", "{lang}: {result}");
    let reply = shim.tool("hello", json!({"name": "octet"}));
    assert_eq!(tool_text(&reply), "Hello, octet!", "{}", reply.frame.raw);
    let reply = shim.tool("hello", json!({"name": 7}));
    assert_eq!(expect_error(&reply).code, -32602, "{}", reply.frame.raw);
    shim.shutdown();
}

#[test]
fn new_rust_project_builds_moves_and_runs() {
    new_project_builds_moves_and_runs("rust", &[]);
}

#[test]
fn new_python_project_builds_moves_and_runs() {
    new_project_builds_moves_and_runs("python", &["filesystem", "network"]);
}

#[test]
fn new_js_project_builds_moves_and_runs() {
    new_project_builds_moves_and_runs("js", &["filesystem"]);
}

#[test]
fn new_c_project_builds_moves_and_runs() {
    new_project_builds_moves_and_runs("c", &["filesystem"]);
}

/// A second `new` into the same directory, and a `new` with no SDK to link
/// to, are refused before anything is written.
#[test]
fn new_refuses_a_used_directory_and_a_missing_sdk() {
    let work = TempDir::new().unwrap();
    let project = work.path().join("greeter");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("notes.txt"), "mine").unwrap();
    let again = octet_wasm(&["new", "--lang", "rust", "greeter", "--dir", text(&project)]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already exists"),
        "{}",
        stderr(&again)
    );
    let fresh = work.path().join("fresh");
    let output = Command::new(shim_binary())
        .args(["new", "--lang", "python", "fresh"])
        .current_dir(work.path())
        // A directory of the checkout that is no SDK root (the Rust SDK
        // now carries a wit/ of its own, for `cargo package`).
        .env("OCTET_WASM_SDK_DIR", repo_root().join("docs"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("OCTET_WASM_SDK_DIR names no octet-wasm SDK")
            && message.contains("no wit/world.wit"),
        "{message}"
    );
    assert!(!fresh.exists());
}

/// `sdk path`: the variable, else the enclosing checkout (relative), and a
/// copy from `sdk install` is a root of its own.
#[test]
fn sdk_path_names_the_variable_the_checkout_or_a_copy() {
    let root = repo_root();
    let path = |cwd: &Path, env: Option<&Path>, args: &[&str]| {
        let mut command = Command::new(shim_binary());
        command.arg("sdk").arg("path").args(args).current_dir(cwd);
        match env {
            Some(dir) => command.env("OCTET_WASM_SDK_DIR", dir),
            None => command.env_remove("OCTET_WASM_SDK_DIR"),
        };
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output).trim_end().to_owned()
    };
    assert_eq!(path(&root.join("host/src"), None, &[]), "../..");
    assert_eq!(
        path(&root.join("host"), None, &["python"]),
        "../guest-sdk/python"
    );
    let work = TempDir::new().unwrap();
    let copy = work.path().join("sdk");
    ok(&["sdk", "install", "--from", text(&root), "--to", text(&copy)]);
    let copy = copy.canonicalize().unwrap();
    assert_eq!(path(work.path(), Some(&copy), &[]), text(&copy));
    assert_eq!(
        path(&root, Some(&copy), &["js"]),
        text(&copy.join("guest-sdk/js")),
        "the variable wins over the checkout"
    );
    for lang in ["rust", "python", "js", "c"] {
        assert!(copy.join("guest-sdk").join(lang).is_dir(), "{lang}");
    }
    assert!(copy.join("wit/world.wit").is_file());
    assert!(!copy.join("guest-sdk/python/__pycache__").exists());
}
