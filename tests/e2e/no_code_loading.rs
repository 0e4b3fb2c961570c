//! Issue 23, classes 1 and 3: no code is loaded at run time, whatever the
//! environment, and the environment the bundle sets tunes nothing.
//!
//! The bundle chooses the subcommand (`run` or `compile`, both allowed
//! under octet), its arguments and every variable octet does not set. A
//! system-call trace of the real binary shows it opens no shared object
//! and executes nothing, with a planted name-service module and loader
//! variables pointing at it; a user whom only a name-service module
//! resolves gets a working shim; and every variable the dependency tree
//! reads, set to a hostile value, changes neither the threads nor the
//! answers.

use crate::hostile_bundle::evil_library;
use crate::support::*;
use octet_hostsim::ApiVersion;
use serde_json::{Value, json};
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// strace, which scripts/test installs.
const STRACE: &str = "/usr/bin/strace";

/// Plants a shared object under every name a C library would look for in
/// `dir` (the bundle's directory), each creating `marker` when loaded.
fn plant_libraries(dir: &Path, marker: &Path) {
    for name in [
        "evil.so",
        "libnss_files.so.2",
        "libnss_dns.so.2",
        "libnss_compat.so.2",
        "libnss_systemd.so.2",
        "libnss_ldap.so.2",
        "libnss_sss.so.2",
        "libc.so.6",
        "libc.musl-x86_64.so.1",
        "ld-musl-x86_64.so.1",
    ] {
        evil_library(dir, name, marker);
    }
    std::fs::create_dir_all(dir.join("gconv")).unwrap();
    std::fs::write(
        dir.join("gconv/gconv-modules"),
        "module INTERNAL EVIL// evil 1\n",
    )
    .unwrap();
}

/// The variables a bundle sets to steer a C library's loader, locale,
/// resolver and time zone towards its directory `dir`.
fn loader_env(dir: &Path) -> Vec<(String, String)> {
    let dir = dir.display().to_string();
    vec![
        ("LD_PRELOAD".into(), format!("{dir}/evil.so")),
        ("LD_LIBRARY_PATH".into(), dir.clone()),
        ("LD_AUDIT".into(), format!("{dir}/evil.so")),
        ("GCONV_PATH".into(), format!("{dir}/gconv")),
        ("LOCPATH".into(), dir.clone()),
        ("NLSPATH".into(), format!("{dir}/%N")),
        ("TZ".into(), format!(":{dir}/zone")),
        ("TZDIR".into(), dir.clone()),
        ("HOSTALIASES".into(), format!("{dir}/hosts")),
        ("RES_OPTIONS".into(), "ndots:15".into()),
        ("GLIBC_TUNABLES".into(), "glibc.malloc.check=3".into()),
        ("LC_ALL".into(), "evil".into()),
    ]
}

/// What the traced processes opened and executed, from an strace log.
struct Trace {
    opened: Vec<String>,
    executed: Vec<String>,
}

impl Trace {
    fn read(log: &Path) -> Trace {
        let text = std::fs::read_to_string(log).expect("the strace log");
        let quoted = |line: &str| line.split('"').nth(1).map(str::to_owned);
        let mut trace = Trace {
            opened: Vec::new(),
            executed: Vec::new(),
        };
        for line in text.lines() {
            if line.contains("open(") || line.contains("openat(") || line.contains("openat2(") {
                trace.opened.extend(quoted(line));
            } else if line.contains("execve(") || line.contains("execveat(") {
                trace.executed.extend(quoted(line));
            }
        }
        trace
    }

    /// Panics if anything opened is a shared object, a loader or
    /// name-service file, or lies in the bundle's `dir` (but `allowed`).
    fn assert_loads_nothing(&self, what: &str, dir: &Path, allowed: &[&Path]) {
        assert!(
            !self.opened.is_empty(),
            "{what}: the trace saw no open at all"
        );
        for path in &self.opened {
            let name = Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let shared_object = name.ends_with(".so") || name.contains(".so.");
            assert!(!shared_object, "{what}: opened a shared object: {path}");
            for forbidden in ["ld.so.cache", "ld.so.preload", "nsswitch.conf", "gconv"] {
                assert!(
                    !path.contains(forbidden),
                    "{what}: opened {path} (the loader's or NSS's)"
                );
            }
            let in_bundle = Path::new(path).starts_with(dir);
            assert!(
                !in_bundle || allowed.iter().any(|ok| Path::new(path) == *ok),
                "{what}: opened a file of the bundle's: {path}"
            );
        }
        assert_eq!(
            self.executed.len(),
            1,
            "{what}: executed more than itself: {:?}",
            self.executed
        );
    }
}

/// strace, logging to `log`, giving the traced shim `env` (with `-E`, so
/// that strace itself, a dynamically linked program, never sees them).
fn strace_prefix(log: &Path, env: &[(String, String)]) -> Vec<OsString> {
    let mut prefix: Vec<OsString> = vec![
        STRACE.into(),
        "-f".into(),
        "-qq".into(),
        "-e".into(),
        "trace=open,openat,openat2,execve,execveat".into(),
        "-o".into(),
        log.as_os_str().to_owned(),
    ];
    for (name, value) in env {
        prefix.push("-E".into());
        prefix.push(format!("{name}={value}").into());
    }
    prefix
}

#[test]
fn run_and_compile_load_no_code_whatever_the_environment_says() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    std::fs::create_dir(&bundle).unwrap();
    let marker = dir.path().join("planted-code-ran");
    plant_libraries(&bundle, &marker);
    let env = loader_env(&bundle);
    let probe = component("probe");

    // `run`, as octet starts it, through a whole session.
    let log = dir.path().join("run.strace");
    let mut shim = Shim::probe_wrapped(
        probe_manifest(ApiVersion::V0_2),
        &[],
        &[],
        &strace_prefix(&log, &env),
    );
    shim.initialize();
    let reply = shim.tool("echo", json!({"text": "still serving"}));
    assert!(
        tool_text(&reply).contains("still serving"),
        "{}",
        reply.frame.raw
    );
    shim.shutdown();
    drop(shim);
    Trace::read(&log).assert_loads_nothing("run", &bundle, &[]);

    // `compile` (a bundle's args may choose it), on a cache miss.
    let copy = bundle.join("probe.wasm");
    std::fs::copy(&probe, &copy).unwrap();
    let mut bytes = std::fs::read(&copy).unwrap();
    // A custom section of its own makes a component no cache holds yet.
    bytes.extend_from_slice(&[0, 9, 8]);
    bytes.extend_from_slice(b"no-cache");
    std::fs::write(&copy, &bytes).unwrap();
    let log = dir.path().join("compile.strace");
    let status = Command::new(STRACE)
        .args(&strace_prefix(&log, &env)[1..])
        .arg(shim_binary())
        .arg("compile")
        .arg(&copy)
        .env_clear()
        .env("OCTET_EXTENSION_DIR", &bundle)
        .status()
        .expect("strace runs");
    assert!(status.success(), "compile failed under the trace");
    Trace::read(&log).assert_loads_nothing("compile", &bundle, &[copy.as_path()]);
    assert!(!marker.exists(), "the bundle's shared object ran");
}

#[test]
fn the_binary_has_no_loader_and_needs_no_library() {
    let bytes = std::fs::read(shim_binary()).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF");
    let u16_at = |at: usize| u16::from_le_bytes(bytes[at..at + 2].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    let mut dynamic = None;
    for n in 0..phnum {
        let header = phoff + n * phentsize;
        let kind = u32::from_le_bytes(bytes[header..header + 4].try_into().unwrap());
        assert_ne!(kind, 3, "PT_INTERP: the binary names a dynamic loader");
        if kind == 2 {
            dynamic = Some((u64_at(header + 8), u64_at(header + 32)));
        }
    }
    // static-pie keeps a dynamic section for its own relocations; it must
    // name no library (DT_NEEDED = 1) and no search path (DT_RPATH = 15,
    // DT_RUNPATH = 29).
    if let Some((offset, size)) = dynamic {
        for entry in bytes[offset..offset + size].chunks_exact(16) {
            let tag = u64::from_le_bytes(entry[..8].try_into().unwrap());
            assert!(
                ![1, 15, 29].contains(&tag),
                "the dynamic section has tag {tag}: it would load libraries"
            );
            if tag == 0 {
                break;
            }
        }
    }
}

#[test]
fn a_user_only_a_name_service_module_knows_gets_a_working_shim() {
    // No /etc/passwd entry, and nsswitch.conf names LDAP, SSSD and systemd:
    // the shim asks nothing that loads code, finds no home, says so in one
    // line, and serves with the built-in ceilings.
    let home = PrivateHome::nss_only();
    let mut shim = Shim::probe_wrapped(probe_manifest(ApiVersion::V0_2), &[], &[], &home.wrapper());
    shim.initialize();
    let reply = shim.tool("echo", json!({"text": "served"}));
    assert!(tool_text(&reply).contains("served"), "{}", reply.frame.raw);
    shim.shutdown();
    let status = shim.exit_status(EXIT_AFTER_SHUTDOWN);
    assert!(status.success(), "the shim ended with {status:?}");
    let stderr = stderr_text(&shim);
    let no_home: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("no user database names a home directory"))
        .collect();
    assert_eq!(no_home.len(), 1, "one line says there is no home: {stderr}");
}

/// Every variable the shim's dependency tree reads (`grep -rhoE
/// 'env::var(_os)?\("[A-Z_0-9]+"\)'` over the vendored sources, less the
/// build-time ones cargo sets for build scripts), plus those of the C
/// library and the standard library, each set to a hostile value.
fn dependency_variables() -> Vec<(&'static str, &'static str)> {
    vec![
        ("RAYON_NUM_THREADS", "1500"),
        ("RAYON_RS_NUM_CPUS", "1500"),
        ("RUST_MIN_STACK", "4096"),
        ("RUST_BACKTRACE", "full"),
        ("RUST_LIB_BACKTRACE", "1"),
        ("RUST_LOG", "trace"),
        ("TOKIO_WORKER_THREADS", "700"),
        ("TOKIO_UNSTABLE_SHARDED_BLOCKING_QUEUE", "1"),
        ("WASMTIME_BACKTRACE_DETAILS", "1"),
        ("WASMTIME_DEBUG_BINDGEN", "1"),
        ("WASMTIME_TEST_FORCE_MPK", "1"),
        ("WASMTIME_TEST_NO_HOG_MEMORY", "1"),
        ("CRANELIFT_VERBOSE", "1"),
        ("PULLEY_SAMPLING_FREQ", "1"),
        ("PULLEY_SAMPLING_FLUSH_AMT", "1"),
        ("WIT_BINDGEN_DEBUG", "1"),
        ("ISLE_SPLIT_MATCH_THRESHOLD", "1"),
        ("LISTEN_FDS", "7"),
        ("ICU4X_DATA_DIR", "/nonexistent"),
        ("NO_COLOR", "1"),
        ("CLICOLOR_FORCE", "1"),
        ("COLUMNS", "3"),
        ("TERM", "dumb"),
        ("MALLOC_ARENA_MAX", "1"),
        ("MIMALLOC_VERBOSE", "1"),
        ("MIMALLOC_SHOW_STATS", "1"),
        ("MIMALLOC_SHOW_ERRORS", "1"),
        ("MIMALLOC_RESERVE_OS_MEMORY", "4GiB"),
        ("MIMALLOC_ARENA_EAGER_COMMIT", "1"),
        ("MALLOC_CONF", "junk:true"),
        ("GLIBC_TUNABLES", "glibc.malloc.check=3"),
        ("TZ", "Antarctica/Troll"),
        ("LANG", "C.evil"),
        ("LC_ALL", "C.evil"),
        ("TMPDIR", "/nonexistent"),
        ("HOME", "/nonexistent"),
        ("XDG_CACHE_HOME", "/nonexistent"),
        ("XDG_CONFIG_HOME", "/nonexistent"),
    ]
}

fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the shim's /proc entry")
        .count()
}

/// A session of the probe compiled without the cache (so wasmtime's
/// parallel compilation starts its thread pool): the thread count after a
/// call, and what the host saw.
fn session(env: &[(&str, &str)]) -> (usize, Value, Vec<String>) {
    session_with_stderr(env).0
}

/// [`session`], and the shim's stderr after its exit.
fn session_with_stderr(env: &[(&str, &str)]) -> ((usize, Value, Vec<String>), String) {
    let mut shim = Shim::probe_with_env(probe_manifest(ApiVersion::V0_2), &["--no-cache"], env);
    let init = shim.initialize();
    let mut texts = Vec::new();
    for (tool, args) in [
        ("echo", json!({"text": "same"})),
        ("env", json!({"name": "RAYON_NUM_THREADS"})),
        ("env", json!({"name": "HOME"})),
    ] {
        let reply = shim.tool(tool, args);
        texts.push(reply.frame.raw.clone());
    }
    let count = threads(shim.pid());
    shim.shutdown();
    let _ = shim.exit_status(EXIT_AFTER_SHUTDOWN);
    ((count, init, texts), stderr_text(&shim))
}

#[test]
fn variables_the_dependencies_read_change_nothing() {
    let (baseline_threads, baseline_init, baseline_texts) = session(&[]);
    let hostile = dependency_variables();
    let ((threads, init, texts), stderr) = session_with_stderr(&hostile);
    // The allocator's switches (verbose start-up, statistics at exit) are
    // not read either: nothing but the shim's own records on stderr.
    for line in stderr.lines() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "a line on stderr that is not the shim's: {line}"
        );
    }
    // tokio's blocking threads come and go with timing (one more or less
    // between two runs); a variable that sized a pool would add hundreds.
    assert!(
        threads <= baseline_threads + 2,
        "the bundle's variables changed the shim's thread count: {threads} ({baseline_threads} without them)"
    );
    assert!(threads < 32, "{threads} threads");
    assert_eq!(init, baseline_init);
    assert_eq!(texts, baseline_texts, "the answers changed");
    // The guest saw none of them (its manifest consents to no variable).
    for text in &texts[1..] {
        assert!(text.contains("is not set"), "{text}");
    }
}

#[test]
fn a_variable_the_user_consented_to_still_reaches_the_guest() {
    let manifest = probe_manifest(ApiVersion::V0_2).environment(&["PROBE_TOKEN"]);
    let mut shim = Shim::probe_with_env(manifest, &[], &[("PROBE_TOKEN", "t0ken")]);
    shim.initialize();
    let reply = shim.tool("env", json!({"name": "PROBE_TOKEN"}));
    assert!(tool_text(&reply).contains("t0ken"), "{}", reply.frame.raw);
    shim.shutdown();
}
