//! The per-user secret that authenticates cache entries.
//!
//! A cache entry is native code wasmtime runs without checks, so a file in
//! the cache is trusted only when it carries a MAC made with this key; a
//! party that can write into the cache but never read the key cannot make
//! one. The key is 32 random bytes in `<cache>/key`, mode 0600, created
//! atomically (`link` of a finished temporary file, so two shims starting
//! at once agree on one key). Anything unexpected about the file (a
//! symlink, another owner, a readable mode, a wrong size) means someone else
//! may know it: it is replaced, which invalidates every entry made with it.

use super::private::{self, Dir, ReadError};
use crate::log::Level;
use std::io::Read;
use std::os::unix::fs::MetadataExt;

pub const KEY_FILE: &str = "key";
pub const KEY_BYTES: usize = 32;

/// The secret, kept out of `Debug` output.
#[derive(Clone)]
pub struct Key(pub(super) [u8; KEY_BYTES]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(..)")
    }
}

/// Reads the key in `dir`, or makes one.
pub fn load_or_create(dir: &Dir) -> Result<Key, String> {
    for _ in 0..3 {
        match load(dir) {
            Ok(key) => return Ok(key),
            Err(ReadError::Missing) => {}
            Err(ReadError::Refused(why)) => {
                crate::log!(Level::Warning, "replacing the compiled cache's key, which cannot be trusted; every cached component will be compiled again", "reason" => why);
                private::remove(dir, KEY_FILE)
                    .map_err(|err| format!("cannot remove the untrusted cache key: {err}"))?;
            }
            Err(ReadError::Io(err)) => return Err(format!("cannot read the cache key: {err}")),
        }
        let mut key = [0u8; KEY_BYTES];
        random(&mut key).map_err(|err| format!("cannot make a cache key: {err}"))?;
        match private::write(dir, KEY_FILE, &key, false) {
            Ok(true) => return Ok(Key(key)),
            // Another shim created one first: use it.
            Ok(false) => {}
            Err(err) => return Err(format!("cannot write the cache key: {err}")),
        }
    }
    Err("the cache key keeps changing under this process".into())
}

fn load(dir: &Dir) -> Result<Key, ReadError> {
    let (meta, bytes) = private::read(dir, KEY_FILE, KEY_BYTES as u64 * 2)?;
    if meta.mode() & 0o077 != 0 {
        return Err(ReadError::Refused(format!(
            "the key file is readable by group or others (mode {:o})",
            meta.mode() & 0o7777
        )));
    }
    let key: [u8; KEY_BYTES] = bytes.as_slice().try_into().map_err(|_| {
        ReadError::Refused(format!(
            "the key file has {} bytes, not {KEY_BYTES}",
            bytes.len()
        ))
    })?;
    Ok(Key(key))
}

/// Fills `buf` from the kernel's random source.
fn random(buf: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: `rest` is valid for writes of `rest.len()` bytes.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if got < 0 {
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOSYS) => {
                    return std::fs::File::open("/dev/urandom")?.read_exact(rest);
                }
                _ => return Err(err),
            }
        }
        filled += got as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn cache() -> (tempfile::TempDir, Dir) {
        let home = tempfile::tempdir().unwrap();
        let (_, dir) = private::open_chain(home.path(), Path::new("cache")).unwrap();
        (home, dir)
    }

    #[test]
    fn a_key_is_made_once_private_and_then_reused() {
        let (home, dir) = cache();
        let first = load_or_create(&dir).unwrap();
        let path = home.path().join("cache/key");
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(meta.len(), KEY_BYTES as u64);
        assert_eq!(load_or_create(&dir).unwrap().0, first.0);
        assert_ne!(first.0, [0u8; KEY_BYTES]);
    }

    #[test]
    fn an_untrustworthy_key_is_replaced() {
        let (home, dir) = cache();
        let path = home.path().join("cache/key");
        // A key others could read.
        std::fs::write(&path, [7u8; KEY_BYTES]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_ne!(load_or_create(&dir).unwrap().0, [7u8; KEY_BYTES]);
        // A key of the wrong size.
        std::fs::write(&path, [7u8; 5]).unwrap();
        let key = load_or_create(&dir).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), key.0);
        // A symlink to a key someone else knows.
        let known = home.path().join("known");
        std::fs::write(&known, [9u8; KEY_BYTES]).unwrap();
        std::fs::set_permissions(&known, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&known, &path).unwrap();
        assert_ne!(load_or_create(&dir).unwrap().0, [9u8; KEY_BYTES]);
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
    }
}
