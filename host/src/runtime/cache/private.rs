//! File operations inside the private cache directory, by descriptor.
//!
//! Every directory from `/` down to the home is walked by
//! [`trusted_path::open_dir`] (root's links only, every directory root's or
//! this user's and writable by nobody else), every directory below the
//! home is opened with `openat` and `O_NOFOLLOW` and checked on the
//! descriptor itself (`fstat`), and every later operation is relative to
//! the cache directory's descriptor. A path checked once and opened again
//! later could be swapped in between (a symlink, a renamed directory); a
//! descriptor cannot.

use crate::user_dirs::trusted_path::{self, c_name, check_dir, metadata, openat};
use rustix::fs::AtFlags;
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::user_dirs::trusted_path::euid;

/// An open directory that passed the checks of [`open_chain`].
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

impl Dir {
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }
}

/// Opens the home directory `home` through [`trusted_path::open_dir`] (so
/// it and every directory above it pass the ancestor checks: a link there
/// is followed only when root owns it), then each directory of `below`
/// inside it, creating missing ones with mode 0700. Each below the home
/// must be a real directory (not a symlink) owned by this user and
/// writable by nobody else.
pub fn open_chain(home: &Path, below: &Path) -> Result<(Dir, Dir), String> {
    chain(home, below, true)?.ok_or_else(|| "the cache directory vanished".to_owned())
}

/// Like [`open_chain`] without creating anything: `Ok(None)` when a
/// directory on the way does not exist.
#[cfg(test)]
pub fn open_existing(home: &Path, below: &Path) -> Result<Option<Dir>, String> {
    Ok(chain(home, below, false)?.map(|(_, dir)| dir))
}

fn chain(home: &Path, below: &Path, create: bool) -> Result<Option<(Dir, Dir)>, String> {
    let home_fd = trusted_path::open_dir(home, Path::new(""))?
        .ok_or_else(|| format!("the home directory {} does not exist", home.display()))?;
    let home_dir = Dir { fd: home_fd };
    let mut current: Option<OwnedFd> = None;
    let mut path = home.to_path_buf();
    for component in below.components() {
        let Component::Normal(name) = component else {
            return Err(format!(
                "the cache path {} is not a plain path below the home directory",
                below.display()
            ));
        };
        path.push(name);
        let parent = current.as_ref().unwrap_or(&home_dir.fd).as_raw_fd();
        let fd = match open_dir(parent, Path::new(name), false) {
            Err(err) if err.kind() == io::ErrorKind::NotFound && !create => return Ok(None),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                mkdir(parent, Path::new(name))
                    .map_err(|err| format!("cannot create {}: {err}", path.display()))?;
                open_dir(parent, Path::new(name), false)
            }
            other => other,
        }
        .map_err(|err| describe_open_error(&path, err))?;
        let meta = metadata(&fd).map_err(|err| format!("cannot stat {}: {err}", path.display()))?;
        check_dir(&meta, &path, &[euid()])?;
        current = Some(fd);
    }
    let dir = current.ok_or_else(|| "the cache path is empty".to_owned())?;
    Ok(Some((home_dir, Dir { fd: dir })))
}

fn describe_open_error(path: &Path, err: io::Error) -> String {
    // `O_NOFOLLOW | O_DIRECTORY` on a symlink fails with ENOTDIR; look at
    // the path again only to word the message.
    let symlink = std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_symlink());
    match err.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) if symlink => format!(
            "{} is a symbolic link; octet-wasm's private directories must be real directories",
            path.display()
        ),
        Some(libc::ENOTDIR) => format!("{} is not a directory", path.display()),
        _ => format!("cannot open {}: {err}", path.display()),
    }
}

fn open_dir(parent: libc::c_int, name: &Path, follow: bool) -> io::Result<OwnedFd> {
    let mut flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    openat(parent, name, flags, 0)
}

fn mkdir(parent: libc::c_int, name: &Path) -> io::Result<()> {
    let name = c_name(name)?;
    // SAFETY: `name` is NUL-terminated and outlives the call.
    if unsafe { libc::mkdirat(parent, name.as_ptr(), 0o700) } != 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::AlreadyExists {
            return Err(err);
        }
    }
    Ok(())
}

/// Why a file in the cache directory was not read.
#[derive(Debug)]
pub enum ReadError {
    /// There is no such file.
    Missing,
    /// There is one, but it is not ours to trust (the text says why).
    Refused(String),
    Io(io::Error),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Missing => f.write_str("it does not exist"),
            ReadError::Refused(why) => f.write_str(why),
            ReadError::Io(err) => write!(f, "{err}"),
        }
    }
}

/// Opens `name` for reading: it must be a regular file (not a symlink)
/// owned by this user, of at most `max` bytes. Returns its metadata too.
pub fn open_file(dir: &Dir, name: &str, max: u64) -> Result<(Metadata, File), ReadError> {
    let fd = openat(
        dir.fd.as_raw_fd(),
        Path::new(name),
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK,
        0,
    )
    .map_err(|err| match err.raw_os_error() {
        Some(libc::ENOENT) => ReadError::Missing,
        Some(libc::ELOOP) => ReadError::Refused("it is a symbolic link".into()),
        _ => ReadError::Io(err),
    })?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(ReadError::Io)?;
    if !meta.is_file() {
        return Err(ReadError::Refused("it is not a regular file".into()));
    }
    if meta.uid() != euid() {
        return Err(ReadError::Refused(format!(
            "it is owned by uid {}, not by this user ({})",
            meta.uid(),
            euid()
        )));
    }
    if meta.len() > max {
        return Err(ReadError::Refused(format!(
            "it is {} bytes, more than the {max} an entry may have",
            meta.len()
        )));
    }
    Ok((meta, file))
}

/// Reads `name` whole, with the checks of [`open_file`] (tests: the cache
/// itself reads entries through `open_file` into a sealed memfd).
#[cfg(test)]
pub fn read(dir: &Dir, name: &str, max: u64) -> Result<(Metadata, Vec<u8>), ReadError> {
    let (meta, file) = open_file(dir, name, max)?;
    let bytes = read_from(&file, 0, max)?;
    Ok((meta, bytes))
}

/// Reads an opened file from `offset` to its end, refusing more than `max`
/// bytes (a file that grew past its checked size).
pub fn read_from(file: &File, offset: u64, max: u64) -> Result<Vec<u8>, ReadError> {
    let mut file = file;
    file.seek(SeekFrom::Start(offset)).map_err(ReadError::Io)?;
    let len = file
        .metadata()
        .map_or(0, |meta| meta.len().saturating_sub(offset));
    let mut bytes = Vec::with_capacity(len.min(max) as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > max {
        return Err(ReadError::Refused("it grew while being read".into()));
    }
    Ok(bytes)
}

/// How [`write`]'s temporary files are named.
pub const TEMP_PREFIX: &str = ".tmp-";

/// Writes `bytes` to a fresh temporary file (mode 0600) and moves it to
/// `name`: replacing what is there when `replace`, else only if `name` does
/// not exist yet (returns `false` when another writer got there first). A
/// reader never sees a partial file.
pub fn write(dir: &Dir, name: &str, bytes: &[u8], replace: bool) -> io::Result<bool> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let temp = format!(
        "{TEMP_PREFIX}{}-{}-{nonce}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let fd = openat(
        dir.fd.as_raw_fd(),
        Path::new(&temp),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        0o600,
    )?;
    let mut file = File::from(fd);
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    let moved = written.and_then(|()| {
        let (from, to) = (Path::new(&temp), Path::new(name));
        let status = if replace {
            rustix::fs::renameat(&dir.fd, from, &dir.fd, to)
        } else {
            rustix::fs::linkat(&dir.fd, from, &dir.fd, to, AtFlags::empty())
        };
        let Err(err) = status else {
            return Ok(true);
        };
        let err = io::Error::from(err);
        if !replace && err.kind() == io::ErrorKind::AlreadyExists {
            return Ok(false);
        }
        Err(err)
    });
    if !(replace && matches!(moved, Ok(true))) {
        let _ = remove(dir, &temp);
    }
    moved
}

/// Creates `name` in `dir` for writing: always a new regular file, mode
/// 0600, never an existing file and never through a symbolic link planted
/// under that name (`O_CREAT | O_EXCL | O_NOFOLLOW`).
pub fn create_new(dir: &Dir, name: &str) -> io::Result<File> {
    let fd = openat(
        dir.fd.as_raw_fd(),
        Path::new(name),
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        0o600,
    )?;
    Ok(File::from(fd))
}

/// Removes `name`; whether it was there (a missing file is not an error).
pub fn remove(dir: &Dir, name: &str) -> io::Result<bool> {
    if let Err(err) = rustix::fs::unlinkat(&dir.fd, Path::new(name), AtFlags::empty()) {
        let err = io::Error::from(err);
        if err.kind() != io::ErrorKind::NotFound {
            return Err(err);
        }
        return Ok(false);
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    use crate::user_dirs::private_test_home as home;

    #[test]
    fn creates_missing_directories_private() {
        let home = home();
        let (_, dir) = open_chain(home.path(), Path::new(".cache/octet-wasm")).unwrap();
        let mode = std::fs::metadata(home.path().join(".cache/octet-wasm"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        assert!(write(&dir, "entry", b"one", true).unwrap());
        assert!(write(&dir, "entry", b"two", true).unwrap());
        assert!(!write(&dir, "entry", b"three", false).unwrap());
        assert_eq!(read(&dir, "entry", 16).unwrap().1, b"two");
        let leftovers: Vec<_> = std::fs::read_dir(home.path().join(".cache/octet-wasm"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, ["entry"], "temporary files are cleaned up");
        assert!(matches!(read(&dir, "entry", 2), Err(ReadError::Refused(_))));
        assert!(remove(&dir, "entry").unwrap());
        assert!(matches!(read(&dir, "entry", 16), Err(ReadError::Missing)));
    }

    #[test]
    fn refuses_symlinks_and_shared_directories_anywhere_below_home() {
        let home = home();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), home.path().join(".cache")).unwrap();
        let err = open_chain(home.path(), Path::new(".cache/octet-wasm")).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");

        let home = self::home();
        std::fs::create_dir(home.path().join(".cache")).unwrap();
        std::fs::set_permissions(
            home.path().join(".cache"),
            std::fs::Permissions::from_mode(0o775),
        )
        .unwrap();
        let err = open_chain(home.path(), Path::new(".cache/octet-wasm")).unwrap_err();
        assert!(err.contains("writable by group or others"), "{err}");

        let home = self::home();
        std::fs::create_dir_all(home.path().join(".cache/octet-wasm")).unwrap();
        std::fs::set_permissions(
            home.path().join(".cache/octet-wasm"),
            std::fs::Permissions::from_mode(0o757),
        )
        .unwrap();
        let err = open_chain(home.path(), Path::new(".cache/octet-wasm")).unwrap_err();
        assert!(err.contains("writable by group or others"), "{err}");
    }

    #[test]
    fn refuses_a_home_reached_through_a_link_or_a_shared_directory_above_it() {
        let outer = home();
        let real = outer.path().join("real-home");
        std::fs::create_dir(&real).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = outer.path().join("home");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        if euid() == 0 {
            // Root's own link is the system layout (followed); make it
            // someone else's.
            assert!(open_chain(&link, Path::new(".cache/octet-wasm")).is_ok());
            std::fs::remove_dir_all(real.join(".cache")).unwrap();
            std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
        }
        let err = open_chain(&link, Path::new(".cache/octet-wasm")).unwrap_err();
        assert!(err.contains("symbolic link owned by uid"), "{err}");
        assert!(!real.join(".cache").exists(), "created through the link");

        std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o770)).unwrap();
        let err = open_existing(&real, Path::new(".cache/octet-wasm")).unwrap_err();
        assert!(err.contains("writable by group or others"), "{err}");
    }

    #[test]
    fn create_new_makes_a_private_file_and_never_follows_or_reuses_a_name() {
        let home = home();
        let (_, dir) = open_chain(home.path(), Path::new("c")).unwrap();
        let mut file = create_new(&dir, "fresh").unwrap();
        file.write_all(b"line\n").unwrap();
        let meta = std::fs::metadata(home.path().join("c/fresh")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let err = create_new(&dir, "fresh").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        let target = home.path().join("target");
        std::os::unix::fs::symlink(&target, home.path().join("c/link")).unwrap();
        assert!(create_new(&dir, "link").is_err());
        assert!(!target.exists(), "the link's target was created");
    }

    #[test]
    fn refuses_symlinked_and_special_files() {
        let home = home();
        let (_, dir) = open_chain(home.path(), Path::new("c")).unwrap();
        let target = home.path().join("target");
        std::fs::write(&target, b"x").unwrap();
        std::os::unix::fs::symlink(&target, home.path().join("c/link")).unwrap();
        let err = read(&dir, "link", 16).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        std::fs::create_dir(home.path().join("c/sub")).unwrap();
        let err = read(&dir, "sub", 16).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
