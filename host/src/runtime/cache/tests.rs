//! The cache against a temporary home: what it loads, what it refuses.

use super::*;
use std::os::fd::AsRawFd;
use std::os::unix::fs::PermissionsExt;

/// The smallest component: a header and no sections.
const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

fn empty() -> ComponentDigest {
    ComponentDigest::of(EMPTY_COMPONENT)
}

fn home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    home
}

fn open(home: &Path) -> Result<Cache, String> {
    Cache::open_below(home, Path::new(CACHE_BELOW_HOME), &Reach::default())
}

fn engine() -> Engine {
    crate::runtime::engine::build(&crate::runtime::Limits::default()).unwrap()
}

fn source(engine: &Engine, cache: &Cache) -> LoadSource {
    load_or_compile(
        engine,
        EMPTY_COMPONENT,
        &empty(),
        Path::new("empty.wasm"),
        Some(cache),
    )
    .unwrap()
    .1
}

#[test]
fn a_stored_entry_loads_and_a_tampered_one_is_replaced() {
    let home = home();
    let cache = open(home.path()).unwrap();
    let engine = engine();
    assert_eq!(source(&engine, &cache), LoadSource::Compiled);
    assert!(cache.holds(&engine, &empty()));
    assert_eq!(source(&engine, &cache), LoadSource::Cache);
    let entry = cache.entry(&engine, &empty());
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&entry, &bytes).unwrap();
    assert!(!cache.holds(&engine, &empty()));
    assert_eq!(source(&engine, &cache), LoadSource::Compiled);
    assert_eq!(source(&engine, &cache), LoadSource::Cache, "rewritten");
}

#[test]
fn an_entry_made_under_another_key_is_not_loaded() {
    let home = home();
    let engine = engine();
    let cache = open(home.path()).unwrap();
    let serialized = Component::new(&engine, EMPTY_COMPONENT)
        .unwrap()
        .serialize()
        .unwrap();
    let forged = forge_entry(&[3; 32], &engine, EMPTY_COMPONENT, &serialized);
    std::fs::write(cache.entry(&engine, &empty()), forged).unwrap();
    assert!(!cache.holds(&engine, &empty()));
    // The same bytes under this cache's own key are accepted.
    let genuine = forge_entry(&cache.inner.key.0, &engine, EMPTY_COMPONENT, &serialized);
    std::fs::write(cache.entry(&engine, &empty()), genuine).unwrap();
    assert_eq!(source(&engine, &cache), LoadSource::Cache);
}

#[test]
fn a_cache_inside_the_extensions_directories_is_refused() {
    let home = home();
    for (what, root) in [
        ("workspace", home.path().to_path_buf()),
        ("extension directory", home.path().join(".cache")),
        ("scratch directory", home.path().join(CACHE_BELOW_HOME)),
    ] {
        let reach = Reach(vec![(what, root)]);
        let err = Cache::open_below(home.path(), Path::new(CACHE_BELOW_HOME), &reach).unwrap_err();
        assert!(err.contains(&format!("inside the {what}")), "{err}");
    }
    let elsewhere = Reach(vec![("workspace", home.path().join("project"))]);
    assert!(Cache::open_below(home.path(), Path::new(CACHE_BELOW_HOME), &elsewhere).is_ok());
}

#[test]
fn a_shared_cache_directory_is_refused() {
    let home = home();
    let dir = home.path().join(CACHE_BELOW_HOME);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
    let err = open(home.path()).unwrap_err();
    assert!(err.contains("writable by group or others"), "{err}");
    assert!(
        !dir.join(KEY_FILE).exists(),
        "no key is made in a shared directory"
    );
}

#[test]
fn no_key_is_used_while_a_guest_can_reach_the_cache() {
    let home = home();
    let first = open(home.path()).unwrap();
    let holder = private::open_home(home.path()).unwrap();
    let lock = {
        // SAFETY: all-zero is a valid flock.
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = libc::F_RDLCK as libc::c_short;
        lock.l_len = 1;
        lock
    };
    // SAFETY: `holder` is open and `lock` valid.
    assert_eq!(
        unsafe { libc::fcntl(holder.as_raw_fd(), libc::F_OFD_SETLK, &lock) },
        0
    );
    let err = open(home.path()).unwrap_err();
    assert!(err.contains("running octet-wasm guest"), "{err}");
    drop(holder);
    let second = open(home.path()).unwrap();
    assert_eq!(first.inner.key.0, second.inner.key.0);
}

#[test]
fn a_retired_cache_is_neither_read_nor_written() {
    let home = home();
    let engine = engine();
    let cache = open(home.path()).unwrap();
    assert_eq!(source(&engine, &cache), LoadSource::Compiled);
    cache.retire();
    assert_eq!(source(&engine, &cache), LoadSource::Compiled);
    assert!(!cache.holds(&engine, &empty()));
    let component = Component::new(&engine, EMPTY_COMPONENT).unwrap();
    assert!(cache.store(&engine, &empty(), &component).is_err());
}

#[test]
fn hashes_hex() {
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

#[test]
fn the_heap_fallback_reads_the_component_after_the_header_and_checks_the_same_mac() {
    use std::io::{Seek, SeekFrom, Write};
    let key = Key([9; 32]);
    let engine = engine();
    let binding = Binding::new(&empty(), &engine);
    let sealed = entry::seal(&key, &binding, b"serialized code");
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(&sealed).unwrap();
    // Wherever a failed copy left the position.
    file.seek(SeekFrom::End(0)).unwrap();
    let bytes = read_rest(&file, 1 << 20).unwrap();
    assert_eq!(bytes, b"serialized code");
    let header: [u8; HEADER_BYTES] = sealed[..HEADER_BYTES].try_into().unwrap();
    let heap = Entry {
        file: file.try_clone().unwrap(),
        header,
        code: Code::Heap(bytes),
    };
    assert!(heap.verify(&key, &binding).is_ok());
    assert!(heap.verify(&Key([8; 32]), &binding).is_err());
    // The sealed copy of the same entry verifies alike.
    let copy = Sealed::copy_from(&file, HEADER_BYTES as u64, 1 << 20).unwrap();
    let sealed_entry = Entry {
        file: file.try_clone().unwrap(),
        header,
        code: Code::Sealed(copy),
    };
    assert!(sealed_entry.verify(&key, &binding).is_ok());
    assert!(read_rest(&file, 3).is_err(), "longer than the limit");
}
