//! The per-user secret that authenticates cache entries, held by the
//! kernel.
//!
//! A cache entry is native code wasmtime runs without checks, so a file in
//! the cache is trusted only when it carries a MAC made with this key. The
//! key is in no file: it lives in the kernel's keyring of this user (the
//! persistent keyring, which outlives a logout by days, else the user
//! keyring), where only a process of this user making the `keyctl` system
//! call can read it. A WebAssembly guest makes no system calls: it reaches
//! the host only through the WASI and octet imports the shim implements,
//! and none of them touches a keyring. So no filesystem grant, reached
//! through any alias of any mount, shows a guest the key, and no file a
//! guest writes (a `key` beside the entries, a planted directory) is ever
//! read as one. That holds by construction, not by comparing paths.
//!
//! The payload is the 32 key bytes and the time the key was made (8 bytes,
//! little-endian seconds since the epoch): the trim removes entries older
//! than their key, which can never pass its MAC. A key that is lost (a
//! reboot, the persistent keyring expiring) costs one compile per
//! component: the next start makes a new key, and entries sealed under the
//! old one fail their MAC and are replaced.

use std::io;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub const KEY_BYTES: usize = 32;
const PAYLOAD_BYTES: usize = KEY_BYTES + 8;

/// The key's name in the keyring; a new format gets a new name.
const DESCRIPTION: &str = "octet-wasm:compiled-cache-key:v1";

/// The file the key lived in before it moved to the kernel: it is removed,
/// never read (`Cache::open_below`).
pub const OLD_KEY_FILE: &str = "key";

const KEY_SPEC_PROCESS_KEYRING: i32 = -2;
const KEY_SPEC_USER_KEYRING: i32 = -4;
const KEYCTL_SETPERM: libc::c_long = 5;
const KEYCTL_SEARCH: libc::c_long = 10;
const KEYCTL_READ: libc::c_long = 11;
const KEYCTL_GET_PERSISTENT: libc::c_long = 22;
/// Possessor: everything; this user's other processes: view, read, write,
/// search (a shim starting later must find and read the key it did not
/// make; a process of this user could read the user's files anyway).
const PERMISSIONS: u32 = 0x3f00_0000 | 0x000f_0000;

/// The secret, kept out of `Debug` output.
#[derive(Clone)]
pub struct Key {
    pub(super) bytes: [u8; KEY_BYTES],
    /// When the key was made: entries modified before are dead.
    pub(super) made: SystemTime,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

impl Key {
    /// A key of known bytes: what tests and a thief of the key hold.
    pub(super) fn from_bytes(bytes: [u8; KEY_BYTES]) -> Key {
        Key {
            bytes,
            made: SystemTime::now(),
        }
    }

    fn payload(&self) -> [u8; PAYLOAD_BYTES] {
        let mut payload = [0u8; PAYLOAD_BYTES];
        payload[..KEY_BYTES].copy_from_slice(&self.bytes);
        let secs = self
            .made
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        payload[KEY_BYTES..].copy_from_slice(&secs.to_le_bytes());
        payload
    }

    fn from_payload(payload: &[u8]) -> Option<Key> {
        let payload: &[u8; PAYLOAD_BYTES] = payload.try_into().ok()?;
        let bytes: [u8; KEY_BYTES] = payload[..KEY_BYTES].try_into().ok()?;
        let secs = u64::from_le_bytes(payload[KEY_BYTES..].try_into().ok()?);
        (bytes != [0; KEY_BYTES]).then(|| Key {
            bytes,
            made: UNIX_EPOCH + Duration::from_secs(secs),
        })
    }
}

/// A kernel keyring, by serial number.
#[derive(Debug, Clone, Copy)]
pub struct Keyring(i32);

impl Keyring {
    /// This user's persistent keyring, linked into this process's own
    /// keyring so that the process possesses it; where the kernel has no
    /// persistent keyrings, the user keyring.
    pub fn users() -> io::Result<Keyring> {
        // SAFETY: KEYCTL_GET_PERSISTENT takes a uid (-1: the caller's) and
        // a keyring serial; no pointers.
        let id = unsafe {
            libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_GET_PERSISTENT,
                -1 as libc::c_long,
                KEY_SPEC_PROCESS_KEYRING as libc::c_long,
            )
        };
        if id >= 0 {
            return Ok(Keyring(id as i32));
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::ENOSYS) => Ok(Keyring(KEY_SPEC_USER_KEYRING)),
            _ => Err(err),
        }
    }

    /// A new keyring of this process alone (it dies with the process):
    /// unit tests never touch the user's keyrings.
    #[cfg(test)]
    pub fn private_for_tests(name: &str) -> Keyring {
        let id = add_key("keyring", name, &[], KEY_SPEC_PROCESS_KEYRING)
            .expect("a process keyring for the test");
        Keyring(id)
    }

    /// The serial of the key named `description` in this keyring, if any.
    fn search(self, description: &str) -> io::Result<Option<i32>> {
        let kind = c"user";
        let description = std::ffi::CString::new(description).expect("no NUL in the name");
        // SAFETY: both strings are NUL-terminated and outlive the call; a
        // destination of 0 links the key nowhere.
        let id = unsafe {
            libc::syscall(
                libc::SYS_keyctl,
                KEYCTL_SEARCH,
                self.0 as libc::c_long,
                kind.as_ptr(),
                description.as_ptr(),
                0 as libc::c_long,
            )
        };
        if id >= 0 {
            return Ok(Some(id as i32));
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::ENOKEY | libc::EKEYEXPIRED | libc::EKEYREVOKED) => Ok(None),
            _ => Err(err),
        }
    }
}

/// `add_key(2)`: adds (or, for a name the keyring holds, updates) a key.
fn add_key(kind: &str, description: &str, payload: &[u8], ring: i32) -> io::Result<i32> {
    let kind = std::ffi::CString::new(kind).expect("no NUL in the type");
    let description = std::ffi::CString::new(description).expect("no NUL in the name");
    let data = if payload.is_empty() {
        std::ptr::null()
    } else {
        payload.as_ptr()
    };
    // SAFETY: the strings are NUL-terminated, `data` is valid for
    // `payload.len()` bytes (or null with length 0), and all outlive the
    // call.
    let id = unsafe {
        libc::syscall(
            libc::SYS_add_key,
            kind.as_ptr(),
            description.as_ptr(),
            data,
            payload.len(),
            ring as libc::c_long,
        )
    };
    if id < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(id as i32)
}

/// The payload of the key `id` (at most `PAYLOAD_BYTES * 2` of it).
fn read(id: i32) -> io::Result<Vec<u8>> {
    let mut buffer = vec![0u8; PAYLOAD_BYTES * 2];
    // SAFETY: `buffer` is valid for writes of its length.
    let len = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_READ,
            id as libc::c_long,
            buffer.as_mut_ptr(),
            buffer.len(),
        )
    };
    if len < 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate((len as usize).min(buffer.len()));
    Ok(buffer)
}

fn set_permissions(id: i32) -> io::Result<()> {
    // SAFETY: no pointers.
    let done = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_SETPERM,
            id as libc::c_long,
            PERMISSIONS as libc::c_long,
        )
    };
    if done < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The key in `ring`, or a new one made there. Two shims making one at
/// once both end with the one the kernel kept (each reads it back after
/// adding); a shim that read its own just before the other replaced it
/// seals its entries under a dead key, which costs one more compile later,
/// never a wrong load.
pub fn load_or_create(ring: Keyring) -> Result<Key, String> {
    let in_ring = |what: &str, err: io::Error| {
        format!("cannot {what} the cache key in the kernel keyring: {err}")
    };
    if let Some(id) = ring
        .search(DESCRIPTION)
        .map_err(|err| in_ring("look up", err))?
    {
        match read(id) {
            Ok(payload) => {
                if let Some(key) = Key::from_payload(&payload) {
                    return Ok(key);
                }
                crate::log!(crate::log::Level::Warning, "replacing a malformed compiled-cache key; every cached component will be compiled again",
                    "bytes" => payload.len());
            }
            Err(err)
                if matches!(
                    err.raw_os_error(),
                    Some(libc::EKEYEXPIRED | libc::EKEYREVOKED | libc::ENOKEY)
                ) => {}
            Err(err) => return Err(in_ring("read", err)),
        }
    }
    let mut bytes = [0u8; KEY_BYTES];
    random(&mut bytes).map_err(|err| format!("cannot make a cache key: {err}"))?;
    let key = Key {
        bytes,
        made: SystemTime::now(),
    };
    let id = add_key("user", DESCRIPTION, &key.payload(), ring.0)
        .map_err(|err| in_ring("store", err))?;
    set_permissions(id).map_err(|err| in_ring("protect", err))?;
    let kept = read(id).map_err(|err| in_ring("read back", err))?;
    Key::from_payload(&kept)
        .ok_or_else(|| "the cache key in the kernel keyring keeps changing".into())
}

/// Fills `buf` from the kernel's random source.
fn random(buf: &mut [u8]) -> io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        match rustix::rand::getrandom(&mut buf[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(got) => filled += got,
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_then_reused() {
        let ring = Keyring::private_for_tests("octet-wasm-test:made-once");
        let first = load_or_create(ring).unwrap();
        assert_ne!(first.bytes, [0u8; KEY_BYTES]);
        let again = load_or_create(ring).unwrap();
        assert_eq!(again.bytes, first.bytes);
        assert_eq!(
            again.made.duration_since(UNIX_EPOCH).unwrap().as_secs(),
            first.made.duration_since(UNIX_EPOCH).unwrap().as_secs()
        );
    }

    #[test]
    fn a_malformed_key_is_replaced() {
        let ring = Keyring::private_for_tests("octet-wasm-test:malformed");
        add_key("user", DESCRIPTION, &[7u8; 5], ring.0).unwrap();
        let key = load_or_create(ring).unwrap();
        assert_ne!(key.bytes, [7u8; KEY_BYTES]);
        assert_eq!(load_or_create(ring).unwrap().bytes, key.bytes);
        // An all-zero key is no key.
        add_key("user", DESCRIPTION, &[0u8; PAYLOAD_BYTES], ring.0).unwrap();
        assert_ne!(load_or_create(ring).unwrap().bytes, [0u8; KEY_BYTES]);
    }

    #[test]
    fn the_payload_round_trips() {
        let key = Key {
            bytes: [3; KEY_BYTES],
            made: UNIX_EPOCH + Duration::from_secs(1_800_000_000),
        };
        let back = Key::from_payload(&key.payload()).unwrap();
        assert_eq!(back.bytes, key.bytes);
        assert_eq!(back.made, key.made);
        assert!(Key::from_payload(&key.payload()[1..]).is_none());
    }
}
