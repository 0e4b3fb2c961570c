//! Author tools through the real binary: `new`, `inspect`, `manifest`,
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
    for command in ["new", "inspect", "manifest", "check", "embed-metadata"] {
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
    assert_eq!(report["wit_version"], "0.2.0");
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
        imports.contains(&"octet:extension/host@0.2.0"),
        "{imports:?}"
    );
    assert_eq!(
        report["capabilities"],
        json!({"filesystem": false, "network": false, "environment": true})
    );
    let human = ok(&["inspect", text(&path)]);
    for line in [
        "wit          octet:extension@0.2.0",
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
    let manifest = dir.path().join("extension.toml");
    ok(&["manifest", text(&wasm), "--out", text(&manifest)]);
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
    // Without --deny, check calls the withheld network a problem.
    let output = octet_wasm(&["check", text(&manifest)]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("capabilities.network"),
        "{}",
        stdout(&output)
    );
    ok(&["check", text(&manifest), "--deny", "network"]);
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

#[test]
fn check_finds_ungranted_capabilities() {
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
    let output = octet_wasm(&["check", text(&manifest)]);
    let report = stdout(&output);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        report.contains("capabilities.filesystem") && report.contains("wasi:filesystem/"),
        "{report}"
    );
    assert!(
        report.contains("capabilities.network") && report.contains("wasi:sockets/"),
        "{report}"
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

#[test]
fn new_rust_project_builds_and_passes_check() {
    let root = repo_root();
    let work = TempDir::new().unwrap();
    let project = work.path().join("greeter");
    ok(&[
        "new",
        "--lang",
        "rust",
        "greeter",
        "--dir",
        text(&project),
        "--sdk",
        text(&root.join("guest-sdk/rust")),
    ]);
    let cargo_toml = std::fs::read_to_string(project.join("Cargo.toml")).unwrap();
    assert!(
        cargo_toml.contains(&format!(
            "path = \"{}\"",
            root.join("guest-sdk/rust")
                .canonicalize()
                .unwrap()
                .display()
        )),
        "{cargo_toml}"
    );
    // The repository's lock file: the same dependency versions, offline.
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    let target = root.join("target").join("guest-build");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "build",
            "--offline",
            "--target",
            "wasm32-wasip2",
            "--release",
        ])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&project)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the scaffold builds");
    let wasm = project.join("greeter.wasm");
    std::fs::copy(target.join("wasm32-wasip2/release/greeter.wasm"), &wasm).unwrap();
    let report = ok(&["check", text(&project.join("extension.toml"))]);
    assert!(report.contains("0 problem(s)"), "{report}");
    let inspected: Value = serde_json::from_str(&ok(&["inspect", text(&wasm), "--json"])).unwrap();
    assert_eq!(inspected["description"]["tools"][0]["name"], "hello");
    assert_eq!(inspected["description"]["name"], "greeter");
    // A second `new` into the same directory is refused.
    let again = octet_wasm(&[
        "new",
        "--lang",
        "rust",
        "greeter",
        "--dir",
        text(&project),
        "--sdk",
        text(&root.join("guest-sdk/rust")),
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr(&again).contains("already exists"),
        "{}",
        stderr(&again)
    );
}

/// The SDK check: a directory that is not the language's SDK is refused
/// before anything is written.
#[test]
fn new_refuses_the_wrong_sdk() {
    let work = TempDir::new().unwrap();
    let output = octet_wasm(&[
        "new",
        "--lang",
        "python",
        "demo",
        "--dir",
        text(&work.path().join("demo")),
        "--sdk",
        text(&repo_root().join("guest-sdk/rust")),
    ]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("is not the python guest SDK (no build.py in it)"),
        "{message}"
    );
    assert!(!work.path().join("demo").exists());
}

/// Installs `lang`'s build toolchain with `scripts/build-guests-<lang>` (as
/// `scripts/test` does before the tests) when it is missing.
fn ensure_toolchain(lang: &str) {
    let root = repo_root();
    let ready = match lang {
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

/// `new --lang LANG`, then the project's own `./build` (with this
/// octet-wasm first on PATH, so the script's `check` runs too), `check`
/// with the `--deny` flags for the runtime's unused WASI imports, and a
/// real initialize and `hello` call through hostsim.
fn new_project_builds_and_runs(lang: &str, deny: &[&str]) {
    use crate::support::{Shim, expect_error, tool_text};
    use octet_wasm::hostsim::{ApiVersion, ManifestSpec};

    ensure_toolchain(lang);
    let root = repo_root();
    let work = TempDir::new().unwrap();
    let name = "my-greeter";
    let project = work.path().join(name);
    ok(&[
        "new",
        "--lang",
        lang,
        name,
        "--dir",
        text(&project),
        "--sdk",
        text(&root.join("guest-sdk").join(lang)),
    ]);
    let bin_dir = shim_binary().parent().unwrap().to_owned();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let build = Command::new(project.join("build"))
        .env("PATH", path)
        .env(
            "OCTET_WASM_PYTHON",
            root.join("target/python-venv/bin/python"),
        )
        .output()
        .expect("./build starts");
    let build_log = format!("{}\n{}", stdout(&build), stderr(&build));
    assert!(
        build.status.success(),
        "{lang}: ./build failed ({}):\n{build_log}",
        build.status
    );
    assert!(
        build_log.contains("0 problem(s), 0 warning(s)"),
        "{lang}: ./build runs check:\n{build_log}"
    );
    let wasm = project.join(format!("{name}.wasm"));
    assert!(wasm.is_file(), "{lang}: no {}", wasm.display());

    let manifest = project.join("extension.toml");
    let mut check = vec!["check", text(&manifest)];
    for capability in deny {
        check.extend(["--deny", capability]);
    }
    let report = ok(&check);
    assert!(report.contains("0 problem(s), 0 warning(s)"), "{report}");
    // The manifest withholds what the runtime imports but never uses.
    let strict = octet_wasm(&["check", text(&manifest)]);
    assert_eq!(strict.status.code(), Some(1), "{}", stdout(&strict));
    for capability in deny {
        assert!(
            stdout(&strict).contains(&format!("capabilities.{capability}")),
            "{}",
            stdout(&strict)
        );
    }
    let written = toml_file(&manifest);
    assert_eq!(written["capabilities"]["filesystem"].as_str(), Some("none"));
    assert_eq!(written["capabilities"]["network"].as_bool(), Some(false));
    assert_eq!(written["capabilities"]["process"].as_bool(), Some(false));

    // Compiled ahead, as an installer would: the interpreters take seconds.
    ok(&["compile", text(&wasm)]);
    let spec = ManifestSpec::new(name, ApiVersion::V0_2)
        .description(written["description"].as_str().unwrap())
        .tools(&["hello"]);
    let mut shim = Shim::start(&project, &format!("{name}.wasm"), spec);
    let result = shim.initialize();
    assert_eq!(result["api_version"], "0.2", "{result}");
    let reply = shim.tool("hello", json!({"name": "octet"}));
    assert_eq!(tool_text(&reply), "Hello, octet!", "{}", reply.frame.raw);
    let reply = shim.tool("hello", json!({"name": 7}));
    assert_eq!(expect_error(&reply).code, -32602, "{}", reply.frame.raw);
    shim.shutdown();
}

#[test]
fn new_python_project_builds_runs_and_passes_check() {
    new_project_builds_and_runs("python", &["filesystem", "network"]);
}

#[test]
fn new_js_project_builds_runs_and_passes_check() {
    new_project_builds_and_runs("js", &["filesystem"]);
}

#[test]
fn new_c_project_builds_runs_and_passes_check() {
    new_project_builds_and_runs("c", &["filesystem"]);
}
