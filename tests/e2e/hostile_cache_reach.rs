//! Issue 23, class 2: guests that can read and write the compiled cache,
//! by every alias a filesystem offers, never get their own native code run
//! and never cost another extension its cache.
//!
//! The key is in the kernel keyring (host/src/runtime/cache/key.rs), so a
//! guest that reaches the cache directory finds entries but no key; what
//! it plants (entries, a key file) fails its MAC; and the other shims of
//! the same user keep loading from the cache while it runs. Each test has
//! a [`PrivateHome`]: its keyring and cache are the test's alone.

use crate::hostile_cache::{
    ATTACKER_KEY, Benign, assert_benign_answers, compile_with, field, load_source,
    probe_native_code, record, refused_on_start, test_engine,
};
use crate::support::{PrivateHome, Shim, expect_result, probe_manifest, tool_text};
use octet_hostsim::{ApiVersion, InitializeParams};
use octet_wasm::runtime::cache;
use serde_json::json;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `program args` inside `home`'s namespace; panics if it fails.
fn inside(home: &PrivateHome, program: &str, args: &[&OsString]) {
    let wrapper = home.wrapper();
    let status = Command::new(&wrapper[0])
        .args(&wrapper[1..])
        .arg(program)
        .args(args)
        .status()
        .unwrap_or_else(|err| panic!("run {program}: {err}"));
    assert!(
        status.success(),
        "{program} {args:?} failed in the private home"
    );
}

/// Compiles `benign` into `home`'s cache.
fn compile_in(home: &PrivateHome, benign: &Benign) -> PathBuf {
    let (code, records) = compile_with(home.shim_command(), &benign.wasm, &[]);
    assert_eq!(code, Some(0), "compile failed: {records:?}");
    let entry = entry_in(home, benign);
    assert!(entry.is_file(), "{}", entry.display());
    entry
}

fn cache_in(home: &PrivateHome) -> PathBuf {
    home.home().join(".cache/octet-wasm")
}

fn entry_in(home: &PrivateHome, benign: &Benign) -> PathBuf {
    cache_in(home).join(benign.entry_name())
}

/// The probe with a workspace grant, initialized with `workspace` (the
/// path through which its guest sees the home), in `home`.
fn probe_seeing(home: &PrivateHome, filesystem: &str, workspace: &Path) -> Shim {
    let manifest = probe_manifest(ApiVersion::V0_2).filesystem(filesystem);
    let mut shim = Shim::probe_wrapped(manifest, &[], &[], &home.wrapper());
    let params = InitializeParams::new(&shim.manifest, &shim.manifest_path, workspace).to_json();
    expect_result(&shim.initialize_with(params));
    shim
}

/// What the guest gets for `tool` with `args`: `(is_error, text)`.
fn guest(shim: &mut Shim, tool: &str, args: serde_json::Value) -> (bool, String) {
    let reply = shim.tool(tool, args);
    let is_error = expect_result(&reply)["is_error"] == true;
    (is_error, tool_text(&reply))
}

/// A guest reaching the cache through `alias`: it lists the entries, finds
/// no key, writes a key file of its own and (as a guest that knew that key
/// would) a forged entry for `victim`; meanwhile `bystander` still loads
/// from the cache, and afterwards `victim` answers as itself.
fn attack_through(home: &PrivateHome, alias: &Path, victim: &Benign, bystander: &Benign) {
    let what = alias.display().to_string();
    let cache = alias.join(".cache/octet-wasm");
    let mut probe = probe_seeing(home, "workspace", alias);
    let (failed, listing) = guest(&mut probe, "list_dir", json!({"path": cache}));
    assert!(
        !failed,
        "{what}: the guest cannot list the cache: {listing}"
    );
    assert!(listing.contains(&victim.entry_name()), "{what}: {listing}");
    assert!(
        !listing.lines().any(|name| name == "key"),
        "{what}: {listing}"
    );
    let key_text = String::from_utf8(ATTACKER_KEY.to_vec()).unwrap();
    let (failed, text) = guest(
        &mut probe,
        "write_file",
        json!({"path": cache.join("key"), "text": key_text}),
    );
    assert!(!failed, "{what}: {text}");
    let forged = cache::forge_entry(
        &ATTACKER_KEY,
        &test_engine(),
        &victim.bytes,
        probe_native_code(),
    );
    std::fs::write(entry_in(home, victim), forged).unwrap();

    // While the guest runs, another extension keeps its cache.
    let mut other = bystander.start_in(home);
    assert_benign_answers(&mut other);
    assert_eq!(
        load_source(&other),
        "cache",
        "{what}: the bystander lost its cache"
    );
    other.shutdown();

    // The forgery never runs: the victim compiles itself again.
    let warning = refused_on_start(victim.start_in(home));
    assert!(
        field(&warning, "reason").contains("MAC does not match"),
        "{what}: {}",
        warning.text
    );
    probe.shutdown();
}

#[test]
fn guests_reaching_the_cache_by_any_alias_find_no_key_and_their_plants_never_run() {
    let home = PrivateHome::new();
    let victim = Benign::new("reach-victim");
    let bystander = Benign::new("reach-bystander");
    compile_in(&home, &victim);
    compile_in(&home, &bystander);
    let aliases = tempfile::tempdir().unwrap();
    let bind = aliases.path().join("bind");
    let root = aliases.path().join("root");
    let link = aliases.path().join("link");
    std::fs::create_dir(&bind).unwrap();
    std::fs::create_dir(&root).unwrap();
    std::os::unix::fs::symlink(home.home(), &link).unwrap();
    // A bind mount of the home, and the whole tree mounted a second time.
    inside(
        &home,
        "/usr/bin/mount",
        &[&"--bind".into(), &home.home().into(), &bind.clone().into()],
    );
    inside(
        &home,
        "/usr/bin/mount",
        &[&"--rbind".into(), &"/".into(), &root.clone().into()],
    );
    let second = root.join(home.home().strip_prefix("/").unwrap());
    let through_proc = Path::new("/proc/self/root").join(home.home().strip_prefix("/").unwrap());
    for alias in [home.home(), bind, second, link, through_proc] {
        attack_through(&home, &alias, &victim, &bystander);
        // The victim's own entry is back for the next alias.
        compile_in(&home, &victim);
    }
    assert!(
        !cache_in(&home).join("key").exists(),
        "the planted key file was removed, never adopted"
    );
}

#[test]
fn a_hard_link_to_an_entry_written_through_the_link_is_refused() {
    let home = PrivateHome::new();
    let victim = Benign::new("hard-link");
    let entry = compile_in(&home, &victim);
    let workspace = tempfile::tempdir().unwrap();
    let linked = workspace.path().join("entry.cwasm");
    std::fs::hard_link(&entry, &linked).unwrap();
    let mut probe = probe_seeing(&home, "workspace", workspace.path());
    let (failed, text) = guest(
        &mut probe,
        "write_file",
        json!({"path": linked, "text": "native code of the guest's choosing"}),
    );
    assert!(!failed, "{text}");
    let warning = refused_on_start(victim.start_in(&home));
    assert!(!field(&warning, "reason").is_empty());
    probe.shutdown();
}

#[test]
fn an_unrestricted_guest_reaches_no_procfs_and_costs_no_one_their_cache() {
    let home = PrivateHome::new();
    let bystander = Benign::new("unrestricted-bystander");
    compile_in(&home, &bystander);
    let workspace = tempfile::tempdir().unwrap();
    let mut probe = probe_seeing(&home, "unrestricted", workspace.path());
    for path in [
        "/proc/self/mem",
        "/proc/self/environ",
        "/proc/self/maps",
        "/proc/thread-self/mem",
        "/proc/1/environ",
    ] {
        let (failed, text) = guest(&mut probe, "read_file", json!({"path": path}));
        assert!(failed, "the guest read {path}: {text}");
    }
    let (failed, listing) = guest(&mut probe, "list_dir", json!({"path": "/"}));
    if !failed {
        assert!(!listing.lines().any(|name| name == "proc"), "{listing}");
    }
    // The rest of the machine is still there (what the user granted).
    let (failed, text) = guest(&mut probe, "read_file", json!({"path": "/etc/passwd"}));
    assert!(!failed && text.contains("root"), "{text}");
    let (failed, listing) = guest(&mut probe, "list_dir", json!({"path": cache_in(&home)}));
    assert!(
        !failed && listing.contains(&bystander.entry_name()),
        "{listing}"
    );
    let mut other = bystander.start_in(&home);
    assert_benign_answers(&mut other);
    assert_eq!(load_source(&other), "cache");
    other.shutdown();
    probe.shutdown();
}

#[test]
fn procfs_mounted_inside_a_workspace_is_not_reached() {
    let home = PrivateHome::new();
    let workspace = tempfile::tempdir().unwrap();
    let proc_here = workspace.path().join("p");
    std::fs::create_dir(&proc_here).unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "kept").unwrap();
    inside(
        &home,
        "/usr/bin/mount",
        &[
            &"--rbind".into(),
            &"/proc".into(),
            &proc_here.clone().into(),
        ],
    );
    let mut probe = probe_seeing(&home, "workspace", workspace.path());
    let (failed, text) = guest(
        &mut probe,
        "read_file",
        json!({"path": proc_here.join("self/mem")}),
    );
    assert!(
        failed,
        "the guest read procfs through the workspace: {text}"
    );
    let (failed, text) = guest(
        &mut probe,
        "read_file",
        json!({"path": proc_here.join("self/environ")}),
    );
    assert!(failed, "{text}");
    probe.shutdown();
}

/// Drops the cache key from `home`'s keyring, as a reboot would.
fn forget_key(home: &PrivateHome) {
    let script = "import ctypes\n\
        l = ctypes.CDLL(None, use_errno=True)\n\
        ring = l.syscall(250, 22, -1, -2)\n\
        key = l.syscall(250, 10, ring, b'user', b'octet-wasm:compiled-cache-key:v1', 0)\n\
        assert key > 0, 'no key to forget'\n\
        assert l.syscall(250, 21, key) == 0\n";
    inside(home, "/usr/bin/python3", &[&"-c".into(), &script.into()]);
}

#[test]
fn a_lost_key_is_made_again_and_a_planted_key_file_is_never_adopted() {
    let home = PrivateHome::new();
    let victim = Benign::new("lost-key");
    compile_in(&home, &victim);
    forget_key(&home);
    // While there is no key, a guest plants a key file and an entry
    // sealed with it.
    let mut probe = probe_seeing(&home, "workspace", &home.home());
    let key_text = String::from_utf8(ATTACKER_KEY.to_vec()).unwrap();
    let (failed, text) = guest(
        &mut probe,
        "write_file",
        json!({"path": cache_in(&home).join("key"), "text": key_text}),
    );
    assert!(!failed, "{text}");
    probe.shutdown();
    let forged = cache::forge_entry(
        &ATTACKER_KEY,
        &test_engine(),
        &victim.bytes,
        probe_native_code(),
    );
    std::fs::write(entry_in(&home, &victim), forged).unwrap();
    let warning = refused_on_start(victim.start_in(&home));
    assert!(
        field(&warning, "reason").contains("MAC does not match"),
        "{}",
        warning.text
    );
    let mut again = victim.start_in(&home);
    assert_benign_answers(&mut again);
    assert_eq!(load_source(&again), "cache", "the new key's entry loads");
    again.shutdown();
}

#[test]
fn a_group_writable_cache_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let home = PrivateHome::new();
    let victim = Benign::new("group-writable");
    let entry = compile_in(&home, &victim);
    std::fs::set_permissions(cache_in(&home), std::fs::Permissions::from_mode(0o770)).unwrap();
    // Someone in the group replaced the entry: it would not matter, the
    // directory is refused before anything in it is read.
    std::fs::write(&entry, probe_native_code()).unwrap();
    let mut shim = victim.start_in(&home);
    let warning = record(&shim, "compiled-component cache not used");
    assert!(
        field(&warning, "reason").contains("writable by group or others"),
        "{}",
        warning.text
    );
    assert_benign_answers(&mut shim);
    assert_eq!(load_source(&shim), "compiled");
    shim.shutdown();
}
