//! A bundle asking for more than the user allows (issue 17, hole 2): the
//! manifest's `run` args and the component's metadata section are the
//! author's, so what they ask above the user's ceilings is lowered to the
//! ceilings, with a warning naming the policy key that raises them, and
//! the errors a guest meets at a limit name that key, not a flag the
//! bundle controls. These tests run under the built-in ceilings (no policy
//! file); [`policy`] writes the user's file.

mod policy;

use crate::support::{
    HOST_GRACE, LOG_TIMEOUT, Shim, component, expect_error, expect_result, probe_manifest,
    shim_binary, stderr_text, tool_error, tool_ok,
};
use octet_hostsim::{ApiVersion, StderrLine};
use octet_wasm::author::metadata::{self, DefaultLimits, Metadata};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
/// The built-in memory ceiling for the whole process.
const BUILT_IN_MIB: u64 = 256;
/// octet's wait for `tool/render` (docs/protocol.md#deadline-table).
const HOST_RENDER_WAIT: Duration = Duration::from_millis(500);
/// The message of a clamp record.
const CLAMPED: &str = "the extension asks for more than the user's ceiling; lowered to the ceiling";

/// The clamp record for `setting` (`memory_mib`, `deadlines.render`, ...).
pub fn clamp_record(shim: &Shim, setting: &str) -> StderrLine {
    shim.stderr()
        .wait_for(LOG_TIMEOUT, |line| {
            line.message() == Some(CLAMPED)
                && line.field("setting").and_then(Value::as_str) == Some(setting)
        })
        .unwrap_or_else(|| {
            panic!(
                "no clamp record for {setting}; stderr:\n{}",
                stderr_text(shim)
            )
        })
}

fn field<'a>(line: &'a StderrLine, name: &str) -> &'a Value {
    line.field(name).unwrap_or(&Value::Null)
}

/// An initialized API 0.2 probe (pool of 4) with `args` after `run`.
fn probe(args: &[&str]) -> Shim {
    let mut shim = Shim::probe_with_args(probe_manifest(ApiVersion::V0_2), args);
    shim.initialize();
    shim
}

/// The probe with `limits` in its metadata section, started from its own
/// extension directory as octet would start it.
fn probe_with_metadata(dir: &Path, limits: DefaultLimits) -> Shim {
    let bytes = std::fs::read(component("probe")).expect("read the probe");
    let section = Metadata {
        name: "probe".into(),
        version: "0.1.0".into(),
        limits,
        ..Metadata::default()
    };
    let embedded = metadata::embed(&bytes, &section).expect("embed the metadata");
    std::fs::write(dir.join("probe.wasm"), embedded).expect("write the component");
    let manifest = probe_manifest(ApiVersion::V0_2);
    let toml = manifest.to_extension_toml("octet-wasm", &["run", "probe.wasm"]);
    std::fs::write(dir.join("extension.toml"), toml).expect("write the manifest");
    let mut shim = Shim::start(dir, "probe.wasm", manifest);
    shim.initialize();
    shim
}

/// A 1 GiB allocation fails inside the guest (which answers for itself),
/// the refusal is logged naming the user's key, and a memory bomb's trap
/// names the ceiling and the key; the shim serves on.
fn assert_memory_held_to_the_ceiling(shim: &mut Shim) {
    let reply = shim.tool("alloc", json!({"bytes": 1u64 << 30}));
    let text = tool_error(&reply, "alloc 1 GiB");
    assert!(
        text.contains("allocation of 1073741824 bytes failed"),
        "{text}"
    );
    let refused = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "guest memory growth refused")
        .unwrap_or_else(|| panic!("no refusal record; stderr:\n{}", stderr_text(shim)));
    let raise = field(&refused, "raise_with").as_str().unwrap_or_default();
    assert!(
        raise.contains("`memory_mib` in ~/.config/octet-wasm/policy.toml") && !raise.contains("--"),
        "{}",
        refused.text
    );
    let reply = shim.tool("grow_forever", json!({}));
    let text = tool_error(&reply, "grow_forever");
    assert!(
        text.contains(&format!("{BUILT_IN_MIB} MiB"))
            && text.contains(
                "the user raises it with `memory_mib` in ~/.config/octet-wasm/policy.toml"
            )
            && !text.contains("--memory-mib"),
        "{text}"
    );
    shim.assert_alive_and_silent("the memory ceiling");
    let reply = shim.tool("alloc", json!({"bytes": 16 * MIB}));
    assert_eq!(tool_ok(&reply, "alloc 16 MiB"), "allocated 16777216 bytes");
}

#[test]
fn memory_args_above_the_ceiling_are_lowered() {
    let mut shim = probe(&["--memory-mib", "100000"]);
    let clamp = clamp_record(&shim, "memory_mib");
    assert_eq!(field(&clamp, "requested"), 100_000);
    assert_eq!(field(&clamp, "ceiling"), BUILT_IN_MIB);
    assert_eq!(field(&clamp, "from"), "the run arguments");
    assert_eq!(
        field(&clamp, "raise_with"),
        "the user raises the ceiling with memory_mib in ~/.config/octet-wasm/policy.toml"
    );
    assert_memory_held_to_the_ceiling(&mut shim);
    shim.shutdown();
}

#[test]
fn a_metadata_section_asking_for_more_gets_the_ceilings() {
    let dir = tempfile::tempdir().unwrap();
    let limits = DefaultLimits {
        memory_mib: Some(100_000),
        fuel: None,
        deadlines: BTreeMap::from([("render".into(), 60_000), ("cancel_grace".into(), 60_000)]),
    };
    let mut shim = probe_with_metadata(dir.path(), limits);
    for (setting, ceiling) in [
        ("memory_mib", BUILT_IN_MIB),
        ("deadlines.render", 400),
        ("deadlines.cancel_grace", 1_000),
    ] {
        let clamp = clamp_record(&shim, setting);
        assert_eq!(field(&clamp, "ceiling"), ceiling, "{}", clamp.text);
        assert_eq!(field(&clamp, "from"), "the component's metadata section");
    }
    assert_memory_held_to_the_ceiling(&mut shim);
    render_spin_is_answered_in_time(&mut shim);
    shim.shutdown();
}

fn render_params(shim: &Shim, tool: &str, output: &str) -> Value {
    json!({"name": tool, "arguments": {}, "output": output, "is_error": false,
           "context": shim.context()})
}

/// A renderer that never returns is answered at the ceiling, before octet
/// gives up, and the next render is served by the same process.
fn render_spin_is_answered_in_time(shim: &mut Shim) {
    let pid = shim.pid();
    let params = render_params(shim, "spin", "");
    let started = Instant::now();
    let reply = shim.call("tool/render", params);
    let elapsed = started.elapsed();
    let error = expect_error(&reply);
    assert_eq!(
        error.message, "request deadline exceeded",
        "{}",
        reply.frame.raw
    );
    let data = error.data.clone().unwrap_or(Value::Null);
    assert_eq!(data["deadline_ms"], 400, "{}", reply.frame.raw);
    assert!(
        data["error"]
            .as_str()
            .is_some_and(|text| text.contains("the longest octet-wasm allows")),
        "{}",
        reply.frame.raw
    );
    assert!(
        elapsed < HOST_RENDER_WAIT,
        "render answered after {elapsed:?}"
    );
    let params = render_params(shim, "echo", "hi");
    let reply = shim.call("tool/render", params);
    assert_eq!(
        expect_result(&reply)["segments"][0]["text"],
        "echo · hi",
        "{}",
        reply.frame.raw
    );
    assert_eq!(shim.pid(), pid);
    assert!(shim.try_exit_status().unwrap().is_none(), "the shim exited");
}

#[test]
fn every_deadline_the_args_raise_is_held_to_its_ceiling() {
    let names = [
        "request",
        "command",
        "before_prompt",
        "after_response",
        "before_persistence",
        "post_mutation",
        "menu",
        "lifecycle",
    ];
    let mut args = vec![
        "--deadline-ms",
        "render=60000",
        "--deadline-ms",
        "cancel_grace=60000",
    ];
    let settings: Vec<String> = names
        .iter()
        .map(|name| format!("{name}=600000000"))
        .collect();
    for setting in &settings {
        args.extend(["--deadline-ms", setting.as_str()]);
    }
    let mut shim = Shim::probe_with_args(probe_manifest(ApiVersion::V0_2), &args);
    // One tool lane, so a cancelled call holds up the next one for exactly
    // the cancel grace.
    let offer = shim.offer().max_concurrent_requests(1).to_json();
    expect_result(&shim.initialize_with(offer));
    for (name, ceiling) in [
        ("render", 400),
        ("cancel_grace", 1_000),
        ("request", 29_000),
        ("command", 29_000),
        ("before_prompt", 4_500),
        ("after_response", 1_750),
        ("before_persistence", 150),
        ("post_mutation", 200),
        ("menu", 4_500),
        ("lifecycle", 2_000),
    ] {
        let clamp = clamp_record(&shim, &format!("deadlines.{name}"));
        assert_eq!(field(&clamp, "ceiling"), ceiling, "{}", clamp.text);
        let raise = field(&clamp, "raise_with").as_str().unwrap_or_default();
        let expected = match name {
            "command" => {
                "up to 1799000 ms, with deadlines.command in ~/.config/octet-wasm/policy.toml"
            }
            "cancel_grace" => "up to 1500 ms, with deadlines.cancel_grace in",
            "lifecycle" => "up to 29000 ms, with deadlines.lifecycle in",
            _ => "no ceiling can be higher: octet",
        };
        assert!(raise.contains(expected), "{name}: {raise}");
    }
    render_spin_is_answered_in_time(&mut shim);

    // The host cancels a runaway tool: the answer is immediate, and the
    // lane is free again after the 1 s ceiling, not the 60 s asked for.
    let spin = shim.send_tool("spin", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    shim.cancel(spin, "user").expect("cancel");
    let cancelled = Instant::now();
    let reply = shim.reply(spin);
    assert_eq!(expect_error(&reply).code, -32800, "{}", reply.frame.raw);
    assert!(
        cancelled.elapsed() < HOST_GRACE,
        "cancel answered after {:?}",
        cancelled.elapsed()
    );
    let reply = shim.tool("echo", json!({"text": "next"}));
    let waited = cancelled.elapsed();
    assert_eq!(tool_ok(&reply, "echo after the cancel"), "next");
    // 1 s of grace and a fresh instance; a 60 s grace would hold the lane
    // until the echo's own 29 s deadline.
    assert!(
        waited < Duration::from_secs(8),
        "the next call waited {waited:?}"
    );
    shim.shutdown();
}

/// Peak and current resident memory of `pid`, in bytes.
fn resident(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let kib = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"))
    };
    (kib("VmHWM:") * 1024, kib("VmRSS:") * 1024)
}

/// Sends `count` tool calls at once and returns their replies' texts and
/// whether each failed.
fn at_once(shim: &mut Shim, count: usize, tool: &str, arguments: Value) -> Vec<(bool, String)> {
    let ids: Vec<u64> = (0..count)
        .map(|_| shim.send_tool(tool, arguments.clone()))
        .collect();
    let responses = shim.responses(&ids, Duration::from_secs(60));
    ids.iter()
        .map(|id| {
            let result = responses
                .outcome(*id)
                .as_ref()
                .unwrap_or_else(|error| panic!("{tool}: {error}"));
            let text = result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (result["is_error"] == true, text)
        })
        .collect()
}

#[test]
fn pooled_instances_share_one_memory_ceiling() {
    let mut shim = probe(&["--memory-mib", "100000"]);
    // Four pooled instances, each made while the others are busy.
    for (failed, text) in at_once(&mut shim, 4, "sleep", json!({"ms": 300})) {
        assert!(!failed, "{text}");
    }
    let (_, baseline) = resident(shim.pid());
    // Each would fit its own instance's cap; together they pass the
    // process ceiling, so some must fail.
    let outcomes = at_once(&mut shim, 4, "alloc", json!({"bytes": 100 * MIB}));
    let failures: Vec<&String> = outcomes
        .iter()
        .filter(|(f, _)| *f)
        .map(|(_, t)| t)
        .collect();
    assert!(
        !failures.is_empty() && failures.len() < 4,
        "4 concurrent 100 MiB allocations under a 256 MiB ceiling: {outcomes:?}"
    );
    for text in &failures {
        assert!(
            text.contains("allocation of 104857600 bytes failed"),
            "{text}"
        );
    }
    let refusal = shim
        .stderr()
        .wait_for(LOG_TIMEOUT, |line| {
            line.message() == Some("guest memory growth refused")
                && field(line, "limit")
                    .as_str()
                    .is_some_and(|l| l.contains("for all of the guest's instances together"))
        })
        .unwrap_or_else(|| {
            panic!(
                "no process-ceiling refusal; stderr:\n{}",
                stderr_text(&shim)
            )
        });
    assert!(refusal.text.contains("memory_mib"), "{}", refusal.text);
    let (peak, _) = resident(shim.pid());
    // What the guests made resident stays within the ceiling (plus slack
    // for the host's own allocations); without the shared budget the four
    // would have made 400 MiB resident.
    assert!(
        peak.saturating_sub(baseline) < (BUILT_IN_MIB + 64) * MIB,
        "peak {} MiB, {} MiB before the allocations",
        peak / MIB,
        baseline / MIB
    );

    // Memory bombs on every pooled instance: each traps at the shared
    // ceiling and its instance is dropped, giving its memory back...
    for (failed, text) in at_once(&mut shim, 4, "grow_forever", json!({})) {
        assert!(failed, "{text}");
        assert!(
            text.contains("ran out of memory") && text.contains("memory_mib"),
            "{text}"
        );
    }
    // ... so fresh instances can allocate again.
    let outcomes = at_once(&mut shim, 4, "alloc", json!({"bytes": 100 * MIB}));
    assert!(
        outcomes.iter().any(|(failed, _)| !failed),
        "no memory came back from the dropped instances: {outcomes:?}"
    );
    shim.assert_alive_and_silent("the shared memory ceiling");
    shim.shutdown();
}

/// `octet-wasm <args>`: its exit code and stdout.
pub fn author_tool(args: &[&str]) -> (i32, String) {
    author_tool_with(std::process::Command::new(shim_binary()), args)
}

/// [`author_tool`] through `command` (the shim, or the shim in a private
/// home).
pub fn author_tool_with(mut command: std::process::Command, args: &[&str]) -> (i32, String) {
    let output = command.args(args).output().expect("run octet-wasm");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (
        output.status.code().unwrap_or(-1),
        format!("{stdout}{stderr}"),
    )
}

/// A probe extension directory whose manifest runs `probe.wasm` with
/// `args`, and the manifest's path.
pub fn probe_extension(dir: &Path, args: &[&str]) -> String {
    std::fs::copy(component("probe"), dir.join("probe.wasm")).expect("copy the probe");
    let mut run = vec!["run", "probe.wasm"];
    run.extend_from_slice(args);
    let toml = probe_manifest(ApiVersion::V0_2).to_extension_toml("octet-wasm", &run);
    let manifest = dir.join("extension.toml");
    std::fs::write(&manifest, toml).expect("write the manifest");
    manifest.to_string_lossy().into_owned()
}

#[test]
fn check_reports_each_clamp_and_the_ceilings() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = probe_extension(
        dir.path(),
        &[
            "--memory-mib",
            "100000",
            "--deadline-ms",
            "render=60000",
            "--fuel",
            "5",
        ],
    );
    // The probe imports sockets it only uses when granted the network.
    let (code, out) = author_tool(&["check", "--deny", "network", &manifest]);
    assert_eq!(code, 0, "clamps are warnings, not problems:\n{out}");
    for needle in [
        "warning: ",
        "entrypoint.args: run will lower it: memory_mib 100000 MiB from the run arguments is above the ceiling of 256 MiB; using 256 MiB (the user raises the ceiling with memory_mib in ~/.config/octet-wasm/policy.toml)\n  fix: ask for at most 256 MiB, or have the user raise the ceiling",
        "fix: ask for at most 400 ms\n",
        "run will lower it: deadlines.render 60000 ms from the run arguments is above the ceiling of 400 ms",
        "ceilings     built in (no policy file)",
        "memory     256 MiB per instance, 256 MiB for all instances together (ceiling 256 MiB)",
        "fuel       5 per call (ceiling: none)",
        "render               400 ms (ceiling 400 ms)",
        "cancel_grace         250 ms (ceiling 1000 ms)",
        "capabilities  filesystem at most unrestricted, network allowed, environment any the manifest names",
    ] {
        assert!(out.contains(needle), "{needle:?} not in:\n{out}");
    }
    assert!(!out.contains("run will lower it: fuel"), "{out}");
}

#[test]
fn inspect_shows_the_ceilings_the_component_will_get() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("probe.wasm");
    std::fs::copy(component("probe"), &path).unwrap();
    let path = path.to_string_lossy().into_owned();
    let (code, out) = author_tool(&[
        "embed-metadata",
        &path,
        "--name",
        "probe",
        "--version",
        "0.1.0",
        "--memory-mib",
        "100000",
        "--deadline-ms",
        "command=600000",
    ]);
    assert_eq!(code, 0, "{out}");
    // The author learns at once what users without a policy will get.
    assert!(
        out.contains("note: without a policy file, memory_mib 100000 MiB from the component's metadata section is above the ceiling of 256 MiB; using 256 MiB"),
        "{out}"
    );
    let (code, out) = author_tool(&["inspect", &path]);
    assert_eq!(code, 0, "{out}");
    for needle in [
        "clamp        memory_mib 100000 MiB from the component's metadata section is above the ceiling of 256 MiB",
        "clamp        deadlines.command 600000 ms from the component's metadata section is above the ceiling of 29000 ms; using 29000 ms (the user raises the ceiling, up to 1799000 ms, with deadlines.command in ~/.config/octet-wasm/policy.toml)",
        "ceilings     built in (no policy file)",
        "command              29000 ms (ceiling 29000 ms)",
    ] {
        assert!(out.contains(needle), "{needle:?} not in:\n{out}");
    }
    let (code, out) = author_tool(&["inspect", "--json", &path]);
    assert_eq!(code, 0, "{out}");
    let json: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let limits = &json["limits"];
    assert_eq!(limits["policy"], Value::Null);
    assert_eq!(limits["ceilings"]["memory_mib"], BUILT_IN_MIB);
    assert_eq!(limits["in_force"]["memory_mib_per_instance"], BUILT_IN_MIB);
    assert_eq!(limits["in_force"]["deadlines_ms"]["command"], 29_000);
    assert_eq!(
        limits["clamps"].as_array().map(Vec::len),
        Some(2),
        "{limits}"
    );
}
