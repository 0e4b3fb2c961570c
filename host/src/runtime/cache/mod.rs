//! The compiled-component cache.
//!
//! Cranelift dominates start-up (40 ms for a small Rust guest, 6–9 s for
//! Python or JavaScript ones) while loading a compiled component by mapping
//! it takes well under 5 ms (toolchain.md §4.1). A compiled component is
//! native code that wasmtime trusts blindly, so the cache only ever loads
//! files this program wrote:
//! - the key is the SHA-256 of the component bytes plus wasmtime's
//!   compatibility hash of the engine settings (version, fuel, target) and
//!   this binary's version;
//! - files are written to a temporary name and renamed into place, so a
//!   reader never sees a partial file;
//! - the directory must be owned by the current user and writable by nobody
//!   else (created 0700); otherwise the cache is not used at all;
//! - any load failure falls back to compiling.

use sha2::{Digest, Sha256};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::LoadSource;
use crate::log::Level;

/// A private directory of compiled components.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

impl Cache {
    /// Opens (creating if needed) the cache at `dir`. Refuses a directory
    /// that someone else could have written to.
    pub fn open(dir: &Path) -> anyhow::Result<Cache> {
        create_private_dir(dir)?;
        check_private(dir)?;
        Ok(Cache {
            dir: dir.to_path_buf(),
        })
    }

    /// The cache directory from `OCTET_WASM_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/octet-wasm`, else `$HOME/.cache/octet-wasm`.
    pub fn default_dir() -> Option<PathBuf> {
        let from_env = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        from_env("OCTET_WASM_CACHE_DIR")
            .or_else(|| from_env("XDG_CACHE_HOME").map(|dir| dir.join("octet-wasm")))
            .or_else(|| from_env("HOME").map(|home| home.join(".cache").join("octet-wasm")))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file a compiled form of `bytes` lives in for `engine`.
    pub fn entry(&self, engine: &Engine, digest: &str) -> PathBuf {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        env!("CARGO_PKG_VERSION").hash(&mut hasher);
        self.dir
            .join(format!("{digest}-{:016x}.cwasm", hasher.finish()))
    }
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Loads the compiled form of `bytes` from the cache, or compiles it (and
/// stores it when a cache is given).
pub fn load_or_compile(
    engine: &Engine,
    bytes: &[u8],
    origin: &Path,
    cache: Option<&Cache>,
) -> anyhow::Result<(Component, LoadSource)> {
    let entry = cache.map(|cache| cache.entry(engine, &sha256_hex(bytes)));
    if let Some(entry) = &entry
        && entry.exists()
    {
        // SAFETY: the file is in a directory only this user can write, under
        // a name derived from the component's hash and this engine's
        // settings, and was written whole (rename) by `store` below.
        match unsafe { Component::deserialize_file(engine, entry) } {
            Ok(component) => return Ok((component, LoadSource::Cache)),
            Err(err) => {
                crate::log!(Level::Warning, "ignoring an unusable compiled-cache entry; compiling instead",
                "path" => entry.display().to_string(), "error" => format!("{err:#}"))
            }
        }
    }
    let component = Component::new(engine, bytes).map_err(|err| {
        anyhow::anyhow!(
            "{} is not a valid WebAssembly component: {err:#}",
            origin.display()
        )
    })?;
    if let Some(entry) = &entry
        && let Err(err) = store(&component, entry)
    {
        crate::log!(Level::Warning, "cannot write the compiled cache", "path" => entry.display().to_string(), "error" => format!("{err:#}"));
    }
    Ok((component, LoadSource::Compiled))
}

/// Compiles `bytes` into the cache without keeping the component (for
/// install-time warming).
pub fn store(component: &Component, entry: &Path) -> anyhow::Result<()> {
    let serialized = component
        .serialize()
        .map_err(|err| anyhow::anyhow!("cannot serialize the compiled component: {err}"))?;
    let dir = entry.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile_in(dir)?;
    std::io::Write::write_all(&mut temp.1, &serialized)?;
    temp.1.sync_all()?;
    std::fs::rename(&temp.0, entry)?;
    Ok(())
}

fn tempfile_in(dir: &Path) -> anyhow::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let path = dir.join(format!(".tmp-{}-{nonce}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    Ok((path, file))
}

fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|err| {
            anyhow::anyhow!("cannot create the cache directory {}: {err}", dir.display())
        })
}

fn check_private(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if meta.uid() != uid {
        anyhow::bail!(
            "cache directory {} is owned by uid {}, not by this user ({uid}); refusing to load compiled code from it",
            dir.display(),
            meta.uid()
        );
    }
    if meta.mode() & 0o022 != 0 {
        anyhow::bail!(
            "cache directory {} is writable by group or others (mode {:o}); refusing to load compiled code from it (fix: chmod 700)",
            dir.display(),
            meta.mode() & 0o777
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn refuses_shared_directories() {
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(Cache::open(&shared).is_err());
        let private = dir.path().join("private");
        let cache = Cache::open(&private).unwrap();
        let mode = std::fs::metadata(cache.dir()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn hashes_hex() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
