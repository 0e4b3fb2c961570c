//! The receipts file: where it may be, how it is created, and its cap.
//!
//! The directory is `<home>/.local/state/octet-wasm/receipts`, the home
//! from the user database. Every directory from `/` to the home passes the
//! ancestor checks (`user_dirs::trusted_path`: root's links only, each
//! directory root's or the user's and writable by nobody else), every one
//! below the home is opened by descriptor without following links and must
//! be the user's and writable by nobody else (the compiled cache's own
//! helpers, `runtime::cache::private`); missing ones are made with mode
//! 0700. The
//! file is always new (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600): a link
//! or file planted under its name is never followed or appended to; the
//! next name is tried instead. A directory the guest can reach (inside the
//! extension directory, the workspace, the scratch directory or a granted
//! directory, decided as for the compiled cache) is refused.

use crate::log::Level;
use crate::runtime::Sandbox;
use crate::runtime::cache::private::{self, Dir};
use crate::runtime::cache::{self, Reach};
use crate::user_dirs;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The receipts directory below the home directory.
pub const BELOW_HOME: &str = ".local/state/octet-wasm/receipts";

/// The most one file may grow to (64 MiB: about 200,000 requests); later
/// records are dropped and counted in the summary.
pub const CAP_BYTES: u64 = 64 << 20;

/// Kept free below the cap for the summary, which is always written.
const SUMMARY_RESERVE: u64 = 4 * 1024;

/// Longest extension name in a file name.
const MAX_STEM: usize = 64;

/// Names tried after `<stem>-<pid>.jsonl` is taken.
const MORE_NAMES: u32 = 8;

/// An extension name as a file name: letters, digits, `.`, `_` and `-`
/// (anything else becomes `_`), at most 64 bytes, never hidden or empty.
pub fn file_stem(name: &str) -> String {
    let mut stem: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_STEM)
        .collect();
    if stem.starts_with('.') {
        stem.replace_range(..1, "_");
    }
    if stem.is_empty() {
        stem.push_str("extension");
    }
    stem
}

/// This process's open receipts file.
pub struct Writer {
    file: File,
    path: PathBuf,
    written: u64,
    cap: u64,
    dropped: u64,
    failed: bool,
}

impl Writer {
    /// Opens a new file for the extension `stem` in the user's receipts
    /// directory, unless the guest of `sandbox` or the extension could
    /// reach that directory (`reach`).
    pub fn open(stem: &str, reach: &Reach, sandbox: &Sandbox) -> Result<Writer, String> {
        let home =
            user_dirs::home_dir().ok_or("this user has no home directory in the user database")?;
        let dir = home.join(BELOW_HOME);
        if let Some((what, root)) = reach.containing(&[&dir]) {
            return Err(format!(
                "the receipts directory {} lies inside the {what} {}, whose files the extension controls",
                dir.display(),
                root.display()
            ));
        }
        if let Some(root) = cache::granted_root(sandbox, &[&dir]) {
            return Err(format!(
                "the guest is granted {}, which contains the receipts directory {}",
                root.display(),
                dir.display()
            ));
        }
        Writer::create(&home, Path::new(BELOW_HOME), stem, CAP_BYTES)
    }

    /// Opens a new file named for `stem` and this process in `below`
    /// (inside `home`), capped at `cap` bytes.
    fn create(home: &Path, below: &Path, stem: &str, cap: u64) -> Result<Writer, String> {
        let (_, dir) = private::open_chain(home, below)?;
        let dir_path = home.join(below);
        let (file, name) = create_file(&dir, stem).map_err(|err| {
            format!(
                "cannot create a receipts file in {}: {err}",
                dir_path.display()
            )
        })?;
        Ok(Writer {
            file,
            path: dir_path.join(name),
            written: 0,
            cap,
            dropped: 0,
            failed: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Records not written (past the cap, or after a write failed).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Appends one record; drops (and counts) it past the cap.
    pub fn line(&mut self, text: &str) {
        let bytes = text.len() as u64 + 1;
        let room = self.cap.saturating_sub(SUMMARY_RESERVE);
        if self.failed || self.written + bytes > room {
            if self.dropped == 0 && !self.failed {
                crate::log!(Level::Warning, "the receipts file reached its cap; further records are dropped and counted in its summary",
                    "file" => self.path.display().to_string(), "cap_bytes" => self.cap);
            }
            self.dropped += 1;
            return;
        }
        if let Err(err) = self.append(text) {
            self.failed = true;
            self.dropped += 1;
            crate::log!(Level::Warning, "cannot write the receipts file; further records are dropped",
                "file" => self.path.display().to_string(), "error" => err.to_string());
        }
    }

    /// Appends the summary, which the reserve below the cap always fits.
    pub fn summary(&mut self, text: &str) {
        if self.written + (text.len() as u64) < self.cap {
            let _ = self.append(text);
        }
    }

    fn append(&mut self, text: &str) -> io::Result<()> {
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.written += line.len() as u64;
        Ok(())
    }
}

/// A new file `<stem>-<pid>.jsonl`, or, when that name is taken (a
/// reused pid, or something planted there), `<stem>-<pid>-<ms>[-<n>].jsonl`.
fn create_file(dir: &Dir, stem: &str) -> io::Result<(File, String)> {
    let pid = std::process::id();
    let ms = super::record::unix_ms();
    let names = std::iter::once(format!("{stem}-{pid}.jsonl"))
        .chain(std::iter::once(format!("{stem}-{pid}-{ms}.jsonl")))
        .chain((1..=MORE_NAMES).map(|n| format!("{stem}-{pid}-{ms}-{n}.jsonl")));
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for name in names {
        match private::create_new(dir, &name) {
            Ok(file) => return Ok((file, name)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = err,
            Err(err) => return Err(err),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    use crate::user_dirs::private_test_home as home;

    #[test]
    fn stems_are_plain_file_names() {
        assert_eq!(file_stem("hello-world"), "hello-world");
        assert_eq!(file_stem("../../etc/passwd"), "_._.._etc_passwd");
        assert_eq!(file_stem(".hidden"), "_hidden");
        assert_eq!(file_stem(""), "extension");
        assert_eq!(file_stem("é x"), "__x");
        assert_eq!(file_stem(&"a".repeat(200)).len(), MAX_STEM);
    }

    #[test]
    fn files_are_new_private_and_named_for_the_process() {
        let home = home();
        let below = Path::new(BELOW_HOME);
        let mut first = Writer::create(home.path(), below, "probe", CAP_BYTES).unwrap();
        first.line("{}");
        let name = first
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(name, format!("probe-{}.jsonl", std::process::id()));
        let meta = std::fs::metadata(first.path()).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        for dir in [".local/state/octet-wasm", BELOW_HOME] {
            let mode = std::fs::metadata(home.path().join(dir))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "{dir}");
        }
        // The same process again (or a reused pid): a new name, the first
        // file untouched.
        let second = Writer::create(home.path(), below, "probe", CAP_BYTES).unwrap();
        assert_ne!(second.path(), first.path());
        assert_eq!(std::fs::read_to_string(first.path()).unwrap(), "{}\n");
    }

    #[test]
    fn a_planted_link_is_never_followed() {
        let home = home();
        let dir = home.path().join(BELOW_HOME);
        std::fs::create_dir_all(&dir).unwrap();
        let target = home.path().join("victim");
        let planted = dir.join(format!("probe-{}.jsonl", std::process::id()));
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let mut writer =
            Writer::create(home.path(), Path::new(BELOW_HOME), "probe", CAP_BYTES).unwrap();
        writer.line("{}");
        assert!(!target.exists(), "the link was followed");
        assert!(std::fs::symlink_metadata(&planted).unwrap().is_symlink());
        assert_ne!(writer.path(), planted);

        // A linked directory on the way is refused outright.
        let home = self::home();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".local/state")).unwrap();
        std::os::unix::fs::symlink(
            elsewhere.path(),
            home.path().join(".local/state/octet-wasm"),
        )
        .unwrap();
        let err = Writer::create(home.path(), Path::new(BELOW_HOME), "probe", CAP_BYTES)
            .err()
            .unwrap();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_home_below_a_shared_or_foreign_directory_gets_no_receipts() {
        let outer = home();
        let inner = outer.path().join("home");
        std::fs::create_dir(&inner).unwrap();
        std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let err = Writer::create(&inner, Path::new(BELOW_HOME), "probe", CAP_BYTES)
            .err()
            .unwrap();
        assert!(err.contains("writable by group or others"), "{err}");
        assert!(!inner.join(".local").exists());
    }

    #[test]
    fn past_the_cap_records_are_dropped_and_the_summary_still_fits() {
        let home = home();
        let cap = SUMMARY_RESERVE + 100;
        let mut writer = Writer::create(home.path(), Path::new("r"), "probe", cap).unwrap();
        let record = "x".repeat(39);
        for _ in 0..5 {
            writer.line(&record);
        }
        assert_eq!(writer.dropped(), 3, "two 40-byte lines fit in 100 bytes");
        writer.summary(&"s".repeat(2_000));
        let text = std::fs::read_to_string(writer.path()).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text.len() as u64 <= cap);
        assert!(text.ends_with(&format!("{}\n", "s".repeat(2_000))));
    }
}
