//! Reading a component file into memory and hashing it, in one pass.
//!
//! A CPython component is 19 MB, and `run` reads it on every start (its
//! metadata section picks the limits) and hashes it (the SHA-256 names the
//! cache entry and is what `--sha256` pins). Measured on a warm start of
//! 58 ms, the read took 10 ms (mostly faulting in fresh pages) and the
//! hash 14.5 ms after it. The file is read into heap memory the shim owns,
//! never mapped: a file that changed between hashing and compiling would
//! get one component's code filed under another's digest. What changes is
//! that the SHA-256 runs on a second thread right behind the read, chunk
//! by chunk, so the two take about as long as the slower of them.

use super::cache::ComponentDigest;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::mpsc;

/// Below this a second thread costs more than it saves.
const PIPELINE_FROM: usize = 1 << 20;

/// How much is read before the hasher is told.
const CHUNK: usize = 1 << 20;

/// A component's bytes and their SHA-256, kept together so that the
/// digest that names a cache entry is always that of the bytes compiled.
pub struct ComponentFile {
    pub bytes: Vec<u8>,
    pub digest: ComponentDigest,
}

impl ComponentFile {
    /// Bytes already in memory, hashed now.
    pub fn from_bytes(bytes: Vec<u8>) -> ComponentFile {
        let digest = ComponentDigest::of(&bytes);
        ComponentFile { bytes, digest }
    }
}

/// Reads `path` whole and hashes it.
pub fn read_hashed(path: &Path) -> io::Result<ComponentFile> {
    let mut file = File::open(path)?;
    let len = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    let len = usize::try_from(len).unwrap_or(0);
    if len < PIPELINE_FROM {
        let mut bytes = Vec::with_capacity(len.saturating_add(1));
        file.read_to_end(&mut bytes)?;
        return Ok(ComponentFile::from_bytes(bytes));
    }
    // One byte more than the file has, so a file that has not grown is
    // read whole into this buffer, which never moves while the hasher runs.
    let mut bytes: Vec<u8> = Vec::with_capacity(len + 1);
    let mut sha = read_beside_hasher(&mut file, &mut bytes)?;
    // A file that grew while being read: the rest, serially.
    let tail = bytes.len();
    file.read_to_end(&mut bytes)?;
    sha.update(&bytes[tail..]);
    let digest = ComponentDigest(sha.finalize().into());
    Ok(ComponentFile { bytes, digest })
}

/// Fills `bytes`'s spare capacity from `file` (until the end or the
/// capacity) while a scoped thread hashes what has been read; returns the
/// hash state over everything read.
fn read_beside_hasher(file: &mut File, bytes: &mut Vec<u8>) -> io::Result<Sha256> {
    let capacity = bytes.capacity();
    let base = bytes.as_mut_ptr() as usize;
    let (filled_tx, filled_rx) = mpsc::channel::<usize>();
    let (outcome, sha) = std::thread::scope(|scope| {
        let hasher = scope.spawn(move || {
            let mut sha = Sha256::new();
            let mut hashed = 0;
            for filled in filled_rx {
                // SAFETY: `[hashed, filled)` was written by the reader
                // before it sent `filled` (the channel orders the two), and
                // the reader only ever writes past `filled` from then on,
                // so this shared view never overlaps a write.
                let chunk = unsafe {
                    std::slice::from_raw_parts((base + hashed) as *const u8, filled - hashed)
                };
                sha.update(chunk);
                hashed = filled;
            }
            sha
        });
        let mut filled = 0;
        let outcome: io::Result<usize> = loop {
            if filled == capacity {
                break Ok(filled);
            }
            let want = CHUNK.min(capacity - filled);
            // SAFETY: `[filled, filled + want)` lies in the allocation's
            // spare capacity, which nothing else reads or writes until
            // `filled` is sent past it. It is uninitialised, so it is
            // borrowed as `MaybeUninit` (a `&mut [u8]` over it would be
            // undefined behaviour) and filled by `rustix::io::read`, which
            // writes without reading.
            let spare = unsafe {
                std::slice::from_raw_parts_mut((base + filled) as *mut MaybeUninit<u8>, want)
            };
            match rustix::io::read(&*file, spare) {
                Ok(([], _)) => break Ok(filled),
                Ok((read, _)) => {
                    filled += read.len();
                    // The hasher ends only when this sender is dropped.
                    let _ = filled_tx.send(filled);
                }
                Err(rustix::io::Errno::INTR) => {}
                Err(err) => break Err(err.into()),
            }
        };
        drop(filled_tx);
        let sha = hasher
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (outcome, sha)
    });
    let filled = outcome?;
    // SAFETY: the first `filled` bytes were written by `read` above.
    unsafe { bytes.set_len(filled) };
    Ok(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn small_and_large_files_read_whole_with_their_digest() {
        for len in [0, 10, PIPELINE_FROM - 1, PIPELINE_FROM, 3 * CHUNK + 12_345] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let mut file = tempfile::NamedTempFile::new().unwrap();
            file.write_all(&data).unwrap();
            let read = read_hashed(file.path()).unwrap();
            assert_eq!(read.bytes, data, "{len}");
            assert_eq!(read.digest, ComponentDigest::of(&data), "{len}");
        }
    }

    #[test]
    fn a_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_hashed(&dir.path().join("missing.wasm")).is_err());
    }
}
