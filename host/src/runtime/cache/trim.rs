//! Keeping the cache bounded.
//!
//! Nothing else ever removes an entry: every new build of a component (an
//! extension update, an author's rebuild) and every new shim version or
//! engine setting makes a new one, and a replaced key (see [`super::key`])
//! leaves every older entry unable to pass its MAC again. Left alone the
//! cache grows without end (a CPython guest compiles to 35 MB), so after
//! each store the shim trims it:
//! - entries last written before the key was made are removed: they were
//!   sealed under an earlier key and can never load;
//! - of the rest, the most recently used are kept up to [`MAX_BYTES`] and
//!   the others removed (a load marks its entry used by setting its mtime,
//!   [`touch`]);
//! - temporary files a writer left behind when it died are removed once
//!   they are an hour old (a live write takes well under a second).
//!
//! Only names the cache itself makes are considered, only regular files of
//! this user, and only by `unlinkat` relative to the checked directory's
//! descriptor (which never follows a symbolic link). A shim still loading
//! an entry another shim removes keeps the copy it already opened.

use super::private::{self, Dir};
use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, SystemTime};

/// The most the cache keeps of the entries that can still load: about 55
/// CPython guests, several hundred JavaScript ones. Starting a Python guest
/// the cache lost costs seconds of compiling, so the bound is generous.
pub const MAX_BYTES: u64 = 2 << 30;

/// How old a leftover temporary file must be before it is removed.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// What one trim removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Trimmed {
    /// Entries sealed under an earlier key.
    pub dead: usize,
    /// Entries least recently used beyond the bound.
    pub evicted: usize,
    /// Temporary files of writers that died.
    pub leftovers: usize,
    /// Bytes freed by all three.
    pub bytes: u64,
}

/// One file of the cache directory, as `fstatat` saw it.
struct Found {
    name: String,
    bytes: u64,
    modified: SystemTime,
}

/// Trims the cache in `dir` to at most `max_bytes` of live entries, never
/// removing the entry named `keep` (the one just stored).
pub fn trim(dir: &Dir, keep: &str, max_bytes: u64) -> io::Result<Trimmed> {
    let now = SystemTime::now();
    // A key made "in the future" means the clock went back since: every
    // entry would look older than it, so no entry is called dead.
    let key_made = stat(dir, super::key::KEY_FILE)?
        .map(|key| key.modified)
        .filter(|made| *made <= now);
    let mut trimmed = Trimmed::default();
    let mut live = Vec::new();
    for name in names(dir)? {
        let Some(found) = stat(dir, &name)? else {
            continue;
        };
        if is_temporary(&name) {
            let age = now.duration_since(found.modified).unwrap_or_default();
            if age >= STALE_TEMP && remove(dir, &found, &mut trimmed.bytes) {
                trimmed.leftovers += 1;
            }
        } else if !is_entry(&name) || name == keep {
            continue;
        } else if key_made.is_some_and(|made| found.modified < made) {
            if remove(dir, &found, &mut trimmed.bytes) {
                trimmed.dead += 1;
            }
        } else {
            live.push(found);
        }
    }
    let kept_first = stat(dir, keep)?.map_or(0, |entry| entry.bytes);
    live.sort_by_key(|found| std::cmp::Reverse(found.modified));
    let mut total = kept_first;
    for found in live {
        total = total.saturating_add(found.bytes);
        if total > max_bytes && remove(dir, &found, &mut trimmed.bytes) {
            trimmed.evicted += 1;
        }
    }
    Ok(trimmed)
}

/// Marks a loaded entry as used now, so [`trim`] keeps it over entries
/// used longer ago. A failure only costs the entry its place.
pub fn touch(file: &File) {
    let times = [
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
        libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_NOW,
        },
    ];
    // SAFETY: `times` holds two valid timespecs and outlives the call; the
    // descriptor is open.
    unsafe { libc::futimens(file.as_raw_fd(), times.as_ptr()) };
}

/// Whether `name` is an entry's: `<64 hex>-<16 hex>.cwasm`.
fn is_entry(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".cwasm") else {
        return false;
    };
    let Some((digest, tag)) = stem.split_once('-') else {
        return false;
    };
    let hex =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_hexdigit());
    hex(digest, 64) && hex(tag, 16)
}

/// Whether `name` is one of [`private::write`]'s temporary files.
fn is_temporary(name: &str) -> bool {
    name.starts_with(private::TEMP_PREFIX)
}

/// Removes `found`, adding its size to `freed`; whether it was removed (a
/// file another shim removed first does not count).
fn remove(dir: &Dir, found: &Found, freed: &mut u64) -> bool {
    let Ok(name) = CString::new(found.name.as_bytes()) else {
        return false;
    };
    // SAFETY: `name` is NUL-terminated and outlives the call.
    if unsafe { libc::unlinkat(dir.fd().as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return false;
    }
    *freed += found.bytes;
    true
}

/// `name` in `dir` without following a symbolic link: `None` unless it is
/// a regular file of this user (or it vanished).
fn stat(dir: &Dir, name: &str) -> io::Result<Option<Found>> {
    let c_name = CString::new(name.as_bytes())?;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `c_name` is NUL-terminated, `st` is valid for one `stat`.
    let status = unsafe {
        libc::fstatat(
            dir.fd().as_raw_fd(),
            c_name.as_ptr(),
            st.as_mut_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if status != 0 {
        let err = io::Error::last_os_error();
        return match err.kind() {
            io::ErrorKind::NotFound => Ok(None),
            _ => Err(err),
        };
    }
    // SAFETY: fstatat succeeded, so it filled `st`.
    let st = unsafe { st.assume_init() };
    if st.st_mode & libc::S_IFMT != libc::S_IFREG || st.st_uid != private::euid() {
        return Ok(None);
    }
    let modified = SystemTime::UNIX_EPOCH
        + Duration::new(
            u64::try_from(st.st_mtime).unwrap_or(0),
            u32::try_from(st.st_mtime_nsec).unwrap_or(0),
        );
    Ok(Some(Found {
        name: name.to_owned(),
        bytes: u64::try_from(st.st_size).unwrap_or(0),
        modified,
    }))
}

/// The names in `dir` (UTF-8 ones only: the cache makes no others), read
/// through a duplicate of its descriptor.
fn names(dir: &Dir) -> io::Result<Vec<String>> {
    // SAFETY: dup of an open descriptor; the result is owned below.
    let dup = unsafe { libc::fcntl(dir.fd().as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `dup` is a fresh descriptor nothing else owns.
    let dup = unsafe { OwnedFd::from_raw_fd(dup) };
    let stream = Stream::open(dup)?;
    let mut names = Vec::new();
    loop {
        // SAFETY: the stream is open; readdir's entry lives until the next
        // call on this stream, and its name is copied before that.
        let entry = unsafe { libc::readdir(stream.0) };
        if entry.is_null() {
            break;
        }
        // SAFETY: a non-null entry has a NUL-terminated name.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if let Ok(name) = name.to_str()
            && name != "."
            && name != ".."
        {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// A directory stream, closed on drop.
struct Stream(*mut libc::DIR);

impl Stream {
    fn open(fd: OwnedFd) -> io::Result<Stream> {
        use std::os::fd::IntoRawFd;
        let raw = fd.into_raw_fd();
        // SAFETY: `raw` is an open directory descriptor; on success the
        // stream owns it.
        let stream = unsafe { libc::fdopendir(raw) };
        if stream.is_null() {
            let err = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `raw` is still ours to close.
            drop(unsafe { OwnedFd::from_raw_fd(raw) });
            return Err(err);
        }
        // The duplicate shares its offset with the original: start over.
        // SAFETY: the stream is open.
        unsafe { libc::rewinddir(stream) };
        Ok(Stream(stream))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the stream is open and closed only here.
        unsafe { libc::closedir(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_dirs::private_test_home as home;
    use std::path::Path;

    fn entry_name(n: u8) -> String {
        format!("{}-{}.cwasm", format!("{n:02x}").repeat(32), "ab".repeat(8))
    }

    /// Writes `name` with `len` bytes, last modified `age` ago.
    fn put(dir: &Dir, name: &str, len: usize, age: Duration) {
        assert!(private::write(dir, name, &vec![7; len], true).unwrap());
        set_age(dir, name, age);
    }

    fn set_age(dir: &Dir, name: &str, age: Duration) {
        set_modified(dir, name, SystemTime::now() - age);
    }

    fn set_modified(dir: &Dir, name: &str, when: SystemTime) {
        let (_, file) = private::open_file(dir, name, u64::MAX).unwrap();
        file.set_modified(when).unwrap();
    }

    fn present(dir: &Dir) -> Vec<String> {
        let mut names = names(dir).unwrap();
        names.sort();
        names
    }

    fn cache_dir(home: &Path) -> Dir {
        private::open_chain(home, Path::new(".cache/octet-wasm"))
            .unwrap()
            .1
    }

    #[test]
    fn names_follow_the_cache_s_own_pattern() {
        assert!(is_entry(&entry_name(1)));
        assert!(!is_entry("key"));
        assert!(!is_entry(&entry_name(1).replace(".cwasm", ".wasm")));
        assert!(!is_entry(&format!("{}-ab.cwasm", "0".repeat(64))));
        assert!(!is_entry(&format!(
            "{}-{}.cwasm",
            "g".repeat(64),
            "0".repeat(16)
        )));
    }

    #[test]
    fn keeps_the_most_recently_used_within_the_bound() {
        let home = home();
        let dir = cache_dir(home.path());
        put(&dir, "key", 32, Duration::from_secs(3 * 86400));
        for (n, days) in [(1, 2), (2, 1), (3, 0)] {
            put(
                &dir,
                &entry_name(n),
                100,
                Duration::from_secs(days * 86400 + 60),
            );
        }
        put(&dir, &entry_name(4), 100, Duration::ZERO);
        let trimmed = trim(&dir, &entry_name(4), 300).unwrap();
        assert_eq!(
            trimmed,
            Trimmed {
                evicted: 1,
                bytes: 100,
                ..Trimmed::default()
            }
        );
        let mut expected = vec![entry_name(2), entry_name(3), entry_name(4), "key".into()];
        expected.sort();
        assert_eq!(present(&dir), expected, "the oldest entry went");
        // Touching the oldest remaining entry saves it from the next trim.
        let (_, file) = private::open_file(&dir, &entry_name(2), 1000).unwrap();
        touch(&file);
        put(&dir, &entry_name(5), 100, Duration::ZERO);
        trim(&dir, &entry_name(5), 300).unwrap();
        assert!(present(&dir).contains(&entry_name(2)));
        assert!(!present(&dir).contains(&entry_name(3)));
    }

    #[test]
    fn entries_older_than_the_key_go_and_the_kept_one_stays() {
        let home = home();
        let dir = cache_dir(home.path());
        put(&dir, &entry_name(1), 10, Duration::from_secs(7200));
        put(&dir, &entry_name(2), 10, Duration::from_secs(7200));
        put(&dir, "key", 32, Duration::from_secs(3600));
        put(&dir, &entry_name(3), 10, Duration::from_secs(60));
        // The kept entry stays even when it alone is over the bound.
        let trimmed = trim(&dir, &entry_name(2), 5).unwrap();
        assert_eq!(trimmed.dead, 1);
        assert_eq!(trimmed.evicted, 1);
        assert_eq!(present(&dir), [entry_name(2), "key".into()]);
    }

    #[test]
    fn a_key_from_the_future_calls_no_entry_dead() {
        let home = home();
        let dir = cache_dir(home.path());
        put(&dir, &entry_name(1), 10, Duration::from_secs(60));
        assert!(private::write(&dir, "key", &[0; 32], true).unwrap());
        set_modified(&dir, "key", SystemTime::now() + Duration::from_secs(86400));
        assert_eq!(trim(&dir, "none", MAX_BYTES).unwrap(), Trimmed::default());
        assert!(present(&dir).contains(&entry_name(1)));
    }

    #[test]
    fn only_old_leftovers_and_only_the_cache_s_files_are_removed() {
        let home = home();
        let dir = cache_dir(home.path());
        let old_temp = format!("{}1-1-1", private::TEMP_PREFIX);
        let new_temp = format!("{}2-2-2", private::TEMP_PREFIX);
        put(&dir, &old_temp, 10, Duration::from_secs(2 * 3600));
        put(&dir, &new_temp, 10, Duration::from_secs(60));
        put(&dir, "notes.txt", 10, Duration::from_secs(86400));
        // A symbolic link with an entry's name is not followed or counted.
        let outside = home.path().join("outside");
        std::fs::write(&outside, b"not the cache's").unwrap();
        std::os::unix::fs::symlink(
            &outside,
            home.path().join(".cache/octet-wasm").join(entry_name(9)),
        )
        .unwrap();
        let trimmed = trim(&dir, "none", 0).unwrap();
        assert_eq!(trimmed.leftovers, 1);
        assert_eq!(trimmed.evicted, 0);
        let mut expected = vec![new_temp, "notes.txt".into(), entry_name(9)];
        expected.sort();
        assert_eq!(present(&dir), expected);
        assert_eq!(std::fs::read(&outside).unwrap(), b"not the cache's");
    }
}
