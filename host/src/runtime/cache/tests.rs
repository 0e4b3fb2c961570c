//! The cache against a temporary home: what it loads, what it refuses.

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// A keyring of this test process alone: unit tests never touch the
/// user's keyrings (each test gets its own, so none sees another's key).
fn keyring() -> Keyring {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Keyring::private_for_tests(&format!("octet-wasm-cache-test-{n}"))
}

fn open_with(home: &Path, ring: Keyring) -> Result<Cache, String> {
    Cache::open_below(home, Path::new(CACHE_BELOW_HOME), ring)
}

fn open(home: &Path) -> Result<Cache, String> {
    open_with(home, keyring())
}

fn engine() -> Engine {
    crate::runtime::engine::build(&crate::runtime::limits::Limits::default()).unwrap()
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
    let genuine = forge_entry(
        &cache.inner.key.bytes,
        &engine,
        EMPTY_COMPONENT,
        &serialized,
    );
    std::fs::write(cache.entry(&engine, &empty()), genuine).unwrap();
    assert_eq!(source(&engine, &cache), LoadSource::Cache);
}

#[test]
fn no_file_holds_the_key_and_an_old_key_file_is_removed_unread() {
    let home = home();
    let dir = home.path().join(CACHE_BELOW_HOME);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // A key a guest planted (or read) while keys lived in files.
    let planted = [0x41u8; 32];
    std::fs::write(dir.join(OLD_KEY_FILE), planted).unwrap();
    let ring = keyring();
    let cache = open_with(home.path(), ring).unwrap();
    assert_ne!(cache.inner.key.bytes, planted);
    assert!(
        !dir.join(OLD_KEY_FILE).exists(),
        "the old key file is removed"
    );
    let engine = engine();
    assert_eq!(source(&engine, &cache), LoadSource::Compiled);
    for file in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(file.unwrap().path()).unwrap();
        assert!(
            !bytes
                .windows(32)
                .any(|window| window == cache.inner.key.bytes),
            "no file in the cache holds the key"
        );
    }
    // The same keyring gives the same key: the entry loads.
    let again = open_with(home.path(), ring).unwrap();
    assert_eq!(again.inner.key.bytes, cache.inner.key.bytes);
    assert_eq!(source(&engine, &again), LoadSource::Cache);
}

#[test]
fn a_cache_inside_a_directory_a_guest_can_write_is_still_used() {
    // The key is in no file, so where the directory lies grants nothing:
    // entries are trusted by their MAC alone.
    let home = home();
    let engine = engine();
    let cache = open(home.path()).unwrap();
    assert_eq!(source(&engine, &cache), LoadSource::Compiled);
    assert_eq!(source(&engine, &cache), LoadSource::Cache);
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
        !dir.join(OLD_KEY_FILE).exists(),
        "nothing is written in a shared directory"
    );
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
    let key = Key::from_bytes([9; 32]);
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
    assert!(heap.verify(&Key::from_bytes([8; 32]), &binding).is_err());
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
