//! Telling every shim that a running guest can reach the cache.
//!
//! A guest whose preopens contain the cache (workspace = the home directory,
//! `unrestricted`) could read a key and forge entries. Its own shim deletes
//! the key before the guest starts, but another shim starting while that
//! guest still runs would make a new key the guest could read. So the
//! exposing shim holds an advisory lock for as long as it lives, and every
//! shim checks for it before and after it gets a key.
//!
//! The lock is an open-file-description read lock (`F_OFD_SETLK`) on the
//! home directory itself: the kernel drops it when the process ends however
//! it ends, a guest cannot remove it (WASI has no locks, and the guest
//! cannot rename the home directory it is inside of), and other users
//! cannot open a private home to fake one. Checking (`F_OFD_GETLK`) takes
//! no lock, so shims that only check never disturb each other.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::OnceLock;

/// The descriptor whose lock announces this process; never closed.
static ANNOUNCED: OnceLock<OwnedFd> = OnceLock::new();

fn range(kind: libc::c_int) -> libc::flock {
    // SAFETY: all-zero is a valid `flock`; the fields that matter are set.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = 0;
    lock.l_len = 1;
    lock
}

/// Announces, until this process exits, that its guest can reach the cache
/// below the home directory `home` (an open descriptor of it).
pub fn announce(home: OwnedFd) -> io::Result<()> {
    if ANNOUNCED.get().is_some() {
        return Ok(());
    }
    let lock = range(libc::F_RDLCK);
    // SAFETY: `home` is an open descriptor and `lock` a valid flock.
    if unsafe { libc::fcntl(home.as_raw_fd(), libc::F_OFD_SETLK, &lock) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let _ = ANNOUNCED.set(home);
    Ok(())
}

/// Whether any process (this one included) has announced an exposure on the
/// home directory `home`.
pub fn announced(home: &OwnedFd) -> io::Result<bool> {
    let mut lock = range(libc::F_WRLCK);
    // SAFETY: `home` is an open descriptor and `lock` a valid flock the
    // kernel overwrites with the conflicting lock, if any.
    if unsafe { libc::fcntl(home.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(lock.l_type != libc::F_UNLCK as libc::c_short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_on_a_directory_is_seen_by_other_descriptors() {
        let home = tempfile::tempdir().unwrap();
        let open = || super::super::private::open_home(home.path()).unwrap();
        let observer = open();
        assert!(!announced(&observer).unwrap());
        // `announce` keeps its descriptor for the life of the process, so
        // the mechanism is tested on a descriptor the test can close.
        let holder = open();
        let lock = range(libc::F_RDLCK);
        // SAFETY: as in `announce`.
        assert_eq!(
            unsafe { libc::fcntl(holder.as_raw_fd(), libc::F_OFD_SETLK, &lock) },
            0
        );
        assert!(announced(&observer).unwrap());
        assert!(announced(&open()).unwrap());
        drop(holder);
        assert!(!announced(&observer).unwrap());
    }
}
