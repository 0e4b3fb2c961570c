//! The format of one cache entry: what its MAC binds, and how it is checked.
//!
//! An entry is `MAGIC || MAC || serialized`, the MAC being keyed BLAKE3
//! under the user's secret key over `DOMAIN || binding || len(serialized)
//! || serialized`. The binding names the exact component bytes (SHA-256),
//! the engine settings that decide whether native code fits (wasmtime's
//! compatibility hash) and this binary's version, each length-delimited
//! after a domain string. So a valid entry for one component, engine or
//! shim version is not valid under another's name, and no other use of the
//! key can produce an entry's MAC.
//!
//! Format 1 used HMAC-SHA256; its entries fail the magic check and are
//! compiled again once. BLAKE3 replaced it because the MAC runs over the
//! whole entry on every warm start (35 MB for CPython: 25 ms of SHA-256).

use super::key::Key;
use sha2::{Digest, Sha256};
use wasmtime::Engine;

const MAGIC: &[u8; 8] = b"OWCACHE\x02";
const DOMAIN: &[u8] = b"octet-wasm compiled-component cache entry, format 2\0";
const MAC_BYTES: usize = 32;

/// How many bytes precede the serialized component in an entry.
pub const HEADER_BYTES: usize = MAGIC.len() + MAC_BYTES;

/// The SHA-256 of a component's bytes, computed once per start: it names
/// the cache entry and is what `--sha256` pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ComponentDigest(pub [u8; 32]);

impl ComponentDigest {
    pub fn of(bytes: &[u8]) -> ComponentDigest {
        ComponentDigest(Sha256::digest(bytes).into())
    }

    pub fn hex(&self) -> String {
        hex(&self.0)
    }

    /// Whether `text` is a SHA-256 written in hex (either case), as
    /// `--sha256` and a policy table's pin must be.
    pub fn is_hex(text: &str) -> bool {
        is_hex_of_len(text, 64)
    }
}

fn is_hex_of_len(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// What an entry is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// SHA-256 of the component bytes.
    pub component: [u8; 32],
    /// SHA-256 of wasmtime's precompile compatibility hash for the engine.
    pub engine: [u8; 32],
    /// This binary's version.
    pub version: &'static str,
}

impl Binding {
    pub fn new(component: &ComponentDigest, engine: &Engine) -> Binding {
        Binding {
            component: component.0,
            engine: engine_fingerprint(engine),
            version: env!("CARGO_PKG_VERSION"),
        }
    }

    /// The entry's file name: the component's digest and a short tag of
    /// the engine and version (so different settings keep separate entries).
    pub fn file_name(&self) -> String {
        let mut tag = Sha256::new();
        tag.update(b"octet-wasm cache entry name\0");
        tag.update(self.engine);
        tag.update(self.version.as_bytes());
        let tag = tag.finalize();
        format!("{}-{}.cwasm", hex(&self.component), hex(&tag[..8]))
    }

    /// Whether `name` has the form [`Binding::file_name`] gives:
    /// `<64 hex>-<16 hex>.cwasm`.
    pub fn is_file_name(name: &str) -> bool {
        name.strip_suffix(".cwasm")
            .and_then(|stem| stem.split_once('-'))
            .is_some_and(|(digest, tag)| ComponentDigest::is_hex(digest) && is_hex_of_len(tag, 16))
    }

    /// The MAC state under `key` for an entry of `len` serialized bytes
    /// for this binding, before those bytes.
    fn mac_start(&self, key: &Key, len: u64) -> blake3::Hasher {
        let mut mac = blake3::Hasher::new_keyed(&key.bytes);
        mac.update(DOMAIN);
        mac.update(&self.component);
        mac.update(&self.engine);
        mac.update(&(self.version.len() as u64).to_le_bytes());
        mac.update(self.version.as_bytes());
        mac.update(&len.to_le_bytes());
        mac
    }

    /// The MAC of `serialized` for this binding under `key`.
    fn mac(&self, key: &Key, serialized: &[u8]) -> blake3::Hash {
        let mut mac = self.mac_start(key, serialized.len() as u64);
        absorb(&mut mac, serialized);
        mac.finalize()
    }
}

/// The bytes to store for `serialized` (from `Component::serialize`).
pub fn seal(key: &Key, binding: &Binding, serialized: &[u8]) -> Vec<u8> {
    let tag = binding.mac(key, serialized);
    let mut out = Vec::with_capacity(HEADER_BYTES + serialized.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(tag.as_bytes());
    out.extend_from_slice(serialized);
    out
}

/// From this size on a part is hashed on both cores (the MAC is on every
/// warm start's critical path); below it the thread pool's start (about
/// 0.3 ms, measured) costs more than the second core saves.
const PARALLEL_FROM: usize = 4 << 20;

/// Feeds part of the serialized component into a MAC.
pub fn absorb(mac: &mut blake3::Hasher, part: &[u8]) {
    if part.len() >= PARALLEL_FROM {
        mac.update_rayon(part);
    } else {
        mac.update(part);
    }
}

/// Checks an entry read in two parts: its `header` (the first
/// [`HEADER_BYTES`]) and the `serialized` component that followed it. The
/// tags are compared in constant time (`blake3::Hash`'s equality).
pub fn verify(
    key: &Key,
    binding: &Binding,
    header: &[u8],
    serialized: &[u8],
) -> Result<(), String> {
    verify_streamed(key, binding, header, serialized.len() as u64, |mac| {
        absorb(mac, serialized);
        Ok(())
    })
}

/// [`verify`] for a serialized component of `len` bytes that `feed` passes
/// to [`absorb`] part by part (so it never has to be in memory whole).
pub fn verify_streamed(
    key: &Key,
    binding: &Binding,
    header: &[u8],
    len: u64,
    feed: impl FnOnce(&mut blake3::Hasher) -> std::io::Result<()>,
) -> Result<(), String> {
    let Some(tag) = header.strip_prefix(MAGIC.as_slice()) else {
        return Err("it is not an octet-wasm cache entry of this format (wrong header)".into());
    };
    let tag: [u8; MAC_BYTES] = tag.try_into().map_err(|_| "it is truncated".to_owned())?;
    let mut mac = binding.mac_start(key, len);
    feed(&mut mac).map_err(|err| format!("cannot read it: {err}"))?;
    if mac.finalize() != blake3::Hash::from_bytes(tag) {
        return Err("its MAC does not match: it was not written by this user's octet-wasm for this component and engine".to_owned());
    }
    Ok(())
}

/// A digest of the engine settings that decide whether compiled code fits.
fn engine_fingerprint(engine: &Engine) -> [u8; 32] {
    use std::hash::Hash;
    let mut hasher = ShaHasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().into()
}

/// Feeds a `Hash` implementation into SHA-256 (the std hashers are not
/// stable across Rust versions, and 64 bits are too few to bind a MAC to).
struct ShaHasher(Sha256);

impl std::hash::Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        unreachable!("only `write` is used")
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serialized component inside `entry`, if its MAC is the one this key
    /// makes for `binding`.
    fn open<'a>(key: &Key, binding: &Binding, entry: &'a [u8]) -> Result<&'a [u8], String> {
        if entry.len() < HEADER_BYTES {
            return Err(if entry.starts_with(MAGIC) {
                "it is truncated".into()
            } else {
                "it is not an octet-wasm cache entry of this format (wrong header)".into()
            });
        }
        let (header, serialized) = entry.split_at(HEADER_BYTES);
        verify(key, binding, header, serialized)?;
        Ok(serialized)
    }

    fn binding(component: &[u8]) -> Binding {
        Binding {
            component: ComponentDigest::of(component).0,
            engine: [1; 32],
            version: "1.2.3",
        }
    }

    #[test]
    fn an_entry_opens_only_with_its_key_and_binding() {
        let key = Key::from_bytes([5; 32]);
        let sealed = seal(&key, &binding(b"a"), b"native code");
        assert_eq!(open(&key, &binding(b"a"), &sealed).unwrap(), b"native code");
        assert!(open(&Key::from_bytes([6; 32]), &binding(b"a"), &sealed).is_err());
        assert!(open(&key, &binding(b"b"), &sealed).is_err());
        let mut other_engine = binding(b"a");
        other_engine.engine = [2; 32];
        assert!(open(&key, &other_engine, &sealed).is_err());
        let mut other_version = binding(b"a");
        other_version.version = "1.2.4";
        assert!(open(&key, &other_version, &sealed).is_err());
        for index in 0..sealed.len() {
            let mut tampered = sealed.clone();
            tampered[index] ^= 1;
            assert!(
                open(&key, &binding(b"a"), &tampered).is_err(),
                "byte {index}"
            );
        }
        assert!(open(&key, &binding(b"a"), &sealed[..sealed.len() - 1]).is_err());
        assert!(open(&key, &binding(b"a"), b"native code").is_err());
    }

    #[test]
    fn format_1_entries_and_short_headers_are_refused() {
        let key = Key::from_bytes([5; 32]);
        let mut old = b"OWCACHE\x01".to_vec();
        old.extend_from_slice(&[0; MAC_BYTES]);
        assert!(
            verify(&key, &binding(b"a"), &old, b"code")
                .unwrap_err()
                .contains("wrong header")
        );
        let sealed = seal(&key, &binding(b"a"), b"code");
        let (header, code) = sealed.split_at(HEADER_BYTES);
        assert!(verify(&key, &binding(b"a"), header, code).is_ok());
        assert!(
            verify(&key, &binding(b"a"), &header[..HEADER_BYTES - 1], code)
                .unwrap_err()
                .contains("truncated")
        );
        assert!(open(&key, &binding(b"a"), &sealed[..HEADER_BYTES - 1]).is_err());
    }

    #[test]
    fn names_separate_components_and_engines() {
        let a = binding(b"a");
        let mut b = binding(b"a");
        b.engine = [2; 32];
        assert!(a.file_name().starts_with(&hex(&a.component)));
        assert_ne!(a.file_name(), b.file_name());
        assert!(a.file_name().ends_with(".cwasm"));
    }

    #[test]
    fn entry_names_are_recognised_and_nothing_else() {
        let name = binding(b"a").file_name();
        assert!(Binding::is_file_name(&name));
        assert!(!Binding::is_file_name("key"));
        assert!(!Binding::is_file_name(&name.replace(".cwasm", ".wasm")));
        assert!(!Binding::is_file_name(&format!(
            "{}-ab.cwasm",
            "0".repeat(64)
        )));
        assert!(!Binding::is_file_name(&format!(
            "{}-{}.cwasm",
            "g".repeat(64),
            "0".repeat(16)
        )));
    }
}
