//! Sidecar files: a value too large for a frame, which octet writes under
//! `OCTET_EXTENSION_SCRATCH` and names in its answer as
//! `{path, bytes, sha256}` (tool composition, API 0.4).
//!
//! The scratch directory is octet's (its path is one of the variables octet
//! sets last, so the manifest cannot move it), but a guest granted it could
//! plant files or links there. So the name must be a flat basename, the
//! file is opened without following a link and checked on the descriptor
//! (a regular file of exactly the announced size, at most 8 MiB), and its
//! SHA-256 must be the one octet announced before a byte of it is used.

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Largest sidecar file.
pub const MAX_SIDECAR_BYTES: u64 = 8 << 20;

/// A sidecar named in an answer, checked for shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidecar {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

impl Sidecar {
    /// Reads `{path, bytes, sha256}`; the text says what is wrong.
    pub fn from_json(value: &Value) -> Result<Sidecar, String> {
        let object = value
            .as_object()
            .ok_or("the sidecar is not an object {path, bytes, sha256}")?;
        let path = object
            .get("path")
            .and_then(Value::as_str)
            .ok_or("the sidecar has no path")?;
        if !is_basename(path) {
            return Err(format!(
                "the sidecar path {path:?} is not a plain file name in the scratch directory"
            ));
        }
        let bytes = object
            .get("bytes")
            .and_then(Value::as_u64)
            .ok_or("the sidecar has no byte count")?;
        if bytes > MAX_SIDECAR_BYTES {
            return Err(format!("the sidecar has {bytes} bytes; the limit is 8 MiB"));
        }
        let sha256 = object
            .get("sha256")
            .and_then(Value::as_str)
            .filter(|hex| {
                hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            })
            .ok_or("the sidecar's sha256 is not 64 lowercase hex digits")?;
        Ok(Sidecar {
            path: path.to_owned(),
            bytes,
            sha256: sha256.to_owned(),
        })
    }

    /// Reads and checks the file in `scratch`, and parses it as JSON.
    pub fn read_json(&self, scratch: &Path) -> Result<Value, String> {
        let data = self.read(scratch)?;
        serde_json::from_slice(&data)
            .map_err(|err| format!("the sidecar {} is not JSON: {err}", self.path))
    }

    fn read(&self, scratch: &Path) -> Result<Vec<u8>, String> {
        let path = scratch.join(&self.path);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|err| {
                format!(
                    "cannot open the sidecar {} without following links: {err}",
                    self.path
                )
            })?;
        let meta = file
            .metadata()
            .map_err(|err| format!("cannot inspect the sidecar {}: {err}", self.path))?;
        if !meta.is_file() {
            return Err(format!("the sidecar {} is not a regular file", self.path));
        }
        if meta.len() != self.bytes {
            return Err(format!(
                "the sidecar {} has {} bytes, not the {} announced",
                self.path,
                meta.len(),
                self.bytes
            ));
        }
        let mut data = Vec::with_capacity(self.bytes as usize);
        file.take(self.bytes + 1)
            .read_to_end(&mut data)
            .map_err(|err| format!("cannot read the sidecar {}: {err}", self.path))?;
        if data.len() as u64 != self.bytes {
            return Err(format!(
                "the sidecar {} changed size while it was read",
                self.path
            ));
        }
        let digest: String = Sha256::digest(&data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if digest != self.sha256 {
            return Err(format!(
                "the sidecar {} does not have the announced SHA-256",
                self.path
            ));
        }
        Ok(data)
    }
}

/// A name inside the scratch directory itself: no separator, not `.` or
/// `..`, no NUL, at most 255 bytes.
fn is_basename(name: &str) -> bool {
    (1..=255).contains(&name.len())
        && name != "."
        && name != ".."
        && !name.bytes().any(|b| b == b'/' || b == 0)
}

/// The scratch directory octet named, when it is an absolute directory.
pub fn scratch_dir() -> Option<PathBuf> {
    std::env::var_os("OCTET_EXTENSION_SCRATCH")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(path: &str, data: &[u8]) -> Value {
        let sha: String = Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        json!({"path": path, "bytes": data.len(), "sha256": sha})
    }

    #[test]
    fn names_must_stay_in_the_directory() {
        for bad in ["", ".", "..", "a/b", "../x", "a\0b"] {
            assert!(Sidecar::from_json(&spec(bad, b"1")).is_err(), "{bad:?}");
        }
        assert!(Sidecar::from_json(&spec("value-1.json", b"1")).is_ok());
        let mut big = spec("x", b"1");
        big["bytes"] = json!(MAX_SIDECAR_BYTES + 1);
        assert!(Sidecar::from_json(&big).unwrap_err().contains("8 MiB"));
        let mut upper = spec("x", b"1");
        upper["sha256"] = json!("A".repeat(64));
        assert!(Sidecar::from_json(&upper).is_err());
    }

    #[test]
    fn reads_only_the_announced_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("v"), b"{\"a\":1}").unwrap();
        let good = Sidecar::from_json(&spec("v", b"{\"a\":1}")).unwrap();
        assert_eq!(good.read_json(dir.path()).unwrap(), json!({"a": 1}));
        let changed = Sidecar::from_json(&spec("v", b"{\"a\":2}")).unwrap();
        assert!(
            changed
                .read_json(dir.path())
                .unwrap_err()
                .contains("SHA-256")
        );
        let short = Sidecar::from_json(&spec("v", b"{}")).unwrap();
        assert!(
            short
                .read_json(dir.path())
                .unwrap_err()
                .contains("announced")
        );
        std::os::unix::fs::symlink(dir.path().join("v"), dir.path().join("link")).unwrap();
        let link = Sidecar::from_json(&spec("link", b"{\"a\":1}")).unwrap();
        assert!(
            link.read_json(dir.path())
                .unwrap_err()
                .contains("without following links")
        );
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let dir_spec = Sidecar::from_json(&spec("d", b"")).unwrap();
        assert!(dir_spec.read_json(dir.path()).is_err());
    }
}
