//! The user's own policy file (`<home>/.config/octet-wasm/policy.toml`,
//! the home from the user database): its ceilings, per-extension tables
//! and capability ceilings.
//!
//! Each test writes the file in a [`PrivateHome`] of its own, so no other
//! shim (and no user) ever reads it, and tests run in parallel.

use super::{author_tool_with, clamp_record, field, probe_extension, tool_error, tool_ok};
use crate::support::{LOG_TIMEOUT, PrivateHome, Shim, probe_manifest, stderr_text};
use octet_hostsim::{ApiVersion, ManifestSpec};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

/// The user's policy file, written in a private home of its own.
struct PolicyFile {
    home: PrivateHome,
}

impl PolicyFile {
    fn write(text: &str, mode: u32) -> PolicyFile {
        let home = PrivateHome::new();
        let path = home.write_policy(text);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .expect("set the policy file's mode");
        PolicyFile { home }
    }

    /// The probe with `manifest`, `args` and `env`, in this home.
    fn probe(self, manifest: ManifestSpec, args: &[&str], env: &[(&str, &str)]) -> Shim {
        Shim::probe_wrapped(manifest, args, env, &self.home.wrapper()).keeping(self.home)
    }

    /// `octet-wasm ARGS...` in this home: exit code, stdout and stderr.
    fn author_tool(&self, args: &[&str]) -> (i32, String) {
        author_tool_with(self.home.shim_command(), args)
    }
}

/// Starts an initialized probe under `policy`.
fn probe_under(policy: &str, mode: u32, manifest: ManifestSpec, args: &[&str]) -> Shim {
    let mut shim = PolicyFile::write(policy, mode).probe(manifest, args, &[]);
    shim.initialize();
    shim
}

fn probe_named(name: &str) -> ManifestSpec {
    let mut manifest = probe_manifest(ApiVersion::V0_2);
    manifest.name = name.to_owned();
    manifest
}

fn wait_message(shim: &Shim, message: &str) -> octet_hostsim::StderrLine {
    shim.stderr()
        .wait_for_message(LOG_TIMEOUT, message)
        .unwrap_or_else(|| panic!("no {message:?} record; stderr:\n{}", stderr_text(shim)))
}

const POLICY: &str = r#"
memory_mib = 64

[extension."probe"]
memory_mib = 512
"#;

#[test]
fn a_policy_raises_memory_for_one_extension_only() {
    // The probe's own table raises the whole process past the built-in
    // 256 MiB...
    let mut shim = probe_under(POLICY, 0o600, probe_manifest(ApiVersion::V0_2), &[]);
    let reply = shim.tool("alloc", json!({"bytes": 300u64 << 20}));
    assert_eq!(
        tool_ok(&reply, "alloc 300 MiB"),
        "allocated 314572800 bytes"
    );
    shim.shutdown();
    // ... while any other extension gets the top level's 64 MiB.
    let mut shim = probe_under(
        POLICY,
        0o600,
        probe_named("other"),
        &["--memory-mib", "512"],
    );
    let clamp = clamp_record(&shim, "memory_mib");
    assert_eq!(field(&clamp, "ceiling"), 64);
    let reply = shim.tool("alloc", json!({"bytes": 100u64 << 20}));
    tool_error(&reply, "alloc 100 MiB under 64");
    let reply = shim.tool("grow_forever", json!({}));
    let text = tool_error(&reply, "grow_forever under 64");
    assert!(
        text.contains("64 MiB")
            && text.contains("`memory_mib` in ~/.config/octet-wasm/policy.toml"),
        "{text}"
    );
    shim.assert_alive_and_silent("the policy's memory ceiling");
    shim.shutdown();
}

/// A table pinned to a component's SHA-256 is that component's alone: a
/// bundle that names itself after the extension (the name is the
/// manifest's) gets only the top level.
#[test]
fn a_table_pinned_to_another_component_is_not_claimed_by_name() {
    let probe = std::fs::read(crate::support::component("probe")).expect("read the probe");
    let own = octet_wasm::runtime::cache::sha256_hex(&probe);
    let other = "0".repeat(64);
    let pinned = |digest: &str| {
        format!(
            "memory_mib = 64\n\n[extension.\"probe\"]\nmemory_mib = 512\nsha256 = \"{digest}\"\n"
        )
    };
    // Pinned to another component: the probe, though named "probe", gets
    // the top level's 64 MiB, and the log says why.
    let mut shim = probe_under(
        &pinned(&other),
        0o600,
        probe_manifest(ApiVersion::V0_2),
        &[],
    );
    let record = wait_message(
        &shim,
        "this extension's policy table is pinned to another component; only the file's top level applies",
    );
    assert_eq!(field(&record, "pinned_sha256"), &json!(other));
    assert_eq!(field(&record, "component_sha256"), &json!(own));
    let reply = shim.tool("alloc", json!({"bytes": 100u64 << 20}));
    tool_error(&reply, "alloc 100 MiB under the top level's 64");
    shim.assert_alive_and_silent("a pinned table not applied");
    shim.shutdown();
    // Pinned to the probe itself (any case): the table applies.
    let mut shim = probe_under(
        &pinned(&own.to_uppercase()),
        0o600,
        probe_manifest(ApiVersion::V0_2),
        &[],
    );
    let reply = shim.tool("alloc", json!({"bytes": 300u64 << 20}));
    assert_eq!(
        tool_ok(&reply, "alloc 300 MiB under its own pinned table"),
        "allocated 314572800 bytes"
    );
    shim.shutdown();
}

#[test]
fn fuel_above_the_policy_ceiling_is_lowered() {
    let policy = "fuel = 100_000_000\n";
    for args in [&["--fuel", "100000000000000"][..], &[]] {
        let mut shim = probe_under(policy, 0o600, probe_manifest(ApiVersion::V0_2), args);
        if !args.is_empty() {
            let clamp = clamp_record(&shim, "fuel");
            assert_eq!(field(&clamp, "requested"), 100_000_000_000_000u64);
            assert_eq!(field(&clamp, "ceiling"), 100_000_000);
            assert!(
                clamp
                    .text
                    .contains("fuel in ~/.config/octet-wasm/policy.toml")
            );
        }
        let reply = shim.tool("spin", json!({}));
        let text = tool_error(&reply, "spin under a fuel ceiling");
        assert!(
            text.contains("fuel budget of 100000000 per call")
                && text
                    .contains("the user raises it with `fuel` in ~/.config/octet-wasm/policy.toml")
                && !text.contains("--fuel"),
            "{text}"
        );
        shim.assert_alive_and_silent("running out of the user's fuel");
        shim.shutdown();
    }
}

#[test]
fn a_policy_withholds_filesystem_network_and_environment() {
    let policy = "[capabilities]\nfilesystem = \"none\"\nnetwork = false\nenvironment = []\n";
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a listener");
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let addr = listener.local_addr().unwrap().to_string();
    let manifest = probe_manifest(ApiVersion::V0_2)
        .network(true)
        .environment(&["PROBE_GRANTED"]);
    let mut shim =
        PolicyFile::write(policy, 0o600).probe(manifest, &[], &[("PROBE_GRANTED", "visible")]);
    shim.initialize();
    for capability in ["filesystem", "network", "environment"] {
        let record = shim
            .stderr()
            .wait_for(LOG_TIMEOUT, |line| {
                line.message() == Some("capability withheld by the user's policy")
                    && field(line, "capability") == capability
            })
            .unwrap_or_else(|| {
                panic!("{capability} not withheld; stderr:\n{}", stderr_text(&shim))
            });
        assert_eq!(
            field(&record, "raise_with"),
            format!("capabilities.{capability} in ~/.config/octet-wasm/policy.toml").as_str()
        );
    }
    std::fs::write(shim.workspace.join("hello.txt"), "in the workspace").unwrap();
    let reply = shim.tool("read_file", json!({"path": "hello.txt"}));
    let text = tool_error(&reply, "read_file without filesystem");
    assert!(!text.contains("in the workspace"), "{text}");
    let reply = shim.tool("connect", json!({"addr": addr}));
    tool_error(&reply, "connect without network");
    std::thread::sleep(Duration::from_millis(100));
    assert!(listener.accept().is_err(), "the guest reached the listener");
    let reply = shim.tool("env", json!({"name": "PROBE_GRANTED"}));
    assert_eq!(tool_error(&reply, "env"), "PROBE_GRANTED is not set");
    shim.assert_alive_and_silent("withheld capabilities");
    shim.shutdown();
}

// A malformed policy, or one others can write, no longer leaves the
// built-in ceilings: the shim refuses to start (tests/e2e/policy_fail_closed.rs,
// in a private home).

#[test]
fn policy_deadlines_stay_under_the_hosts() {
    let policy = "[deadlines]\nrender = 60000\ncancel_grace = 60000\ncommand = 3600000\n";
    let mut shim = probe_under(policy, 0o600, probe_manifest(ApiVersion::V0_2), &[]);
    let notes: Vec<String> = shim
        .stderr()
        .lines()
        .into_iter()
        .filter(|line| line.message() == Some("policy value past what octet-wasm allows; lowered"))
        .map(|line| {
            field(&line, "detail")
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    for expected in [
        "deadlines.render = 60000 is past what octet-wasm allows (400 ms",
        "deadlines.cancel_grace = 60000 is past what octet-wasm allows (1500 ms",
        "deadlines.command = 3600000 is past what octet-wasm allows (1799000 ms",
    ] {
        assert!(
            notes.iter().any(|n| n.starts_with(expected)),
            "{expected:?} not in {notes:?}"
        );
    }
    super::render_spin_is_answered_in_time(&mut shim);
    shim.shutdown();
}

#[test]
fn check_and_inspect_report_the_users_ceilings() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = probe_extension(dir.path(), &["--fuel", "5000", "--memory-mib", "300"]);
    let policy =
        "memory_mib = 512\n[deadlines]\ncommand = 600000\n[extension.probe]\nfuel = 1000\n";
    let file = PolicyFile::write(policy, 0o600);
    let (code, out) = file.author_tool(&["check", "--deny", "network", &manifest]);
    let wasm = dir.path().join("probe.wasm").to_string_lossy().into_owned();
    let (inspect_code, inspected) = file.author_tool(&["inspect", &wasm]);
    assert_eq!(code, 0, "{out}");
    let path = file.home.policy_path();
    for needle in [
        format!(
            "ceilings     {} (with this extension's own table)",
            path.display()
        ),
        "memory     300 MiB per instance, 512 MiB for all instances together (ceiling 512 MiB)"
            .into(),
        "fuel       1000 per call (ceiling: 1000)".into(),
        "command              600000 ms (ceiling 600000 ms)".into(),
        "run will lower it: fuel 5000 from the run arguments is above the ceiling of 1000".into(),
    ] {
        assert!(out.contains(&needle), "{needle:?} not in:\n{out}");
    }
    assert_eq!(inspect_code, 0, "{inspected}");
    assert!(
        inspected.contains("512 MiB for all instances together"),
        "{inspected}"
    );

    // A policy `run` would refuse is a problem naming the file.
    let file = PolicyFile::write("memory_mib = 512\n", 0o666);
    let (code, out) = file.author_tool(&["check", "--deny", "network", &manifest]);
    let path = file.home.policy_path();
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "problem: {}: (policy): the policy file",
            path.display()
        )) && out.contains("writable by everyone")
            && out.contains("refuse to start"),
        "{out}"
    );
}
