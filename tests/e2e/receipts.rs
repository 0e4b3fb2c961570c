//! Usage receipts (docs/choices.md#usage-receipts) through the real binary.
//!
//! Only the user's policy file (`receipts = true`) turns them on, and they
//! go only to `<home>/.local/state/octet-wasm/receipts`, the home from the
//! user database: the private home of the test run (`scripts/private-home`),
//! never the real user's. The tests that write that home's policy file,
//! which every other test's shim reads, are `#[ignore]`d and run in
//! `scripts/test`'s serial pass; like
//! `hostile_limits::policy` they hold the same lock while the file exists,
//! keep it only until the shim has read it (at start-up) and always restore
//! what was there. Each shim gets an extension name of its own, receipts
//! are turned on in that name's table only (a shim another test starts
//! meanwhile stays off), and each test removes the files its shims wrote.

use crate::support::{
    LOG_TIMEOUT, Shim, expect_error, expect_result, probe_manifest, shim_binary, stderr_text,
    tool_error, tool_ok,
};
use octet_hostsim::{ApiVersion, ManifestSpec};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The user's receipts directory (the home from the user database).
fn receipts_dir() -> PathBuf {
    octet_wasm::user_dirs::home_dir()
        .expect("the test user has a home directory")
        .join(octet_wasm::receipts::writer::BELOW_HOME)
}

/// An extension name no other test (or earlier run) uses.
fn unique_name(what: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "receipts-{what}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The receipts files of the extension `name`.
fn files_of(name: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(receipts_dir()) else {
        return Vec::new();
    };
    let prefix = format!("{name}-");
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .map(|entry| entry.path())
        .collect();
    files.sort();
    files
}

/// Removes the receipts files of `name` when dropped.
struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for file in files_of(&self.0) {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// The user's policy file as one test wants it (`None`: no file), restored
/// when dropped.
struct PolicyFile {
    path: PathBuf,
    backup: Option<PathBuf>,
    _lock: std::fs::File,
}

impl PolicyFile {
    fn set(text: Option<&str>) -> PolicyFile {
        let path = octet_wasm::policy::path().expect("the test user has a home directory");
        let dir = path.parent().expect("the policy file has a directory");
        std::fs::create_dir_all(dir).expect("create the policy directory");
        // The lock `hostile_limits::policy` takes too: one writer at a time,
        // in this process or another.
        let lock = std::fs::File::create(dir.join(".e2e-policy.lock")).expect("create the lock");
        // SAFETY: the descriptor is open for the duration of the call.
        assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
        let backup = path.exists().then(|| {
            let backup = dir.join("policy.toml.e2e-backup");
            std::fs::rename(&path, &backup).expect("set the user's own policy aside");
            backup
        });
        let file = PolicyFile {
            path,
            backup,
            _lock: lock,
        };
        if let Some(text) = text {
            std::fs::write(&file.path, text).expect("write the policy file");
            std::fs::set_permissions(&file.path, std::fs::Permissions::from_mode(0o600))
                .expect("set the policy file's mode");
        }
        file
    }
}

impl Drop for PolicyFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        if let Some(backup) = &self.backup {
            let _ = std::fs::rename(backup, &self.path);
        }
    }
}

/// A policy that turns receipts on for the extension `name` only: other
/// shims that start while the file exists (other tests) are not affected.
fn only_for(name: &str) -> String {
    format!("receipts = false\n[extension.\"{name}\"]\nreceipts = true\n")
}

fn probe_named(name: &str) -> ManifestSpec {
    let mut manifest = probe_manifest(ApiVersion::V0_2);
    manifest.name = name.to_owned();
    manifest
}

/// Starts the probe named `name` under `policy` with `args` and `env` as
/// the bundle's, initialised with one instance (so the outcomes below
/// happen in order), and removes the policy once the shim has read it.
fn probe_under(
    policy: Option<&str>,
    manifest: ManifestSpec,
    args: &[&str],
    env: &[(&str, &str)],
) -> Shim {
    let file = PolicyFile::set(policy);
    let mut shim = Shim::probe_with_env(manifest, args, env);
    let params = shim.offer().max_concurrent_requests(1).to_json();
    expect_result(&shim.initialize_with(params));
    drop(file);
    shim
}

/// The records of a receipts file, each parsed.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|err| panic!("read {}: {err}", path.display()));
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

/// Sends `tool/call` of `tool` with `id` as one raw frame and returns the
/// frame's length.
fn send_tool_raw(shim: &mut Shim, id: u64, tool: &str, arguments: Value) -> usize {
    let frame = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tool/call",
        "params": shim.tool_params(tool, arguments),
    });
    let line = serde_json::to_string(&frame).unwrap();
    shim.raw(format!("{line}\n").as_bytes());
    line.len()
}

const SECRET: &str = "do-not-record-this-3f9c";

#[test]
#[ignore = "writes the policy file of the run's private home, which every other test's shim reads; scripts/test runs it in the serial pass"]
fn each_request_gets_a_receipt_with_its_outcome_and_a_summary_at_exit() {
    let name = unique_name("on");
    let _cleanup = Cleanup(name.clone());
    // On for this extension alone (so no other shim started meanwhile is
    // switched on), which also meters fuel.
    let policy = format!("[extension.\"{name}\"]\nreceipts = true\nfuel = 1_000_000_000_000_000\n");
    let mut shim = probe_under(
        Some(&policy),
        probe_named(&name),
        &["--deadline-ms", "request=1000"],
        &[],
    );
    let mut expected: Vec<(u64, &str, Option<i64>, usize, usize)> = Vec::new();
    let exchange = |shim: &mut Shim, id: u64, tool: &str, arguments: Value| {
        let bytes_in = send_tool_raw(shim, id, tool, arguments);
        let reply = shim.reply(id);
        (bytes_in, reply)
    };
    let (bytes_in, reply) = exchange(&mut shim, 1001, "echo", json!({ "text": SECRET }));
    assert_eq!(tool_ok(&reply, "echo"), SECRET);
    expected.push((1001, "result", None, bytes_in, reply.frame.raw.len()));
    let (bytes_in, reply) = exchange(&mut shim, 1002, "fail", json!({ "message": SECRET }));
    tool_error(&reply, "fail");
    expected.push((1002, "tool_error", None, bytes_in, reply.frame.raw.len()));
    let (bytes_in, reply) = exchange(&mut shim, 1003, "invalid", json!({}));
    assert_eq!(expect_error(&reply).code, -32602);
    expected.push((1003, "error", Some(-32602), bytes_in, reply.frame.raw.len()));
    let (bytes_in, reply) = exchange(&mut shim, 1004, "panic", json!({}));
    tool_error(&reply, "panic");
    expected.push((1004, "trap", None, bytes_in, reply.frame.raw.len()));
    // Cancelled by the host while it spins...
    let bytes_in = send_tool_raw(&mut shim, 1005, "spin", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    shim.cancel(1005, "user").expect("cancel");
    let reply = shim.reply(1005);
    assert_eq!(expect_error(&reply).code, -32800);
    expected.push((1005, "cancelled", None, bytes_in, reply.frame.raw.len()));
    // ... and answered by the shim at its 1 s deadline.
    let bytes_in = send_tool_raw(&mut shim, 1006, "spin", json!({}));
    let reply = shim.reply(1006);
    let text = tool_error(&reply, "spin past its deadline");
    assert!(text.contains("deadline"), "{text}");
    expected.push((1006, "deadline", None, bytes_in, reply.frame.raw.len()));
    // Answered by the shim itself: the guest declares no such tool.
    let (bytes_in, reply) = exchange(&mut shim, 1007, "no_such_tool", json!({}));
    assert_eq!(expect_error(&reply).code, -32601);
    expected.push((1007, "error", Some(-32601), bytes_in, reply.frame.raw.len()));
    let stats = shim.call("command/execute", json!({"name": "stats", "arguments": []}));
    expect_result(&stats);
    let pid = shim.pid();
    shim.shutdown();

    let files = files_of(&name);
    assert_eq!(files.len(), 1, "{files:?}");
    let file = &files[0];
    assert_eq!(
        file.file_name().unwrap().to_string_lossy(),
        format!("{name}-{pid}.jsonl")
    );
    let meta = std::fs::metadata(file).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        !text.contains(SECRET),
        "arguments or results were recorded:\n{text}"
    );
    let records = records(file);
    assert_eq!(records[0]["type"], "start");
    assert_eq!(records[0]["extension"], name.as_str());
    assert_eq!(records[0]["pid"], pid);
    let summary = records.last().unwrap();
    assert_eq!(summary["type"], "summary", "{text}");
    let requests: Vec<&Value> = records
        .iter()
        .filter(|record| record["type"] == "request")
        .collect();
    assert_eq!(requests.len(), expected.len() + 1, "{text}");
    for (id, outcome, code, bytes_in, bytes_out) in &expected {
        let record = requests
            .iter()
            .find(|record| record["id"] == *id)
            .unwrap_or_else(|| panic!("no record of {id}:\n{text}"));
        assert_eq!(record["method"], "tool/call", "{record}");
        assert_eq!(record["outcome"], *outcome, "{record}");
        assert_eq!(record["code"].as_i64(), *code, "{record}");
        assert_eq!(record["bytes_in"], *bytes_in as u64, "{record}");
        assert_eq!(record["bytes_out"], *bytes_out as u64, "{record}");
        assert!(record["wall_us"].as_u64().is_some(), "{record}");
        if *id == 1007 {
            assert_eq!(record["by_shim"], true, "{record}");
            assert_eq!(record["memory_bytes"], Value::Null, "{record}");
            assert!(record.get("tool").is_none(), "an undeclared name: {record}");
        } else {
            assert!(record.get("by_shim").is_none(), "{record}");
            assert!(record["memory_bytes"].as_u64().unwrap() > 0, "{record}");
        }
    }
    let by_id = |id: u64| *requests.iter().find(|r| r["id"] == id).unwrap();
    let echo = by_id(1001);
    assert_eq!(echo["tool"], "echo");
    assert!(
        echo["fuel"].as_u64().unwrap() > 0,
        "fuel is metered: {echo}"
    );
    assert_eq!(by_id(1004)["fault"], "trap");
    // The spins ran until the answer: they used CPU, and wall time at least
    // up to the cancellation and the deadline.
    assert!(
        by_id(1005)["cpu_us"].as_u64().unwrap() > 10_000,
        "{}",
        by_id(1005)
    );
    assert!(
        by_id(1006)["wall_us"].as_u64().unwrap() >= 1_000_000,
        "{}",
        by_id(1006)
    );
    let command = requests
        .iter()
        .find(|r| r["method"] == "command/execute")
        .unwrap();
    assert_eq!(command["outcome"], "result");
    assert!(command.get("tool").is_none(), "{command}");
    assert_eq!(summary["requests"], 8);
    assert_eq!(summary["records_dropped"], 0);
    assert_eq!(
        summary["outcomes"],
        json!({"cancelled": 1, "deadline": 1, "error": 2, "result": 2, "tool_error": 1, "trap": 1})
    );
    let total_in: u64 = requests
        .iter()
        .map(|r| r["bytes_in"].as_u64().unwrap())
        .sum();
    assert_eq!(summary["bytes_in"], total_in);

    // `receipts NAME` finds this file and tabulates it.
    let output = std::process::Command::new(shim_binary())
        .args(["receipts", &name])
        .output()
        .expect("run octet-wasm receipts");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{table}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let row = table
        .lines()
        .find(|line| line.starts_with("tool/call spin "))
        .unwrap_or_else(|| panic!("no spin row:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // method, tool, count, p50, p99, cpu, memory, errors, cancelled, deadline, trap
    assert_eq!(cells[2], "2", "{row}");
    assert_eq!(&cells[8..], ["1", "1", "0"], "{row}");
    assert!(
        table.contains("8 requests in 1 file(s); 0 records dropped"),
        "{table}"
    );
}

#[test]
#[ignore = "writes the policy file of the run's private home, which every other test's shim reads; scripts/test runs it in the serial pass"]
fn off_by_default_and_nothing_the_bundle_ships_turns_them_on_or_moves_them() {
    let name = unique_name("off");
    let _cleanup = Cleanup(name.clone());
    let dir_existed = receipts_dir().exists();
    // The bundle's idea of "on": policy files in its extension directory,
    // which it also names as HOME and the XDG directories, and variables.
    let bundle = tempfile::tempdir().unwrap();
    let extension_dir = bundle.path().join("extension");
    for file in [
        "policy.toml",
        ".config/octet-wasm/policy.toml",
        "receipts.toml",
    ] {
        let path = extension_dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "receipts = true\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let home = extension_dir.to_string_lossy().into_owned();
    let config = extension_dir.join(".config").to_string_lossy().into_owned();
    let state = extension_dir
        .join(".local/state")
        .to_string_lossy()
        .into_owned();
    let env = [
        ("HOME", home.as_str()),
        ("XDG_CONFIG_HOME", config.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
        ("OCTET_WASM_RECEIPTS", "1"),
        ("OCTET_WASM_RECEIPTS_DIR", state.as_str()),
    ];
    let before = walk(bundle.path());
    for policy in [None, Some("memory_mib = 256\n"), Some("receipts = false\n")] {
        let file = PolicyFile::set(policy);
        let mut shim = probe_in(&extension_dir, probe_named(&name), &[], &env);
        expect_result(&shim.initialize_with(shim.init_params()));
        drop(file);
        assert_eq!(
            tool_ok(&shim.tool("echo", json!({"text": "hi"})), "echo"),
            "hi"
        );
        shim.shutdown();
        assert!(
            !stderr_text(&shim).contains("usage receipts"),
            "{}",
            stderr_text(&shim)
        );
    }
    assert_eq!(files_of(&name), Vec::<PathBuf>::new());
    if !dir_existed {
        assert!(
            !receipts_dir().exists(),
            "the receipts directory was created"
        );
    }
    let mut after = walk(bundle.path());
    after.retain(|path| path.file_name().is_some_and(|n| n != "extension.toml"));
    let mut before = before;
    before.retain(|path| path.file_name().is_some_and(|n| n != "extension.toml"));
    assert_eq!(
        after, before,
        "the shim wrote into the bundle's directories"
    );
}

/// The probe run from `extension_dir` (which the test has filled), its
/// manifest written there, with `args` and `env` as the bundle's.
fn probe_in(
    extension_dir: &Path,
    manifest: ManifestSpec,
    args: &[&str],
    env: &[(&str, &str)],
) -> Shim {
    let component = crate::support::component("probe");
    let component = component.to_string_lossy().into_owned();
    let mut run = vec!["run", component.as_str()];
    run.extend_from_slice(args);
    std::fs::write(
        extension_dir.join("extension.toml"),
        manifest.to_extension_toml("octet-wasm", &run),
    )
    .unwrap();
    Shim::start_with_env(extension_dir, &component, manifest, args, env)
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
#[ignore = "writes the policy file of the run's private home, which every other test's shim reads; scripts/test runs it in the serial pass"]
fn receipts_stay_in_the_users_state_directory_whatever_home_the_bundle_sets() {
    let name = unique_name("home");
    let _cleanup = Cleanup(name.clone());
    let fake = tempfile::tempdir().unwrap();
    let home = fake.path().to_string_lossy().into_owned();
    let env = [("HOME", home.as_str()), ("XDG_STATE_HOME", home.as_str())];
    let mut shim = probe_under(Some(&only_for(&name)), probe_named(&name), &[], &env);
    assert_eq!(
        tool_ok(&shim.tool("echo", json!({"text": "hi"})), "echo"),
        "hi"
    );
    let pid = shim.pid();
    shim.shutdown();
    assert_eq!(
        files_of(&name),
        [receipts_dir().join(format!("{name}-{pid}.jsonl"))]
    );
    assert!(walk(fake.path()).is_empty(), "{:?}", walk(fake.path()));
}

#[test]
#[ignore = "writes the policy file of the run's private home, which every other test's shim reads; scripts/test runs it in the serial pass"]
fn receipts_are_refused_when_the_guest_could_reach_them_and_the_extension_is_served() {
    let name = unique_name("reach");
    let _cleanup = Cleanup(name.clone());
    // `unrestricted` grants `/`, which holds the user's state directory.
    let mut manifest = probe_named(&name);
    manifest.filesystem = "unrestricted".into();
    let mut shim = probe_under(Some(&only_for(&name)), manifest, &[], &[]);
    let warning = shim
        .stderr()
        .wait_for_message(
            LOG_TIMEOUT,
            "usage receipts not written; the extension is served as usual",
        )
        .unwrap_or_else(|| panic!("no refusal; stderr:\n{}", stderr_text(&shim)));
    let reason = warning
        .field("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    assert!(reason.contains("the guest is granted /"), "{reason}");
    assert_eq!(
        tool_ok(&shim.tool("echo", json!({"text": "hi"})), "echo"),
        "hi"
    );
    shim.shutdown();
    assert_eq!(files_of(&name), Vec::<PathBuf>::new());
}

#[test]
#[ignore = "writes the policy file of the run's private home, which every other test's shim reads; scripts/test runs it in the serial pass"]
fn receipts_are_refused_when_the_workspace_holds_them() {
    let name = unique_name("workspace");
    let _cleanup = Cleanup(name.clone());
    // A workspace that holds the receipts directory but not the compiled
    // cache (whose key a grant of the whole home would rotate).
    let state = receipts_dir()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(&state)
        .unwrap();
    let mut manifest = probe_named(&name);
    manifest.filesystem = "workspace".into();
    let file = PolicyFile::set(Some(&only_for(&name)));
    let mut shim = Shim::probe_with_env(manifest, &[], &[]);
    let params = octet_hostsim::InitializeParams::new(&shim.manifest, &shim.manifest_path, &state)
        .max_concurrent_requests(1)
        .to_json();
    expect_result(&shim.initialize_with(params));
    drop(file);
    let warning = shim
        .stderr()
        .wait_for_message(
            LOG_TIMEOUT,
            "usage receipts not written; the extension is served as usual",
        )
        .unwrap_or_else(|| panic!("no refusal; stderr:\n{}", stderr_text(&shim)));
    let reason = warning
        .field("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    assert!(
        reason.contains(&format!("the guest is granted {}", state.display())),
        "{reason}"
    );
    assert_eq!(
        tool_ok(&shim.tool("echo", json!({"text": "hi"})), "echo"),
        "hi"
    );
    shim.shutdown();
    assert_eq!(files_of(&name), Vec::<PathBuf>::new());
}

#[test]
#[ignore = "writes the policy file of the run's private home, which every other test's shim reads; scripts/test runs it in the serial pass"]
fn a_link_planted_at_the_receipts_path_is_not_followed() {
    let name = unique_name("link");
    let _cleanup = Cleanup(name.clone());
    let dir = receipts_dir();
    // As private as the shim makes it.
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(&dir)
        .unwrap();
    // The shim's file is `<name>-<pid>.jsonl`: plant a link under that name
    // for each of the next pids the kernel hands out.
    let victim = tempfile::tempdir().unwrap();
    let last: u32 = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let planted: Vec<(u32, PathBuf, PathBuf)> = (last + 1..last + 400)
        .map(|pid| {
            let target = victim.path().join(format!("victim-{pid}"));
            let link = dir.join(format!("{name}-{pid}.jsonl"));
            std::os::unix::fs::symlink(&target, &link).unwrap();
            (pid, link, target)
        })
        .collect();
    let mut shim = probe_under(Some(&only_for(&name)), probe_named(&name), &[], &[]);
    assert_eq!(
        tool_ok(&shim.tool("echo", json!({"text": "hi"})), "echo"),
        "hi"
    );
    let pid = shim.pid();
    shim.shutdown();
    assert!(
        walk(victim.path()).is_empty(),
        "a planted link was followed"
    );
    let hit = planted
        .iter()
        .any(|(planted_pid, _, _)| *planted_pid == pid);
    for (_, link, _) in &planted {
        assert!(std::fs::symlink_metadata(link).unwrap().is_symlink());
        std::fs::remove_file(link).unwrap();
    }
    assert!(
        hit,
        "the shim's pid {pid} was not among the planted {}..{}",
        last + 1,
        last + 400
    );
    let files = files_of(&name);
    assert_eq!(files.len(), 1, "{files:?}");
    let file_name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        file_name.starts_with(&format!("{name}-{pid}-")),
        "{file_name}"
    );
    let records = records(&files[0]);
    assert_eq!(records.last().unwrap()["type"], "summary");
}

/// `octet-wasm receipts FILE`: stdout, stderr and exit code.
fn receipts_command(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = std::process::Command::new(shim_binary());
    command.arg("receipts").args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run octet-wasm receipts");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn request_line(id: u64, method: &str, tool: Option<&str>, wall_us: u64, outcome: &str) -> String {
    let mut record = json!({
        "type": "request", "id": id, "method": method, "at_ms": 0, "wall_us": wall_us,
        "cpu_us": 250, "fuel": null, "memory_bytes": 3 << 20, "bytes_in": 80, "bytes_out": 60,
        "outcome": outcome,
    });
    if let Some(tool) = tool {
        record["tool"] = tool.into();
    }
    if outcome == "error" {
        record["code"] = (-32602).into();
    }
    record.to_string()
}

#[test]
fn the_receipts_command_tabulates_a_file_and_reports_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe-42.jsonl");
    let mut lines = vec![json!({"type": "start", "extension": "probe", "pid": 42}).to_string()];
    for (i, wall) in (1..=100u64).enumerate() {
        let outcome = match i {
            0 => "error",
            1 => "cancelled",
            2 => "deadline",
            3 => "trap",
            _ => "result",
        };
        lines.push(request_line(
            i as u64,
            "tool/call",
            Some("echo"),
            wall * 1_000,
            outcome,
        ));
    }
    lines.push(request_line(500, "command/execute", None, 7_000, "result"));
    lines.push("this is not a record".into());
    lines.push(json!({"type": "summary", "requests": 101, "records_dropped": 3}).to_string());
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (code, out, err) = receipts_command(&[&path.to_string_lossy()], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            "method",
            "count",
            "p50_ms",
            "p99_ms",
            "cpu_ms",
            "max_mem_mib",
            "errors",
            "cancelled",
            "deadline",
            "trap"
        ]
    );
    assert_eq!(
        rows[1],
        [
            "command/execute",
            "1",
            "7.000",
            "7.000",
            "0.250",
            "3.0",
            "0",
            "0",
            "0",
            "0"
        ]
    );
    assert_eq!(
        rows[2],
        [
            "tool/call",
            "echo",
            "100",
            "50.000",
            "99.000",
            "25.000",
            "3.0",
            "1",
            "1",
            "1",
            "1"
        ]
    );
    assert!(
        out.contains("101 requests in 1 file(s); 3 records dropped past a file's cap"),
        "{out}"
    );
    assert!(
        err.contains(&format!(
            "{}:103: malformed record, skipped: not JSON",
            path.display()
        )),
        "{err}"
    );
}

#[test]
fn the_receipts_command_refuses_to_run_under_octet() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    std::fs::write(&path, "").unwrap();
    let (code, out, err) = receipts_command(
        &[&path.to_string_lossy()],
        &[("OCTET_EXTENSION_DIR", &dir.path().to_string_lossy())],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("`octet-wasm receipts` does not run as an octet extension"),
        "{err}"
    );
}

#[test]
fn inspect_says_whether_receipts_are_on() {
    let (code, out, err) = {
        let output = std::process::Command::new(shim_binary())
            .args([
                "inspect",
                &crate::support::component("probe").to_string_lossy(),
            ])
            .output()
            .expect("run octet-wasm inspect");
        (
            output.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    assert_eq!(code, 0, "{out}{err}");
    // Without a policy (the unignored tests never write one) they are off,
    // and the report says how the user turns them on.
    if octet_wasm::policy::path().is_some_and(|path| !path.exists()) {
        assert!(
            out.contains("  receipts   off (the user turns them on with `receipts = true` in ~/.config/octet-wasm/policy.toml)"),
            "{out}"
        );
    }
}
