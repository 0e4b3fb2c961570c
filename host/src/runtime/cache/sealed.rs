//! A cache entry's compiled code in memory nobody can change.
//!
//! The MAC check is worth nothing if the bytes wasmtime maps afterwards
//! differ from the bytes checked, and the cache file itself can change
//! under an open descriptor. Reading the entry into the heap closes that
//! gap but costs a second copy when wasmtime deserialises (into its own
//! mapping) and a third for the guest's memory image (a memfd wasmtime
//! fills itself); for CPython that is 35 MB each and most of a warm
//! start's peak memory. Instead the entry is copied once into a memfd that
//! is then sealed against writes, resizing and further seals: the kernel
//! guarantees its contents never change again, whoever opens it (a guest
//! granted `/` could open `/proc/<pid>/fd/N` of another shim). The MAC is
//! checked over read-only mappings of a few MiB at a time (one mapping of
//! it all would put all of it in this process's resident memory at once,
//! 35 MB for CPython), and wasmtime maps
//! the same memfd (`/proc/self/fd/N`) for both the code and the memory
//! image.

use rustix::fs::{MemfdFlags, SealFlags};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// How much of the memfd is mapped at a time for the MAC: a multiple of
/// the page size, large enough for the MAC's two threads, small enough that
/// the pages mapped at once are a small part of the resident memory.
const PIECE: usize = 8 << 20;

/// Sealed bytes in a memfd.
pub struct Sealed {
    file: File,
    len: u64,
}

impl Sealed {
    /// Copies `source` from `offset` to its end (at most `max` bytes) into
    /// a fresh memfd and seals it. An error means the platform lacks
    /// memfds or seals (the caller reads into the heap instead) or `source`
    /// failed or changed size while being read.
    pub fn copy_from(source: &File, offset: u64, max: u64) -> Result<Sealed, CopyError> {
        let total = source.metadata().map_err(CopyError::Read)?.len();
        let len = total.saturating_sub(offset);
        if len > max {
            return Err(CopyError::TooLarge);
        }
        let memfd = rustix::fs::memfd_create(
            c"octet-wasm-cache-entry",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )
        .map_err(|err| CopyError::Unsupported(err.into()))?;
        let mut sink = File::from(memfd);
        // sendfile, in the kernel: measured as fast as anything here,
        // including two threads filling halves of a shared mapping (fresh
        // shared-memory pages are what it waits on).
        let mut source = source;
        source
            .seek(SeekFrom::Start(offset))
            .map_err(CopyError::Read)?;
        let copied = io::copy(&mut source.take(len), &mut sink).map_err(CopyError::Read)?;
        if copied != len {
            return Err(CopyError::Read(io::Error::other(
                "it changed size while being read",
            )));
        }
        let seals = SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL;
        rustix::fs::fcntl_add_seals(&sink, seals)
            .map_err(|err| CopyError::Unsupported(err.into()))?;
        if source.metadata().map_err(CopyError::Read)?.len() != total {
            return Err(CopyError::Read(io::Error::other(
                "it changed size while being read",
            )));
        }
        Ok(Sealed { file: sink, len })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    /// Passes the sealed bytes to `each`, in order, a piece at a time:
    /// each piece a read-only mapping, unmapped before the next.
    pub fn for_each_piece(&self, mut each: impl FnMut(&[u8])) -> io::Result<()> {
        let mut at = 0;
        while at < self.len {
            let want = PIECE.min(usize::try_from(self.len - at).unwrap_or(PIECE));
            let offset = libc::off_t::try_from(at).map_err(io::Error::other)?;
            // SAFETY: a fresh read-only shared mapping of `want` bytes of
            // the memfd from `at` (a multiple of the page size), which is
            // sealed against writes, so the view never changes.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    want,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    self.file.as_raw_fd(),
                    offset,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: the mapping just made, `want` readable bytes.
            each(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), want) });
            // SAFETY: unmaps exactly that mapping, no longer borrowed.
            unsafe { libc::munmap(ptr, want) };
            at += want as u64;
        }
        Ok(())
    }

    /// The sealed bytes, read into this process's memory.
    pub fn to_vec(&self) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        self.for_each_piece(|piece| bytes.extend_from_slice(piece))?;
        Ok(bytes)
    }

    /// A path that opens this memfd (for wasmtime's `deserialize_file`),
    /// when `/proc` shows it as exactly this file.
    pub fn path(&self) -> Option<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        let path = PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()));
        let ours = self.file.metadata().ok()?;
        let named = std::fs::metadata(&path).ok()?;
        (named.dev() == ours.dev() && named.ino() == ours.ino()).then_some(path)
    }
}

/// Why an entry could not be copied into sealed memory.
#[derive(Debug)]
pub enum CopyError {
    /// No memfd or seal on this system.
    Unsupported(io::Error),
    /// Reading the entry failed.
    Read(io::Error),
    /// The entry is larger than any entry may be.
    TooLarge,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_copy_is_the_rest_of_the_file_and_cannot_change() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"headercompiled code").unwrap();
        let sealed = Sealed::copy_from(&file, 6, 100).unwrap();
        assert_eq!(sealed.to_vec().unwrap(), b"compiled code");
        // The file changes; the copy does not, and cannot be written.
        file.seek(SeekFrom::Start(6)).unwrap();
        file.write_all(b"other").unwrap();
        assert_eq!(sealed.to_vec().unwrap(), b"compiled code");
        let path = sealed.path().expect("/proc names the memfd");
        let err = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| f.write_all(b"x"))
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"compiled code");
    }

    #[test]
    fn a_copy_past_the_limit_is_refused() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&[7; 64]).unwrap();
        assert!(matches!(
            Sealed::copy_from(&file, 0, 63),
            Err(CopyError::TooLarge)
        ));
        assert_eq!(
            Sealed::copy_from(&file, 0, 64).unwrap().to_vec().unwrap(),
            [7; 64]
        );
        assert!(
            Sealed::copy_from(&file, 64, 64)
                .unwrap()
                .to_vec()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn pieces_cover_a_large_copy_in_order() {
        let data: Vec<u8> = (0..PIECE * 2 + 4097).map(|i| (i % 253) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&data).unwrap();
        let sealed = Sealed::copy_from(&file, 40, u64::MAX).unwrap();
        assert_eq!(sealed.len(), data.len() as u64 - 40);
        let mut sizes = Vec::new();
        let mut joined = Vec::new();
        sealed
            .for_each_piece(|piece| {
                sizes.push(piece.len());
                joined.extend_from_slice(piece);
            })
            .unwrap();
        assert!(joined == data[40..]);
        assert_eq!(sizes, [PIECE, PIECE, 4097 - 40]);
    }
}
