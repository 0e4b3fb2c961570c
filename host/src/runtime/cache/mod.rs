//! The compiled-component cache.
//!
//! Cranelift dominates start-up (measured: 40 ms for a small Rust guest,
//! 6–9 s for Python or JavaScript ones) while loading a compiled component
//! takes well under 5 ms. But a compiled component is native code
//! wasmtime runs without checks, and everything that could have chosen the
//! cache's location is the extension author's: the manifest's
//! `[entrypoint].args` (a `--cache-dir` flag) and `[entrypoint].env`
//! (`HOME`, `XDG_CACHE_HOME`, `OCTET_WASM_CACHE_DIR`). So the cache only
//! ever runs code it can prove it wrote itself for exactly these bytes:
//! - it lives in `<home>/.cache/octet-wasm`, the home taken from the user
//!   database ([`crate::user_dirs`]); no flag or variable moves it;
//! - every directory from the home down must be a real directory owned by
//!   this user and writable by nobody else ([`private`]);
//! - every entry carries a MAC (keyed BLAKE3) under a per-user secret key
//!   that lives in the kernel's keyring, never in a file ([`key`]), bound
//!   to the component's SHA-256, the engine's compatibility hash and this
//!   binary's version ([`entry`]); an entry is copied once into a sealed
//!   memfd ([`sealed`]), checked there, and deserialized from that memfd,
//!   so what runs is what was checked even if the file changes;
//! - so a guest that can read and write the cache directory, by whatever
//!   path or alias, can delete or spoil entries (the next start compiles)
//!   but can never make one that loads: it has no system call that reads
//!   a keyring. No path is compared, no key is deleted for it, and the
//!   other extensions keep their cache while it runs;
//! - it stays bounded: each store removes entries sealed under an earlier
//!   key and the least recently used beyond 2 GiB ([`trim`]).

mod entry;
mod key;
pub(crate) mod private;
mod sealed;
mod trim;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasmtime::Engine;
use wasmtime::component::Component;

use super::sandbox::Sandbox;
use crate::log::Level;
use crate::user_dirs;
pub use entry::ComponentDigest;
use entry::{Binding, HEADER_BYTES};
use key::{Key, Keyring, OLD_KEY_FILE};
use private::ReadError;
use sealed::{CopyError, Sealed};
use std::io::Read;

/// Where a component came from, for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadSource {
    /// Loaded from our compiled-component cache.
    Cache,
    /// Compiled now (and stored in the cache when one is configured).
    Compiled,
}

impl LoadSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LoadSource::Cache => "cache",
            LoadSource::Compiled => "compiled",
        }
    }
}

/// Largest entry read into memory (an 18 MB CPython component compiles to
/// well under this).
const MAX_ENTRY_BYTES: u64 = 1 << 30;

/// The user's cache below the home directory.
const CACHE_BELOW_HOME: &str = ".cache/octet-wasm";

/// The user's private cache of compiled components, with its key.
#[derive(Clone)]
pub struct Cache {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    dir: private::Dir,
    key: Key,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("dir", &self.inner.path)
            .finish_non_exhaustive()
    }
}

/// Directories whose contents the extension's author controls: what the
/// shim writes for the user (receipts) must not lie inside them.
#[derive(Debug, Clone, Default)]
pub struct Reach(Vec<(&'static str, PathBuf)>);

impl Reach {
    /// From the variables octet sets last (so the manifest cannot change
    /// them): the extension directory, the workspace and the scratch
    /// directory. With `cwd_is_workspace` (`run`: octet starts the shim in
    /// the workspace) the current directory stands in for a missing
    /// `OCTET_WORKSPACE`.
    pub fn from_env(cwd_is_workspace: bool) -> Reach {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        };
        let mut roots = Vec::new();
        if let Some(dir) = var("OCTET_EXTENSION_DIR") {
            roots.push(("extension directory", dir));
        }
        let workspace = var("OCTET_WORKSPACE").or_else(|| {
            cwd_is_workspace
                .then(|| std::env::current_dir().ok())
                .flatten()
        });
        if let Some(dir) = workspace {
            roots.push(("workspace", dir));
        }
        if let Some(dir) = var("OCTET_EXTENSION_SCRATCH") {
            roots.push(("scratch directory", dir));
        }
        Reach(roots)
    }

    /// The first of these directories that contains one of `paths` (as the
    /// kernel resolves them), named for a message: what the extension's
    /// author could have planted there is not the user's.
    pub fn containing(&self, paths: &[&Path]) -> Option<(&'static str, &Path)> {
        self.0
            .iter()
            .find(|(_, root)| paths.iter().any(|path| user_dirs::is_within(path, root)))
            .map(|(what, root)| (*what, root.as_path()))
    }
}

/// The directory granted to a guest in `sandbox` that contains one of
/// `paths`, if any: the guest could read and write there. A sandbox that
/// cannot name its directories counts as granting everything.
pub fn granted_root(sandbox: &Sandbox, paths: &[&Path]) -> Option<PathBuf> {
    let roots = sandbox.preopens().map_or_else(
        |_| vec![PathBuf::from("/")],
        |dirs| dirs.into_iter().map(|(host, _)| host).collect(),
    );
    roots
        .into_iter()
        .find(|root| paths.iter().any(|path| user_dirs::is_within(path, root)))
}

impl Cache {
    /// Where the user's cache lives: `<home>/.cache/octet-wasm`, the home
    /// from the user database.
    pub fn default_dir() -> Option<PathBuf> {
        user_dirs::cache_dir()
    }

    /// Opens the user's cache, refusing it when any directory on its way
    /// is not private or the kernel keeps no key for it. The error says
    /// why, for a warning.
    pub fn user() -> Result<Cache, String> {
        let home =
            user_dirs::home_dir().ok_or("this user has no home directory in the user database")?;
        Cache::open_below(&home, Path::new(CACHE_BELOW_HOME), users_keyring()?)
    }

    /// Opens the cache at `dir`, which must lie below the user's home (the
    /// author tools pass [`Cache::default_dir`]).
    pub fn open(dir: &Path) -> anyhow::Result<Cache> {
        let home = user_dirs::home_dir()
            .ok_or_else(|| anyhow::anyhow!("this user has no home directory"))?;
        let below = dir.strip_prefix(&home).map_err(|_| {
            anyhow::anyhow!(
                "{} is not below the home directory {}",
                dir.display(),
                home.display()
            )
        })?;
        Cache::open_below(&home, below, users_keyring().map_err(anyhow::Error::msg)?)
            .map_err(anyhow::Error::msg)
    }

    fn open_below(home_path: &Path, below: &Path, ring: Keyring) -> Result<Cache, String> {
        let path = home_path.join(below);
        let (_, dir) = private::open_chain(home_path, below)?;
        // The file the key lived in before it moved into the kernel: any
        // guest granted the home may have read it or written its own, so
        // it is never read, only removed.
        match private::remove(&dir, OLD_KEY_FILE) {
            Ok(true) => {
                crate::log!(Level::Info, "removed the compiled cache's old key file; the key now lives in the kernel keyring, and entries sealed under the old key compile again once",
                    "file" => path.join(OLD_KEY_FILE).display().to_string())
            }
            Ok(false) => {}
            Err(err) => {
                crate::log!(Level::Warning, "cannot remove the compiled cache's old key file (it is not used either way)",
                    "file" => path.join(OLD_KEY_FILE).display().to_string(), "error" => err.to_string())
            }
        }
        let key = key::load_or_create(ring)?;
        Ok(Cache {
            inner: Arc::new(Inner { path, dir, key }),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.inner.path
    }

    /// The file the compiled form of the component with `digest` for
    /// `engine` lives in.
    pub fn entry(&self, engine: &Engine, digest: &ComponentDigest) -> PathBuf {
        self.inner
            .path
            .join(Binding::new(digest, engine).file_name())
    }

    /// The entry for `binding`, read once (`Ok(None)` when there is none);
    /// not yet authenticated.
    fn read(&self, binding: &Binding) -> Result<Option<Entry>, String> {
        let name = binding.file_name();
        let (_, file) = match private::open_file(&self.inner.dir, &name, MAX_ENTRY_BYTES) {
            Ok(opened) => opened,
            Err(ReadError::Missing) => return Ok(None),
            Err(err) => return Err(err.to_string()),
        };
        let mut header = [0; HEADER_BYTES];
        (&file)
            .read_exact(&mut header)
            .map_err(|err| match err.kind() {
                std::io::ErrorKind::UnexpectedEof => {
                    "it is truncated (shorter than its header)".to_owned()
                }
                _ => err.to_string(),
            })?;
        let max = MAX_ENTRY_BYTES - HEADER_BYTES as u64;
        let code = match Sealed::copy_from(&file, HEADER_BYTES as u64, max) {
            Ok(sealed) => Code::Sealed(sealed),
            Err(CopyError::Unsupported(why)) => {
                crate::log!(Level::Debug, "no sealed memfd for the compiled cache; reading the entry into memory", "error" => why.to_string());
                Code::Heap(read_rest(&file, max)?)
            }
            Err(CopyError::Read(err)) => return Err(err.to_string()),
            Err(CopyError::TooLarge) => return Err("it grew while being read".into()),
        };
        Ok(Some(Entry { file, header, code }))
    }

    /// Whether a valid entry for the component with `digest` and `engine`
    /// exists.
    pub fn holds(&self, engine: &Engine, digest: &ComponentDigest) -> bool {
        let binding = Binding::new(digest, engine);
        matches!(self.read(&binding), Ok(Some(entry))
                if entry.verify(&self.inner.key, &binding).is_ok())
    }

    /// Loads the compiled form of the component with `digest`, if a valid
    /// entry exists.
    fn load(&self, engine: &Engine, digest: &ComponentDigest) -> Result<Option<Component>, String> {
        let binding = Binding::new(digest, engine);
        let Some(entry) = self.read(&binding)? else {
            return Ok(None);
        };
        entry.verify(&self.inner.key, &binding)?;
        trim::touch(&entry.file);
        // SAFETY (both calls): the bytes are those whose MAC was just
        // checked under this user's secret key for exactly this component,
        // this engine's settings and this binary's version, so this program
        // wrote them from `Component::serialize`; they are a sealed memfd
        // (the path opens that same memfd, checked by device and inode) or
        // this process's own heap, and nothing can change them.
        let loaded = match &entry.code {
            Code::Sealed(sealed) => match sealed.path() {
                Some(path) => unsafe { Component::deserialize_file(engine, path) },
                None => {
                    let bytes = sealed
                        .to_vec()
                        .map_err(|err| format!("cannot read it back: {err}"))?;
                    unsafe { Component::deserialize(engine, bytes) }
                }
            },
            Code::Heap(bytes) => unsafe { Component::deserialize(engine, bytes) },
        };
        loaded
            .map(Some)
            .map_err(|err| format!("wasmtime cannot load it: {err:#}"))
    }

    /// Stores the compiled `component` (of the bytes with `digest`),
    /// replacing any entry.
    pub fn store(
        &self,
        engine: &Engine,
        digest: &ComponentDigest,
        component: &Component,
    ) -> anyhow::Result<PathBuf> {
        let serialized = component
            .serialize()
            .map_err(|err| anyhow::anyhow!("cannot serialize the compiled component: {err}"))?;
        let binding = Binding::new(digest, engine);
        let sealed = entry::seal(&self.inner.key, &binding, &serialized);
        let name = binding.file_name();
        private::write(&self.inner.dir, &name, &sealed, true)
            .map_err(|err| anyhow::anyhow!("cannot write {name}: {err}"))?;
        self.trim(&name);
        Ok(self.inner.path.join(name))
    }

    /// Trims the cache after `stored` was written (a store already costs a
    /// compile, so the directory scan is not noticed). A failure leaves the
    /// cache larger, never wrong: it is logged and the start goes on.
    fn trim(&self, stored: &str) {
        let dir = self.inner.path.display().to_string();
        match trim::trim(
            &self.inner.dir,
            stored,
            trim::MAX_BYTES,
            self.inner.key.made,
        ) {
            Ok(trimmed) if trimmed == trim::Trimmed::default() => {}
            Ok(trimmed) => {
                crate::log!(Level::Info, "trimmed the compiled cache", "dir" => dir,
                    "dead" => trimmed.dead, "evicted" => trimmed.evicted,
                    "leftovers" => trimmed.leftovers, "bytes" => trimmed.bytes)
            }
            Err(err) => {
                crate::log!(Level::Warning, "cannot trim the compiled cache", "dir" => dir, "error" => err.to_string())
            }
        }
    }
}

/// The keyring the cache key lives in, or why there is none (a kernel
/// without keys, or a seccomp filter refusing `keyctl`, as some container
/// runtimes install): then nothing is cached, since no file may hold it.
fn users_keyring() -> Result<Keyring, String> {
    Keyring::users().map_err(|err| {
        format!("the kernel keyring that holds the cache key is not available to this process ({err}); without it nothing is cached, since no file can hold the key safely")
    })
}

/// An entry's serialized component after its header (at most `max`
/// bytes), read into this process's memory.
fn read_rest(file: &std::fs::File, max: u64) -> Result<Vec<u8>, String> {
    private::read_from(file, HEADER_BYTES as u64, max).map_err(|err| err.to_string())
}

/// An entry as read: its header and the serialized component after it.
struct Entry {
    /// The entry's file, still open: a load marks it used.
    file: std::fs::File,
    header: [u8; HEADER_BYTES],
    code: Code,
}

/// Where an entry's serialized component was copied.
enum Code {
    /// A sealed memfd (the usual case).
    Sealed(Sealed),
    /// This process's heap, where the system has no sealed memfds.
    Heap(Vec<u8>),
}

impl Entry {
    /// Checks the entry's MAC for `binding` under `key`.
    fn verify(&self, key: &Key, binding: &Binding) -> Result<(), String> {
        match &self.code {
            Code::Sealed(sealed) => {
                entry::verify_streamed(key, binding, &self.header, sealed.len(), |mac| {
                    sealed.for_each_piece(|piece| entry::absorb(mac, piece))
                })
            }
            Code::Heap(bytes) => entry::verify(key, binding, &self.header, bytes),
        }
    }
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    ComponentDigest::of(bytes).hex()
}

/// The cache file name of `bytes` compiled for `engine`.
pub fn entry_name(engine: &Engine, bytes: &[u8]) -> String {
    Binding::new(&ComponentDigest::of(bytes), engine).file_name()
}

/// An entry for `serialized` as the holder of `key` would make it for the
/// component `bytes`: what an attacker who stole a key could forge (tests
/// play that attacker).
pub fn forge_entry(key: &[u8; 32], engine: &Engine, bytes: &[u8], serialized: &[u8]) -> Vec<u8> {
    let binding = Binding::new(&ComponentDigest::of(bytes), engine);
    entry::seal(&Key::from_bytes(*key), &binding, serialized)
}

/// Loads the compiled form of `bytes` (whose SHA-256 is `digest`) from the
/// cache, or compiles it (and stores it when a cache is given). An entry
/// that fails any check is ignored with a warning and replaced.
pub fn load_or_compile(
    engine: &Engine,
    bytes: &[u8],
    digest: &ComponentDigest,
    origin: &Path,
    cache: Option<&Cache>,
) -> anyhow::Result<(Component, LoadSource)> {
    if let Some(cache) = cache {
        match cache.load(engine, digest) {
            Ok(Some(component)) => return Ok((component, LoadSource::Cache)),
            Ok(None) => {}
            Err(reason) => {
                crate::log!(Level::Warning, "ignoring a compiled-cache entry that fails its checks; compiling instead",
                    "entry" => cache.entry(engine, digest).display().to_string(), "reason" => reason)
            }
        }
    }
    let component = Component::new(engine, bytes).map_err(|err| {
        anyhow::anyhow!(
            "{} is not a valid WebAssembly component: {err:#}",
            origin.display()
        )
    })?;
    if let Some(cache) = cache {
        match cache.store(engine, digest, &component) {
            Ok(entry) => {
                crate::log!(Level::Debug, "compiled component stored in the cache", "entry" => entry.display().to_string())
            }
            Err(err) => {
                crate::log!(Level::Warning, "cannot write the compiled cache", "dir" => cache.dir().display().to_string(), "error" => format!("{err:#}"))
            }
        }
    }
    Ok((component, LoadSource::Compiled))
}

#[cfg(test)]
mod tests;
