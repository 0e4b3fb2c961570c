//! The compiled-component cache: a second start of the same component loads
//! it from the cache and says so on stderr, a load marks its entry used, and
//! a store trims what can never load again.

use crate::hostile_cache::{
    Benign, assert_benign_answers, compile_into_cache, load_source as benign_source, test_engine,
    unique,
};
use crate::support::{LOG_TIMEOUT, Shim, cache_dir, component, stderr_text};
use octet_hostsim::ApiVersion;
use octet_wasm::runtime::cache;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Starts the probe, initializes it and returns the `source` of its
/// `component loaded` record.
fn load_source() -> String {
    let mut shim = Shim::probe(ApiVersion::V0_2);
    shim.initialize();
    let record = shim
        .stderr()
        .wait_for_message(LOG_TIMEOUT, "component loaded")
        .unwrap_or_else(|| {
            panic!(
                "no `component loaded` record; stderr:\n{}",
                stderr_text(&shim)
            )
        });
    let source = record
        .field("source")
        .and_then(|s| s.as_str())
        .map(str::to_owned);
    shim.shutdown();
    match source {
        Some(source) if source == "cache" || source == "compiled" => source,
        other => panic!("`component loaded` source is {other:?}: {}", record.text),
    }
}

#[test]
fn second_start_loads_from_the_cache() {
    load_source();
    assert_eq!(load_source(), "cache");
}

// ----- staying bounded ----------------------------------------------------

/// The cache file `name` with `bytes`, last modified at `when`.
fn plant(name: &str, bytes: &[u8], when: SystemTime) -> PathBuf {
    let path = cache_dir().join(name);
    std::fs::write(&path, bytes).unwrap();
    set_modified(&path, when);
    path
}

fn set_modified(path: &Path, when: SystemTime) {
    std::fs::File::open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

/// When the cache key was made: its birth time, stored after the 32 key
/// bytes in the kernel keyring (host/src/runtime/cache/key.rs), which the
/// tests share with their shims inside the run's private home.
fn key_made() -> SystemTime {
    let ring = keyctl(22, -1, -2, 0, 0);
    assert!(
        ring > 0,
        "no persistent keyring: {}",
        std::io::Error::last_os_error()
    );
    let description = c"octet-wasm:compiled-cache-key:v1";
    // SAFETY: KEYCTL_SEARCH with NUL-terminated strings that outlive the call.
    let key = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            10 as libc::c_long,
            ring,
            c"user".as_ptr(),
            description.as_ptr(),
            0 as libc::c_long,
        )
    };
    assert!(key > 0, "no cache key in the keyring");
    let mut payload = [0u8; 40];
    // SAFETY: KEYCTL_READ into a buffer valid for its length.
    let len = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            11 as libc::c_long,
            key,
            payload.as_mut_ptr(),
            payload.len(),
        )
    };
    assert_eq!(len, 40, "the key's payload");
    let secs = u64::from_le_bytes(payload[32..].try_into().unwrap());
    SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
}

/// `keyctl(op, a, b, c, d)` with integer arguments only.
fn keyctl(op: i64, a: i64, b: i64, c: i64, d: i64) -> i64 {
    // SAFETY: the operations used here take no pointers.
    unsafe { libc::syscall(libc::SYS_keyctl, op, a, b, c, d) }
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

/// An entry name for a component nobody runs (a unique copy of the probe).
fn unused_entry_name(tag: &str) -> String {
    cache::entry_name(&test_engine(), &unique(&component("probe"), tag))
}

#[test]
fn a_store_removes_entries_of_an_earlier_key_and_dead_writers_leftovers() {
    // A compile first, so the cache and its key exist.
    compile_into_cache(&Benign::new("trim-key"));
    let key_made = key_made();
    let hour = Duration::from_secs(3600);
    let dead = plant(
        &unused_entry_name("trim-dead"),
        b"sealed under an old key",
        key_made - hour,
    );
    let live = plant(
        &unused_entry_name("trim-live"),
        b"recent",
        SystemTime::now(),
    );
    let pid = std::process::id();
    let old_temp = plant(
        &format!(".tmp-{pid}-0-0"),
        b"a writer that died",
        SystemTime::now() - 2 * hour,
    );
    let young_temp = plant(
        &format!(".tmp-{pid}-1-0"),
        b"a write in progress",
        SystemTime::now(),
    );

    // A component the cache does not hold yet: compiled, stored, trimmed.
    let benign = Benign::new("trim-store");
    let mut shim = benign.start(&[], &[]);
    assert_benign_answers(&mut shim);
    assert_eq!(benign_source(&shim), "compiled");
    shim.shutdown();

    assert!(benign.entry().is_file(), "the stored entry stays");
    assert!(!dead.exists(), "an entry older than the key is removed");
    assert!(!old_temp.exists(), "an hour-old temporary file is removed");
    assert!(live.exists(), "an entry of the current key stays");
    assert!(young_temp.exists(), "a temporary file being written stays");
    for path in [live, young_temp, benign.entry()] {
        let _ = std::fs::remove_file(path);
    }
}

#[test]
fn a_load_from_the_cache_marks_its_entry_used() {
    let benign = Benign::new("trim-touch");
    let entry = compile_into_cache(&benign);
    let key_made = key_made();
    // As if last used when the key was made (not older: that would be dead).
    set_modified(&entry, key_made);
    let before = SystemTime::now();
    let mut shim = benign.start(&[], &[]);
    assert_benign_answers(&mut shim);
    assert_eq!(benign_source(&shim), "cache");
    shim.shutdown();
    let used = modified(&entry);
    assert_ne!(used, key_made, "the load set the entry's mtime");
    // The kernel stamps with its coarse clock, a tick behind `now`.
    assert!(
        used + Duration::from_secs(1) >= before,
        "{used:?} < {before:?}"
    );
    let _ = std::fs::remove_file(entry);
}
