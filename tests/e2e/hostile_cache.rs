//! The compiled-component cache against an extension that tries to choose
//! which native code the shim runs.
//!
//! Every attack plants a compiled form of the probe (47 tools) where the
//! benign component (a unique copy of hello-world) would be looked up, and
//! proves the benign component is what answers: its `initialize` registers
//! `hello_world` (the probe would fail registration against the manifest)
//! and `hello_world` greets. Planted bytes are checked to be a real,
//! loadable compiled component for the shim's engine, so a refusal is never
//! an accident of a broken plant.
//!
//! The cache of the run's private home (`~/.cache/octet-wasm` of the home
//! the user database names inside `scripts/private-home`) is shared by
//! every test: plants go only under the names of components no other test
//! runs. Tests that change the key or the directory itself use a
//! [`PrivateHome`] of their own; guests that can reach the cache are in
//! `hostile_cache_reach.rs`.

use crate::support::{
    LOG_TIMEOUT, PrivateHome, Shim, cache_dir, component, hello_world_manifest, shim_binary,
    stderr_text, tool_text,
};
use octet_hostsim::StderrLine;
use octet_wasm::runtime::{Limits, cache, engine};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use tempfile::TempDir;
use wasmtime::component::Component;

/// A key the attacker knows.
pub(crate) const ATTACKER_KEY: [u8; 32] = [0x41; 32];

/// An extension directory with a copy of hello-world no other test runs.
pub(crate) struct Benign {
    _dir: TempDir,
    ext: PathBuf,
    pub(crate) wasm: PathBuf,
    pub(crate) bytes: Vec<u8>,
}

impl Benign {
    pub(crate) fn new(tag: &str) -> Benign {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let ext = dir.path().join("extension");
        std::fs::create_dir_all(&ext).unwrap();
        let bytes = unique(&component("hello-world"), tag);
        let wasm = ext.join("hello-world.wasm");
        std::fs::write(&wasm, &bytes).unwrap();
        let toml =
            hello_world_manifest().to_extension_toml("octet-wasm", &["run", "hello-world.wasm"]);
        std::fs::write(ext.join("extension.toml"), toml).unwrap();
        Benign {
            _dir: dir,
            ext,
            wasm,
            bytes,
        }
    }

    /// Where the shim looks for this component's compiled form.
    pub(crate) fn entry(&self) -> PathBuf {
        cache_dir().join(self.entry_name())
    }

    /// The entry's file name in any cache.
    pub(crate) fn entry_name(&self) -> String {
        cache::entry_name(&test_engine(), &self.bytes)
    }

    pub(crate) fn start(&self, args: &[&str], env: &[(&str, &str)]) -> Shim {
        Shim::start_with_env(
            &self.ext,
            "hello-world.wasm",
            hello_world_manifest(),
            args,
            env,
        )
    }

    /// Starts the component in `home`.
    pub(crate) fn start_in(&self, home: &PrivateHome) -> Shim {
        let dirs = tempfile::tempdir().expect("a temporary directory");
        Shim::start_wrapped(
            dirs,
            &self.ext,
            "hello-world.wasm",
            hello_world_manifest(),
            &[],
            &[],
            &home.wrapper(),
        )
    }
}

/// `original` with a custom section appended, so its SHA-256 is unique to
/// this test, process and moment (a custom section changes no behaviour).
pub(crate) fn unique(original: &Path, tag: &str) -> Vec<u8> {
    let mut bytes = std::fs::read(original).unwrap();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let name = b"octet-wasm-test-unique";
    let payload = format!("{tag} {} {nanos}", std::process::id());
    let mut section = leb128(name.len());
    section.extend_from_slice(name);
    section.extend_from_slice(payload.as_bytes());
    bytes.push(0);
    bytes.extend(leb128(section.len()));
    bytes.extend(section);
    bytes
}

fn leb128(mut value: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// The engine `run` builds for a component without limits in its metadata.
pub(crate) fn test_engine() -> wasmtime::Engine {
    engine::build(&Limits::default()).expect("the engine builds")
}

/// The probe compiled for that engine: what an attacker plants.
pub(crate) fn probe_native_code() -> &'static [u8] {
    static CODE: OnceLock<Vec<u8>> = OnceLock::new();
    CODE.get_or_init(|| {
        let engine = test_engine();
        let bytes = std::fs::read(component("probe")).unwrap();
        let code = Component::new(&engine, &bytes)
            .expect("the probe compiles")
            .serialize()
            .expect("the probe serializes");
        // SAFETY: the bytes were serialized by this process for this engine
        // just above; this proves the plant would load if the shim took it.
        let loaded = unsafe { Component::deserialize(&engine, &code) };
        assert!(loaded.is_ok(), "the planted code is not loadable");
        code
    })
}

/// Writes a fake cache at `dir`: the attacker's key and, under the benign
/// component's entry name, the probe sealed with that key (and the bare
/// probe code beside it under the names older versions used).
pub(crate) fn plant_cache(dir: &Path, benign: &Benign) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let key = dir.join("key");
    std::fs::write(&key, ATTACKER_KEY).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let engine = test_engine();
    let name = cache::entry_name(&engine, &benign.bytes);
    let forged = cache::forge_entry(&ATTACKER_KEY, &engine, &benign.bytes, probe_native_code());
    std::fs::write(dir.join(&name), forged).unwrap();
    let digest = cache::sha256_hex(&benign.bytes);
    std::fs::write(dir.join(format!("{digest}.cwasm")), probe_native_code()).unwrap();
}

/// Initializes and proves the benign component answers.
pub(crate) fn assert_benign_answers(shim: &mut Shim) {
    let params = shim.init_params();
    let reply = shim.initialize_with(params);
    let result = reply.frame.outcome().and_then(|o| o.as_ref().ok()).cloned();
    let Some(result) = result else {
        panic!(
            "initialize failed (the planted probe ran?): {}\nstderr:\n{}",
            reply.frame.raw,
            stderr_text(shim)
        );
    };
    assert_eq!(result["tools"][0]["name"], "hello_world", "{result}");
    let reply = shim.tool("hello_world", json!({"name": "Ada"}));
    assert_eq!(tool_text(&reply), "Hello, Ada!", "{}", reply.frame.raw);
}

/// The first stderr record whose message starts with `prefix`.
pub(crate) fn record(shim: &Shim, prefix: &str) -> StderrLine {
    shim.stderr()
        .wait_for(LOG_TIMEOUT, |line| {
            line.message().is_some_and(|m| m.starts_with(prefix))
        })
        .unwrap_or_else(|| panic!("no `{prefix}` record; stderr:\n{}", stderr_text(shim)))
}

pub(crate) fn field(line: &StderrLine, name: &str) -> String {
    match line.field(name) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => panic!("no {name} in {}", line.text),
    }
}

/// Where the benign component came from this start: `cache` or `compiled`.
pub(crate) fn load_source(shim: &Shim) -> String {
    field(&record(shim, "component loaded"), "source")
}

/// Starts the benign component over an entry that must fail its checks,
/// and returns the warning that says why, once the benign component has
/// answered from a fresh compilation.
pub(crate) fn start_over_a_refused_entry(benign: &Benign) -> StderrLine {
    refused_on_start(benign.start(&[], &[]))
}

/// For a benign component just started over an entry that must fail its
/// checks: the warning that says why, once it has answered from a fresh
/// compilation (and been shut down).
pub(crate) fn refused_on_start(mut shim: Shim) -> StderrLine {
    let warning = record(
        &shim,
        "ignoring a compiled-cache entry that fails its checks",
    );
    assert_benign_answers(&mut shim);
    assert_eq!(load_source(&shim), "compiled");
    shim.shutdown();
    warning
}

/// `octet-wasm compile PATH` (with `env`): its exit code and stderr records.
pub(crate) fn compile(path: &Path, env: &[(&str, &str)]) -> (Option<i32>, Vec<Value>) {
    compile_with(Command::new(shim_binary()), path, env)
}

/// `compile PATH` through `command` (the shim, or the shim in a
/// [`PrivateHome`]).
pub(crate) fn compile_with(
    mut command: Command,
    path: &Path,
    env: &[(&str, &str)],
) -> (Option<i32>, Vec<Value>) {
    let output = command
        .arg("compile")
        .arg(path)
        .envs(env.iter().copied())
        .output()
        .expect("octet-wasm compile starts");
    let records = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    (output.status.code(), records)
}

/// Compiles `benign` into the real cache and checks the entry is where
/// [`Benign::entry`] says (the name the shim computes).
pub(crate) fn compile_into_cache(benign: &Benign) -> PathBuf {
    let (code, records) = compile(&benign.wasm, &[]);
    assert_eq!(code, Some(0), "compile failed: {records:?}");
    let entry = records
        .iter()
        .find(|r| r["message"] == "component compiled into the cache")
        .and_then(|r| r["entry"].as_str())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("compile logged no entry: {records:?}"));
    assert_eq!(entry, benign.entry(), "the entry name the test computes");
    entry
}

// ----- locations the extension chooses --------------------------------

#[test]
fn cache_dir_flags_in_the_manifest_args_are_ignored() {
    for form in ["relative", "absolute", "inline"] {
        let benign = Benign::new(form);
        let planted = benign.ext.join("cache");
        plant_cache(&planted, &benign);
        // The workspace is `<tmp>/<dir>/workspace` (see support.rs), so
        // `../..` from it is the temporary directory both live in.
        let relative = Path::new("../..")
            .join(planted.strip_prefix(std::env::temp_dir()).unwrap())
            .to_string_lossy()
            .into_owned();
        let absolute = planted.to_string_lossy().into_owned();
        let inline = format!("--cache-dir={absolute}");
        let args: Vec<&str> = match form {
            "relative" => vec!["--cache-dir", &relative],
            "absolute" => vec!["--cache-dir", &absolute],
            _ => vec![&inline],
        };
        let mut shim = benign.start(&args, &[]);
        let warning = record(&shim, "--cache-dir is no longer honoured");
        assert_eq!(field(&warning, "level"), "warning");
        assert_eq!(field(&warning, "cache"), cache_dir().display().to_string());
        assert_benign_answers(&mut shim);
        assert_eq!(
            field(&record(&shim, "component loaded"), "cache"),
            cache_dir().display().to_string()
        );
        shim.shutdown();
    }
}

#[test]
fn cache_locations_in_the_manifest_env_are_ignored() {
    for variable in ["OCTET_WASM_CACHE_DIR", "XDG_CACHE_HOME", "HOME"] {
        let benign = Benign::new(variable);
        let value = benign.ext.join("planted");
        let planted = match variable {
            "OCTET_WASM_CACHE_DIR" => value.clone(),
            "XDG_CACHE_HOME" => value.join("octet-wasm"),
            _ => value.join(".cache").join("octet-wasm"),
        };
        plant_cache(&planted, &benign);
        let value = value.to_string_lossy().into_owned();
        let mut shim = benign.start(&[], &[(variable, &value)]);
        if variable == "OCTET_WASM_CACHE_DIR" {
            let warning = record(&shim, "OCTET_WASM_CACHE_DIR is ignored");
            assert_eq!(field(&warning, "cache"), cache_dir().display().to_string());
        }
        assert_benign_answers(&mut shim);
        assert_eq!(
            field(&record(&shim, "component loaded"), "cache"),
            cache_dir().display().to_string(),
            "{variable}"
        );
        shim.shutdown();
    }
}

#[test]
fn a_cache_inside_the_extension_directory_runs_nothing_the_bundle_planted() {
    // An extension directory that contains the user's cache (here: the
    // home itself) can ship a key file and entries of its author's making.
    // The key is in no file, so the cache is used and the plant fails its
    // MAC.
    let home = PrivateHome::new();
    let benign = Benign::new("extension-dir");
    plant_cache(&home.home().join(".cache/octet-wasm"), &benign);
    let wasm = benign.wasm.to_string_lossy().into_owned();
    let dirs = tempfile::tempdir().unwrap();
    let shim = Shim::start_wrapped(
        dirs,
        &home.home(),
        &wasm,
        hello_world_manifest(),
        &[],
        &[],
        &home.wrapper(),
    );
    let warning = refused_on_start(shim);
    assert!(
        field(&warning, "reason").contains("MAC does not match"),
        "{}",
        warning.text
    );
    assert!(
        !home.home().join(".cache/octet-wasm/key").exists(),
        "the planted key file was removed"
    );
    let mut again = benign.start_in(&home);
    assert_benign_answers(&mut again);
    assert_eq!(load_source(&again), "cache", "the shim's own entry loads");
    again.shutdown();
}

// ----- entries in the real cache ----------------------------------------

#[test]
fn an_entry_without_a_valid_mac_is_ignored_and_replaced() {
    let benign = Benign::new("no-mac");
    let entry = benign.entry();
    std::fs::create_dir_all(cache_dir()).unwrap();
    std::fs::write(&entry, probe_native_code()).unwrap();
    let warning = start_over_a_refused_entry(&benign);
    assert_eq!(field(&warning, "entry"), entry.display().to_string());
    // The shim replaced it with its own, which the next start uses.
    let mut shim = benign.start(&[], &[]);
    assert_benign_answers(&mut shim);
    assert_eq!(load_source(&shim), "cache");
    shim.shutdown();
    assert_eq!(compile_into_cache(&benign), entry);
}

#[test]
fn a_tampered_entry_or_another_components_entry_is_ignored() {
    let benign = Benign::new("tampered");
    let entry = compile_into_cache(&benign);
    let genuine = std::fs::read(&entry).unwrap();
    let mut tampered = genuine.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 0x01;
    // A valid entry of another component (a unique probe copy) under this
    // component's name.
    let dir = tempfile::tempdir().unwrap();
    let probe = dir.path().join("probe.wasm");
    std::fs::write(&probe, unique(&component("probe"), "tampered")).unwrap();
    let (code, records) = compile(&probe, &[]);
    assert_eq!(code, Some(0), "{records:?}");
    let probe_entry = records
        .iter()
        .find_map(|r| r["entry"].as_str())
        .map(PathBuf::from)
        .unwrap();
    let other = std::fs::read(&probe_entry).unwrap();
    for (what, bytes) in [("a flipped byte", tampered), ("the probe's entry", other)] {
        std::fs::write(&entry, &bytes).unwrap();
        let warning = start_over_a_refused_entry(&benign);
        assert!(
            field(&warning, "reason").contains("MAC does not match"),
            "{what}: {}",
            warning.text
        );
    }
    let _ = std::fs::remove_file(probe_entry);
}

#[test]
fn a_symlinked_entry_is_not_followed() {
    let benign = Benign::new("symlink");
    let entry = compile_into_cache(&benign);
    // Even the genuine entry is refused through a link.
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("entry.cwasm");
    std::fs::rename(&entry, &target).unwrap();
    std::os::unix::fs::symlink(&target, &entry).unwrap();
    let warning = start_over_a_refused_entry(&benign);
    assert!(
        field(&warning, "reason").contains("symbolic link"),
        "{}",
        warning.text
    );
    let meta = std::fs::symlink_metadata(&entry).unwrap();
    assert!(meta.is_file(), "the link was replaced by a real entry");
    assert!(target.is_file(), "the link's target was left alone");
}

// ----- author tools ---------------------------------------------------

#[test]
fn check_reports_cache_dir_as_ignored() {
    let benign = Benign::new("check");
    let toml = hello_world_manifest().to_extension_toml(
        "octet-wasm",
        &["run", "hello-world.wasm", "--cache-dir", "planted"],
    );
    let manifest = benign.ext.join("extension.toml");
    std::fs::write(&manifest, toml).unwrap();
    let output = Command::new(shim_binary())
        .arg("check")
        .arg(&manifest)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        report.contains("--cache-dir \"planted\" is ignored"),
        "{report}"
    );
    assert!(report.contains("0 problem(s)"), "{report}");
}

#[test]
fn compile_refuses_an_unusable_cache_with_a_reason() {
    let home = PrivateHome::new();
    let benign = Benign::new("compile-refused");
    let cache = home.home().join(".cache/octet-wasm");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o770)).unwrap();
    let (code, records) = compile_with(home.shim_command(), &benign.wasm, &[]);
    assert_eq!(code, Some(2), "{records:?}");
    let message = records
        .iter()
        .filter_map(|r| r["message"].as_str())
        .find(|m| m.starts_with("cannot use the compiled-component cache"))
        .unwrap_or_else(|| panic!("{records:?}"));
    assert!(message.contains("writable by group or others"), "{message}");
    assert!(!cache.join(benign.entry_name()).exists());
    let (code, records) = compile(&benign.wasm, &[("OCTET_WASM_CACHE_DIR", "/tmp")]);
    assert_eq!(code, Some(0), "{records:?}");
    assert!(
        records.iter().any(|r| r["message"]
            == "OCTET_WASM_CACHE_DIR is ignored; the compiled cache is always the user's own"),
        "{records:?}"
    );
    assert!(benign.entry().is_file());
}
