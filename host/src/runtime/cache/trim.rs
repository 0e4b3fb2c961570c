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
//! Only names the cache itself makes are considered, only files
//! [`private::open_file`] accepts (regular, this user's, no symbolic link),
//! and only by [`private::remove`] relative to the checked directory's
//! descriptor (`unlinkat` never follows a link). A shim still loading an
//! entry another shim removes keeps the copy it already opened.

use super::entry::Binding;
use super::private::{self, Dir, ReadError};
use std::fs::File;
use std::io;
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

/// One file of the cache directory, as its metadata showed it.
struct Found {
    name: String,
    bytes: u64,
    modified: SystemTime,
}

/// Trims the cache in `dir` to at most `max_bytes` of live entries, never
/// removing the entry named `keep` (the one just stored). Entries last
/// modified before `key_made` were sealed under an earlier key.
pub fn trim(dir: &Dir, keep: &str, max_bytes: u64, key_made: SystemTime) -> io::Result<Trimmed> {
    let now = SystemTime::now();
    // A key made "in the future" means the clock went back since: every
    // entry would look older than it, so no entry is called dead.
    let key_made = Some(key_made).filter(|made| *made <= now);
    let mut trimmed = Trimmed::default();
    let mut kept_bytes = 0;
    let mut live = Vec::new();
    for name in names(dir)? {
        let is_temporary = name.starts_with(private::TEMP_PREFIX);
        if !is_temporary && !Binding::is_file_name(&name) {
            continue;
        }
        let Some(found) = found(dir, &name)? else {
            continue;
        };
        if is_temporary {
            let age = now.duration_since(found.modified).unwrap_or_default();
            if age >= STALE_TEMP && remove(dir, &found, &mut trimmed.bytes) {
                trimmed.leftovers += 1;
            }
        } else if name == keep {
            kept_bytes = found.bytes;
        } else if key_made.is_some_and(|made| found.modified < made) {
            if remove(dir, &found, &mut trimmed.bytes) {
                trimmed.dead += 1;
            }
        } else {
            live.push(found);
        }
    }
    live.sort_by_key(|found| std::cmp::Reverse(found.modified));
    let mut total = kept_bytes;
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
    let _ = file.set_modified(SystemTime::now());
}

/// Removes `found`, adding its size to `freed`; whether it was removed (a
/// file another shim removed first, or one that cannot be removed, does not
/// count and stops nothing).
fn remove(dir: &Dir, found: &Found, freed: &mut u64) -> bool {
    let removed = matches!(private::remove(dir, &found.name), Ok(true));
    if removed {
        *freed += found.bytes;
    }
    removed
}

/// `name` in `dir`, if [`private::open_file`] accepts it; `None` when it
/// is missing or refused (not regular, another user's, a symbolic link).
fn found(dir: &Dir, name: &str) -> io::Result<Option<Found>> {
    let meta = match private::open_file(dir, name, u64::MAX) {
        Ok((meta, _)) => meta,
        Err(ReadError::Missing | ReadError::Refused(_)) => return Ok(None),
        Err(ReadError::Io(err)) => return Err(err),
    };
    Ok(Some(Found {
        name: name.to_owned(),
        bytes: meta.len(),
        modified: meta.modified()?,
    }))
}

/// The names in `dir` (UTF-8 ones only: the cache makes no others), read
/// through a fresh open of the same directory (`openat(fd, ".")`).
fn names(dir: &Dir) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir.fd())? {
        if let Ok(name) = entry?.file_name().to_str()
            && name != "."
            && name != ".."
        {
            names.push(name.to_owned());
        }
    }
    Ok(names)
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
    fn keeps_the_most_recently_used_within_the_bound() {
        let home = home();
        let dir = cache_dir(home.path());
        let key_made = SystemTime::now() - Duration::from_secs(3 * 86400);
        for (n, days) in [(1, 2), (2, 1), (3, 0)] {
            put(
                &dir,
                &entry_name(n),
                100,
                Duration::from_secs(days * 86400 + 60),
            );
        }
        put(&dir, &entry_name(4), 100, Duration::ZERO);
        let trimmed = trim(&dir, &entry_name(4), 300, key_made).unwrap();
        assert_eq!(
            trimmed,
            Trimmed {
                evicted: 1,
                bytes: 100,
                ..Trimmed::default()
            }
        );
        let mut expected = vec![entry_name(2), entry_name(3), entry_name(4)];
        expected.sort();
        assert_eq!(present(&dir), expected, "the oldest entry went");
        // Touching the oldest remaining entry saves it from the next trim.
        let (_, file) = private::open_file(&dir, &entry_name(2), 1000).unwrap();
        touch(&file);
        put(&dir, &entry_name(5), 100, Duration::ZERO);
        trim(&dir, &entry_name(5), 300, key_made).unwrap();
        assert!(present(&dir).contains(&entry_name(2)));
        assert!(!present(&dir).contains(&entry_name(3)));
    }

    #[test]
    fn entries_older_than_the_key_go_and_the_kept_one_stays() {
        let home = home();
        let dir = cache_dir(home.path());
        put(&dir, &entry_name(1), 10, Duration::from_secs(7200));
        put(&dir, &entry_name(2), 10, Duration::from_secs(7200));
        let key_made = SystemTime::now() - Duration::from_secs(3600);
        put(&dir, &entry_name(3), 10, Duration::from_secs(60));
        // The kept entry stays even when it alone is over the bound.
        let trimmed = trim(&dir, &entry_name(2), 5, key_made).unwrap();
        assert_eq!(trimmed.dead, 1);
        assert_eq!(trimmed.evicted, 1);
        assert_eq!(present(&dir), [entry_name(2)]);
    }

    #[test]
    fn a_key_from_the_future_calls_no_entry_dead() {
        let home = home();
        let dir = cache_dir(home.path());
        put(&dir, &entry_name(1), 10, Duration::from_secs(60));
        let key_made = SystemTime::now() + Duration::from_secs(86400);
        assert_eq!(
            trim(&dir, "none", MAX_BYTES, key_made).unwrap(),
            Trimmed::default()
        );
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
        let trimmed = trim(&dir, "none", 0, SystemTime::UNIX_EPOCH).unwrap();
        assert_eq!(trimmed.leftovers, 1);
        assert_eq!(trimmed.evicted, 0);
        let mut expected = vec![new_temp, "notes.txt".into(), entry_name(9)];
        expected.sort();
        assert_eq!(present(&dir), expected);
        assert_eq!(std::fs::read(&outside).unwrap(), b"not the cache's");
    }
}
