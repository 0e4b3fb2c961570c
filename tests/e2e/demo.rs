//! `octet-wasm demo` as a scripted host and `octet-wasm replay`, through the
//! real binary: the tour `scripts/demo` prints, requests named on the
//! command line in their order, a workspace of the user's, the host's
//! answers to the extension's own requests (artifacts, catalogs, policy,
//! secrets, input, confirmations), the reason under an error answered
//! without one, recordings (redacted, private) and their replay against the
//! recorded component and against a changed recording.

use crate::support::{component, example_dir, repo_root, shim_binary};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tempfile::TempDir;

fn octet_wasm(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(shim_binary());
    command.args(args).current_dir(repo_root());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("octet-wasm starts")
}

fn text(output: &Output) -> String {
    format!(
        "{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs and expects exit status 0; returns stdout and stderr.
fn ok(args: &[&str], env: &[(&str, &str)]) -> String {
    let output = octet_wasm(args, env);
    let shown = text(&output);
    assert!(
        output.status.success(),
        "octet-wasm {args:?} failed ({}):\n{shown}",
        output.status
    );
    shown
}

fn path(path: &Path) -> &str {
    path.to_str().expect("UTF-8 test paths")
}

/// The requests the demo sent, from the transcript's `→ METHOD PARAMS`
/// lines, as (method, params).
fn sent_requests(transcript: &str) -> Vec<(String, Value)> {
    transcript
        .lines()
        .filter_map(|line| line.strip_prefix("→ "))
        .filter_map(|rest| {
            let (method, params) = rest.split_once(' ')?;
            Some((method.to_owned(), serde_json::from_str(params).ok()?))
        })
        .collect()
}

#[test]
fn the_tour_plays_hello_world_with_no_arguments() {
    let transcript = ok(&["demo"], &[]);
    for expected in [
        "→ tool/call {\"name\":\"hello_world\",\"arguments\":{\"name\":\"Ada\"}",
        "\"content\":\"Hello, Ada!\"",
        "→ command/execute {\"name\":\"hello\",\"arguments\":[\"Ada\"]",
        "→ hook/run {\"hook\":\"before_prompt\"",
        "→ status/collect",
        "→ tool/render",
        "→ shutdown {}",
        "== every frame passed octet's fatal-rule checks",
    ] {
        assert!(
            transcript.contains(expected),
            "no {expected:?} in\n{transcript}"
        );
    }
}

#[test]
fn named_requests_run_in_order_and_the_showcase_chart_is_published() {
    let artifacts = TempDir::new().unwrap();
    let dir = example_dir("showcase");
    let transcript = ok(
        &[
            "demo",
            path(&dir),
            "--command",
            "charts",
            "--tool",
            "chart",
            "--args",
            r#"{"values":[10,200,90]}"#,
            "--tool",
            "chart_stats",
            "--tool",
            "unlock_stats",
            "--tool",
            "chart_stats",
            "--command",
            "charts",
            "extra",
            "--artifacts",
            path(artifacts.path()),
        ],
        &[],
    );
    let requests: Vec<(String, Value)> = sent_requests(&transcript)
        .into_iter()
        .filter(|(method, _)| method == "tool/call" || method == "command/execute")
        .map(|(_, params)| {
            (
                params["name"].as_str().unwrap_or_default().to_owned(),
                params,
            )
        })
        .collect();
    let names: Vec<&str> = requests.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "charts",
            "chart",
            "chart_stats",
            "unlock_stats",
            "chart_stats",
            "charts"
        ],
        "{transcript}"
    );
    // Tool calls name the catalog revision: 0 before the unlock, 1 after.
    assert_eq!(requests[2].1["catalog_revision"], 0);
    assert_eq!(requests[4].1["catalog_revision"], 1);
    assert_eq!(requests[5].1["arguments"], json!(["extra"]));
    for expected in [
        "\"text\":\"0 chart(s) drawn\"",
        "host: artifact artifact_00000000000000000000000000000001: image/png",
        "SHA-256 verified, saved as",
        "\"method\":\"presentation/update\"",
        "\"type\":\"image\",\"artifact_id\":\"artifact_00000000000000000000000000000001\"",
        // Before the unlock the dynamic tool is not in revision 0.
        "unknown tool: chart_stats",
        "host: registered chart_stats: catalog revision 1",
        "min 10, max 200, mean 100.0",
        "\"text\":\"1 chart(s) drawn\"",
    ] {
        assert!(
            transcript.contains(expected),
            "no {expected:?} in\n{transcript}"
        );
    }
    let png = std::fs::read(
        artifacts
            .path()
            .join("artifact_00000000000000000000000000000001.png"),
    )
    .unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    // IHDR: 3 bars of 8 pixels, 64 high.
    assert_eq!(&png[16..24], [0, 0, 0, 24, 0, 0, 0, 64]);
}

#[test]
fn a_file_tool_reads_the_users_workspace_and_long_replies_are_cut_unless_full() {
    let workspace = TempDir::new().unwrap();
    let long_line = "word ".repeat(200);
    std::fs::write(
        workspace.path().join("notes.txt"),
        format!("one two\n{long_line}\n"),
    )
    .unwrap();
    let dir = example_dir("word-count");
    let args = [
        "demo",
        path(&dir),
        "--workspace",
        path(workspace.path()),
        "--tool",
        "word_count",
        "--args",
        r#"{"path":"notes.txt"}"#,
    ];
    let transcript = ok(&args, &[]);
    assert!(transcript.contains("\"words\":202"), "{transcript}");
    assert!(
        transcript.contains(&format!(
            "workspace {}",
            path(&workspace.path().canonicalize().unwrap())
        )),
        "{transcript}"
    );
    // The user's workspace stays.
    assert!(workspace.path().join("notes.txt").is_file());
    let long = ok(
        &[
            "demo",
            path(&dir),
            "--tool",
            "word_count",
            "--args",
            r#"{"path":"x"}"#,
        ],
        &[],
    );
    assert!(
        long.contains("bytes; --full shows all)"),
        "the initialize reply is cut:\n{long}"
    );
    let full = ok(
        &[
            "demo",
            path(&dir),
            "--full",
            "--tool",
            "word_count",
            "--args",
            r#"{"path":"x"}"#,
        ],
        &[],
    );
    assert!(!full.contains("--full shows all"), "{full}");
}

/// A private extension directory for the probe, whose manifest grants
/// secrets and confirmations.
fn probe_dir(secrets: &[&str]) -> TempDir {
    let dir = TempDir::new().unwrap();
    let probe = component("probe");
    let spec = crate::support::probe_manifest(octet_hostsim::ApiVersion::V0_2);
    let mut toml = spec.to_extension_toml("octet-wasm", &["run", path(&probe)]);
    if !secrets.is_empty() {
        toml = toml.replace(
            "[capabilities]\n",
            &format!("[capabilities]\nsecrets = {}\n", json!(secrets)),
        );
    }
    std::fs::write(dir.path().join("extension.toml"), toml).unwrap();
    dir
}

#[test]
fn the_host_answers_secrets_policy_input_and_confirmations_as_flagged() {
    let dir = probe_dir(&["api.key", "missing"]);
    let secrets = TempDir::new().unwrap();
    let file = secrets.path().join("secrets");
    std::fs::write(&file, "# the user's own\nmissing.too=x\n").unwrap();
    let transcript = ok(
        &[
            "demo",
            path(dir.path()),
            "--tool",
            "secret",
            "--args",
            r#"{"name":"api.key"}"#,
            "--tool",
            "secret",
            "--args",
            r#"{"name":"missing"}"#,
            "--tool",
            "policy",
            "--args",
            r#"{"kind":"external_side_effect","operation":"issues.create","target":{}}"#,
            "--tool",
            "input",
            "--args",
            r#"{"prompt":"Name?"}"#,
            "--tool",
            "input",
            "--args",
            r#"{"prompt":"Again?"}"#,
            "--tool",
            "confirm",
            "--args",
            r#"{"prompt":"Sure?"}"#,
            "--secret",
            "api.key=DEMO_TEST_KEY",
            "--secrets-file",
            path(&file),
            "--policy",
            "deny",
            "--input",
            "Grace",
            "--confirm",
            "no",
        ],
        &[("DEMO_TEST_KEY", "k-123456")],
    );
    for expected in [
        "secret of 8 bytes",
        "host: secret \"api.key\" handed out (8 bytes)",
        "{\"value\":\"(the secret)\"}",
        "host: secret \"missing\" unavailable",
        "secret is unavailable",
        "decision: deny, token: none",
        "\"text\":\"Grace\"",
        "input answered null: no --input left",
        "no input",
        "confirmed: false",
    ] {
        assert!(
            transcript.contains(expected),
            "no {expected:?} in\n{transcript}"
        );
    }
    assert!(!transcript.contains("k-123456"), "{transcript}");
    // A --secret naming an unset variable is the user's mistake, said so.
    let output = octet_wasm(
        &[
            "demo",
            path(dir.path()),
            "--tool",
            "echo",
            "--secret",
            "api.key=DEMO_UNSET_VAR",
        ],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("the environment variable DEMO_UNSET_VAR is not set"),
        "{}",
        text(&output)
    );
}

#[test]
fn a_failing_command_shows_the_reason_the_shim_logged() {
    let work = TempDir::new().unwrap();
    let wasm = component("python/compat");
    let manifest = work.path().join("extension.toml");
    ok(
        &[
            "manifest",
            path(&wasm),
            "--out",
            path(&manifest),
            "--no-pin",
        ],
        &[],
    );
    // `manifest` names the component beside the manifest; this one stays
    // where the build put it.
    let text_of = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text_of.replace("\"compat.wasm\"", &json!(path(&wasm)).to_string()),
    )
    .unwrap();
    ok(&["compile", path(&wasm)], &[]);
    let transcript = ok(
        &["demo", path(work.path()), "--command", "convert", "raise"],
        &[],
    );
    let line = transcript
        .lines()
        .position(|line| line.contains("\"code\":-32603"))
        .unwrap_or_else(|| panic!("no -32603 in\n{transcript}"));
    let why = transcript.lines().nth(line + 1).unwrap_or_default();
    assert!(
        why.starts_with("  why (the shim's log): ") && why.contains("command broke"),
        "{why}\n{transcript}"
    );
}

#[test]
fn misplaced_script_arguments_are_refused_before_anything_starts() {
    let output = octet_wasm(&["demo", "--command", "hello", "--args", "{}"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("does not follow a --tool NAME"),
        "{}",
        text(&output)
    );
    let output = octet_wasm(&["demo", "--tool", "hello_world", "--args", "{oops"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("not valid JSON"),
        "{}",
        text(&output)
    );
}

fn record(dir: &Path, extra: &[&str], recording: &Path, env: &[(&str, &str)]) -> String {
    let mut args = vec!["demo", path(dir), "--record", path(recording)];
    args.extend(extra);
    ok(&args, env)
}

fn replay(recording: &Path, component: &Path) -> Output {
    octet_wasm(&["replay", path(recording), path(component)], &[])
}

fn wasm_of(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.wasm"))
}

#[test]
fn recordings_of_the_reference_examples_replay_as_recorded() {
    let work = TempDir::new().unwrap();
    for (name, extra) in [
        ("hello-world", &[][..]),
        (
            "hello-delay",
            &["--slow-args", r#"{"name":"Ada","delay_ms":3000}"#][..],
        ),
        ("turn-tracker", &[][..]),
        (
            "showcase",
            &[
                "--tool",
                "chart",
                "--args",
                r#"{"values":[1,2,3]}"#,
                "--tool",
                "unlock_stats",
                "--tool",
                "chart_stats",
            ][..],
        ),
    ] {
        let dir = example_dir(name);
        let recording = work.path().join(format!("{name}.jsonl"));
        record(&dir, extra, &recording, &[]);
        let output = replay(&recording, &wasm_of(&dir, name));
        let report = text(&output);
        assert!(output.status.success(), "{name}:\n{report}");
        assert!(
            report.contains(" as recorded, 0 difference(s)"),
            "{name}:\n{report}"
        );
        let lines = std::fs::read_to_string(&recording).unwrap();
        let header: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
        assert_eq!(header["extension"], name);
        let entries: Vec<Value> = lines
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(
            entries.iter().any(|e| e["from"] == "host")
                && entries.iter().any(|e| e["from"] == "extension")
        );
        let times: Vec<u64> = entries
            .iter()
            .map(|e| e["t_us"].as_u64().unwrap())
            .collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "{name}: times only grow"
        );
    }
}

#[test]
fn replay_reports_every_frame_that_differs() {
    let work = TempDir::new().unwrap();
    let dir = example_dir("hello-world");
    let recording = work.path().join("hello.jsonl");
    record(&dir, &[], &recording, &[]);
    let original = std::fs::read_to_string(&recording).unwrap();
    assert_eq!(original.matches("Hello, Ada!").count(), 4, "{original}");
    // The tool's reply changes, and a notification the recording expects
    // never comes.
    let changed: Vec<String> = original
        .lines()
        .map(|line| {
            if line.contains("\"from\":\"extension\"") && line.contains("\"content\":\"Hello, Ada!\"") {
                line.replace("Hello, Ada!", "Hello, Bob!")
            } else {
                line.to_owned()
            }
        })
        .chain(std::iter::once(
            json!({"t_us": u64::MAX, "from": "extension", "frame": {"jsonrpc": "2.0", "method": "notification", "params": {"message": "never"}}})
                .to_string(),
        ))
        .collect();
    let tampered = work.path().join("tampered.jsonl");
    std::fs::write(&tampered, changed.join("\n")).unwrap();
    let output = replay(&tampered, &wasm_of(&dir, "hello-world"));
    let report = text(&output);
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(
        report.contains("differs: the reply to tool/call (id 2)"),
        "{report}"
    );
    assert!(
        report.contains("Hello, Bob!") && report.contains("Hello, Ada!"),
        "{report}"
    );
    assert!(
        report.contains("differs: the notification did not come"),
        "{report}"
    );
    assert!(report.contains("2 difference(s)"), "{report}");
    // Not a recording at all.
    let junk = work.path().join("junk.jsonl");
    std::fs::write(&junk, "{}\n").unwrap();
    let output = replay(&junk, &wasm_of(&dir, "hello-world"));
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output).contains("does not start with an octet-wasm recording header"),
        "{}",
        text(&output)
    );
}

#[test]
fn recordings_are_private_and_hold_no_secret_the_host_handed_out() {
    let dir = probe_dir(&["api.key"]);
    let work = TempDir::new().unwrap();
    let recording = work.path().join("secret.jsonl");
    let transcript = record(
        dir.path(),
        &[
            "--tool",
            "secret",
            "--args",
            r#"{"name":"api.key"}"#,
            "--tool",
            "input",
            "--args",
            r#"{"prompt":"Token?","secret":true}"#,
            "--tool",
            "echo",
            "--args",
            r#"{"text":"tok-987654"}"#,
            "--secret",
            "api.key=DEMO_RECORD_KEY",
            "--input",
            "tok-987654",
        ],
        &recording,
        &[("DEMO_RECORD_KEY", "k-abcdef")],
    );
    assert!(transcript.contains("secret of 8 bytes"), "{transcript}");
    let recorded = std::fs::read_to_string(&recording).unwrap();
    for secret in ["k-abcdef", "tok-987654"] {
        assert!(!recorded.contains(secret), "{secret} in\n{recorded}");
    }
    // Masked with their length kept: "k-abcdef" and "tok-987654".
    assert!(recorded.contains("\"value\":\"********\""), "{recorded}");
    assert!(recorded.contains("\"text\":\"**********\""), "{recorded}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&recording).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    // Replayed, the guest gets the masks: it measures and echoes them as
    // the recorded one measured and echoed the secrets.
    let output = replay(&recording, &component("probe"));
    assert!(output.status.success(), "{}", text(&output));
}

/// A bundle chooses its `[entrypoint].args`: naming an author tool instead
/// of `run`, it could replace a directory of the user's (`sdk install
/// --to`) or overwrite a file (`demo --record`). Started the way octet
/// starts an extension, every such command refuses before writing.
#[test]
fn a_bundle_cannot_run_the_author_tools_that_write_files() {
    use octet_hostsim::Launch;
    let work = TempDir::new().unwrap();
    let victim = work.path().join("config");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("policy.toml"), "memory_mib = 64\n").unwrap();
    let overwritten = work.path().join("notes.txt");
    std::fs::write(&overwritten, "mine").unwrap();
    let hello = example_dir("hello-world");
    let root = repo_root();
    let hello_wasm = wasm_of(&hello, "hello-world");
    let fresh = work.path().join("fresh").to_string_lossy().into_owned();
    let attacks: Vec<Vec<&str>> = vec![
        vec![
            "sdk",
            "install",
            "--from",
            path(&root),
            "--to",
            path(&victim),
        ],
        vec!["sdk", "path"],
        vec!["new", "--lang", "c", "evil", "--dir", &fresh],
        vec!["demo", path(&hello), "--record", path(&overwritten)],
        vec!["replay", path(&overwritten), path(&hello_wasm)],
        // Every other author tool too: `manifest` and `embed-metadata`
        // write where --out says (a manifest whose description holds
        // `$(...)` written over ~/.bashrc would run the author's commands).
        vec!["manifest", path(&hello_wasm), "--out", path(&overwritten)],
        vec![
            "embed-metadata",
            path(&hello_wasm),
            "--name",
            "x",
            "--version",
            "1.0.0",
            "--out",
            path(&overwritten),
        ],
        vec!["check", path(&hello)],
        vec!["inspect", path(&hello_wasm)],
    ];
    for args in attacks {
        let workspace = TempDir::new().unwrap();
        let mut session = Launch::new(shim_binary())
            .args(&args)
            .extension_dir(work.path())
            .manifest_path(work.path().join("extension.toml"))
            .workspace(workspace.path())
            .scratch(workspace.path())
            .name("hostile")
            .spawn()
            .unwrap();
        let status = session
            .wait_exit(std::time::Duration::from_secs(20))
            .unwrap();
        assert_eq!(status.code(), Some(2), "{args:?}");
        // stderr is read on its own thread: wait for the line.
        let refusal = session
            .stderr()
            .wait_for(std::time::Duration::from_secs(10), |line| {
                line.text.contains("does not run as an octet extension")
                    && line.text.contains("may only `run` a component")
            });
        assert!(
            refusal.is_some(),
            "{args:?}: {:?}",
            session.stderr().lines()
        );
    }
    assert_eq!(
        std::fs::read_to_string(victim.join("policy.toml")).unwrap(),
        "memory_mib = 64\n"
    );
    assert!(!victim.join("guest-sdk").exists());
    assert!(!Path::new(&fresh).exists());
    assert_eq!(std::fs::read_to_string(&overwritten).unwrap(), "mine");
}
