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
//! guarantees its contents never change again. The MAC is checked over a
//! read-only mapping of it, and wasmtime maps the same memfd
//! (`/proc/self/fd/N`) for both the code and the memory image.

use std::fs::File;
use std::io;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::ptr::NonNull;

/// Sealed bytes, mapped read-only.
pub struct Sealed {
    fd: OwnedFd,
    /// `None` for an empty copy (nothing to map).
    map: Option<Mapping>,
    len: usize,
}

// SAFETY: a `Mapping` is read-only, of memory sealed against writes:
// moving or sharing it between threads cannot race.
unsafe impl Send for Mapping {}
unsafe impl Sync for Mapping {}

impl Sealed {
    /// Copies `source` from `offset` to its end (at most `max` bytes) into
    /// a fresh memfd, seals it and maps it.
    /// An error means the platform lacks memfds or seals (the caller reads
    /// into the heap instead) or `source` failed or changed size while
    /// being read.
    pub fn copy_from(source: &File, offset: u64, max: u64) -> Result<Sealed, CopyError> {
        let total = source.metadata().map_err(CopyError::Read)?.len();
        let len = total.saturating_sub(offset);
        if len > max {
            return Err(CopyError::TooLarge);
        }
        let len = usize::try_from(len).map_err(|_| CopyError::TooLarge)?;
        // SAFETY: the name is NUL-terminated; the flags are valid.
        let raw = unsafe {
            libc::memfd_create(
                c"octet-wasm-cache-entry".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            )
        };
        if raw < 0 {
            return Err(CopyError::Unsupported(io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a fresh descriptor this function owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // sendfile, in the kernel: measured as fast as anything here,
        // including two threads filling halves of a shared mapping (fresh
        // shared-memory pages are what it waits on).
        let mut sink = File::from(fd);
        let mut source = source;
        source
            .seek(SeekFrom::Start(offset))
            .map_err(CopyError::Read)?;
        let mut rest = source.take(len as u64);
        let copied = io::copy(&mut rest, &mut sink).map_err(CopyError::Read)?;
        if copied != len as u64 {
            return Err(CopyError::Read(io::Error::other(
                "it changed size while being read",
            )));
        }
        let fd = OwnedFd::from(sink);
        let seals =
            libc::F_SEAL_WRITE | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
        // SAFETY: plain fcntl on a descriptor this function owns.
        if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
            return Err(CopyError::Unsupported(io::Error::last_os_error()));
        }
        if source.metadata().map_err(CopyError::Read)?.len() != total {
            return Err(CopyError::Read(io::Error::other(
                "it changed size while being read",
            )));
        }
        let map = if len == 0 {
            None
        } else {
            Some(Mapping::new(&fd, len, libc::PROT_READ)?)
        };
        Ok(Sealed { fd, map, len })
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.map {
            // SAFETY: a live read-only mapping of `len` bytes that never
            // change (the memfd is sealed against writes).
            Some(map) => unsafe { std::slice::from_raw_parts(map.ptr.as_ptr(), self.len) },
            None => &[],
        }
    }

    /// A path that opens this memfd (for wasmtime's `deserialize_file`),
    /// when `/proc` shows it as exactly this file.
    pub fn path(&self) -> Option<PathBuf> {
        use std::os::unix::fs::MetadataExt;
        let path = PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()));
        let ours = File::from(self.fd.try_clone().ok()?).metadata().ok()?;
        let named = std::fs::metadata(&path).ok()?;
        (named.dev() == ours.dev() && named.ino() == ours.ino()).then_some(path)
    }
}

/// One shared mapping of a memfd, unmapped on drop.
struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

impl Mapping {
    fn new(fd: &OwnedFd, len: usize, prot: libc::c_int) -> Result<Mapping, CopyError> {
        // SAFETY: a fresh shared mapping of `len` bytes of `fd`, which is
        // at least that long.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(CopyError::Unsupported(io::Error::last_os_error()));
        }
        NonNull::new(ptr.cast())
            .map(|ptr| Mapping { ptr, len })
            .ok_or_else(|| CopyError::Unsupported(io::Error::other("mmap returned a null mapping")))
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Why an entry could not be copied into sealed memory.
#[derive(Debug)]
pub enum CopyError {
    /// No memfd, seal or mapping on this system.
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
        assert_eq!(sealed.bytes(), b"compiled code");
        // The file changes; the copy does not, and cannot be written.
        file.seek(SeekFrom::Start(6)).unwrap();
        file.write_all(b"other").unwrap();
        assert_eq!(sealed.bytes(), b"compiled code");
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
        assert_eq!(Sealed::copy_from(&file, 0, 64).unwrap().bytes(), &[7; 64]);
        assert_eq!(Sealed::copy_from(&file, 64, 64).unwrap().bytes(), b"");
    }
}
