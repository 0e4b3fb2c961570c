//! Opening a directory only through components the user alone controls.
//!
//! What the shim trusts under the home (the policy, the compiled cache, the
//! receipts) is only as safe as every directory on the way there: one link
//! or one directory someone else can write, anywhere from `/` down, lets
//! that someone swap what lies below. The walk opens each component with
//! `openat(O_PATH | O_NOFOLLOW)` relative to the descriptor of the one
//! before and judges the descriptor itself (`fstat`), so nothing can be
//! swapped between the check and the use. The rules:
//!
//! - on the way to the home directory, a symbolic link is followed only
//!   when root owns it (the system's own layout, such as `/home ->
//!   /var/home`); a link owned by the user or by anyone else is refused,
//!   since the user's own links are also what a guest writing through a
//!   granted directory can make. Below the home no link is followed at
//!   all, root's included: for a user who is root, root's links are the
//!   ones a guest makes;
//! - a directory must be owned by root or by the user and writable by
//!   nobody else, except a root-owned sticky directory (`/tmp`) on the way,
//!   where others may create names but not replace the user's or root's
//!   (the next component must then be owned by the user or root); the
//!   directory the walk ends at is never one others can write.

use std::collections::VecDeque;
use std::ffi::{CString, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

/// Symbolic links followed in one walk before it is refused (the kernel's
/// own limit).
const MAX_LINKS: usize = 40;

/// The effective uid.
pub fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// `openat(parent, name, flags, mode)` as an owned descriptor.
pub fn openat(
    parent: libc::c_int,
    name: &Path,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let name = c_name(name)?;
    // SAFETY: `name` is NUL-terminated and outlives the call; the result is
    // a fresh descriptor we take ownership of below.
    let fd = unsafe { libc::openat(parent, name.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a valid descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn c_name(name: &Path) -> io::Result<CString> {
    CString::new(name.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte"))
}

/// `fstat` of a descriptor (an `O_PATH` one too).
pub fn metadata(fd: &OwnedFd) -> io::Result<Metadata> {
    File::from(fd.try_clone()?).metadata()
}

/// Refuses a directory someone other than `owners` could write to.
pub fn check_dir(meta: &Metadata, path: &Path, owners: &[u32]) -> Result<(), String> {
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", path.display()));
    }
    if !owners.contains(&meta.uid()) {
        return Err(format!(
            "{} is owned by uid {}, not by this user ({}){}",
            path.display(),
            meta.uid(),
            euid(),
            if owners.contains(&0) { " or root" } else { "" }
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is writable by group or others (mode {:o}; fix: chmod go-w {})",
            path.display(),
            meta.mode() & 0o7777,
            path.display()
        ));
    }
    Ok(())
}

/// Whether `meta` is a root-owned sticky directory: others may add names
/// to it but not remove or rename the ones they do not own.
fn is_sticky_root(meta: &Metadata) -> bool {
    meta.is_dir() && meta.uid() == 0 && meta.mode() & libc::S_ISVTX != 0
}

/// Opens the directory `below` (plain names, no link followed) inside the
/// absolute `home` (walked from `/`, root's links followed) for reading,
/// under the rules above. `Ok(None)`: a component does not exist (nothing
/// there can be the user's). `Err`: one line naming the component refused
/// and why.
pub fn open_dir(home: &Path, below: &Path) -> Result<Option<OwnedFd>, String> {
    if !home.is_absolute() {
        return Err(format!("{} is not an absolute path", home.display()));
    }
    let mut names: VecDeque<(OsString, bool)> = components(home)
        .into_iter()
        .map(|name| (name, true))
        .collect();
    for component in below.components() {
        let Component::Normal(name) = component else {
            return Err(format!(
                "{} is not a plain path below {}",
                below.display(),
                home.display()
            ));
        };
        names.push_back((name.to_owned(), false));
    }
    let root = openat(
        libc::AT_FDCWD,
        Path::new("/"),
        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )
    .map_err(|err| format!("cannot open /: {err}"))?;
    let root_meta = metadata(&root).map_err(|err| format!("cannot stat /: {err}"))?;
    check_dir(&root_meta, Path::new("/"), &[0, euid()])?;
    // The directories walked so far (the last one is where the next name
    // is opened) and the path they spell, for messages.
    let mut stack: Vec<(OwnedFd, Metadata)> = vec![(root, root_meta)];
    let mut walked = PathBuf::from("/");
    let mut links = 0;
    while let Some((name, follow)) = names.pop_front() {
        if name == ".." {
            if stack.len() > 1 {
                stack.pop();
                walked.pop();
            }
            continue;
        }
        let (parent, parent_meta) = stack.last().expect("the stack holds /");
        let here = walked.join(&name);
        let fd = match openat(
            parent.as_raw_fd(),
            Path::new(&name),
            libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0,
        ) {
            Ok(fd) => fd,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(format!("cannot open {}: {err}", here.display())),
        };
        let meta = metadata(&fd).map_err(|err| format!("cannot stat {}: {err}", here.display()))?;
        if is_sticky_root(parent_meta) && ![0, euid()].contains(&meta.uid()) {
            return Err(format!(
                "{} is owned by uid {} inside the shared directory {}; only this user's ({}) or root's entries there are trusted",
                here.display(),
                meta.uid(),
                walked.display(),
                euid()
            ));
        }
        let file_type = meta.file_type();
        if file_type.is_symlink() {
            if !follow {
                return Err(format!(
                    "{} is a symbolic link; below the home directory octet-wasm follows none",
                    here.display()
                ));
            }
            if meta.uid() != 0 {
                return Err(format!(
                    "{} is a symbolic link owned by uid {}; on the way to the home directory only root's links (the system layout) are followed",
                    here.display(),
                    meta.uid()
                ));
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(format!(
                    "more than {MAX_LINKS} symbolic links on the way to {}",
                    home.display()
                ));
            }
            let target = read_link(&fd)
                .map_err(|err| format!("cannot read the link {}: {err}", here.display()))?;
            if target.is_absolute() {
                stack.truncate(1);
                walked = PathBuf::from("/");
            }
            for name in components(&target).into_iter().rev() {
                names.push_front((name, true));
            }
            continue;
        }
        if !file_type.is_dir() {
            let what = if file_type.is_file() {
                "a file"
            } else if file_type.is_fifo() || file_type.is_socket() {
                "a special file"
            } else {
                "not a directory"
            };
            return Err(format!(
                "{} is {what}, where a directory was expected",
                here.display()
            ));
        }
        // A shared sticky directory is passed on the way, never ended at.
        let passed_through = is_sticky_root(&meta) && !names.is_empty();
        if !passed_through {
            check_dir(&meta, &here, &[0, euid()])?;
        }
        walked = here;
        stack.push((fd, meta));
    }
    let (fd, _) = stack.pop().expect("the stack holds /");
    // The same directory, reopened through its own `O_PATH` descriptor, so
    // no name is looked up again.
    let dir = openat(
        fd.as_raw_fd(),
        Path::new("."),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )
    .map_err(|err| format!("cannot open {}: {err}", walked.display()))?;
    Ok(Some(dir))
}

/// The names of `path`, `..` kept (the walk pops for it), `.` and `/`
/// dropped.
fn components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// The target of the symbolic link `fd` was opened on (`O_PATH`).
fn read_link(fd: &OwnedFd) -> io::Result<PathBuf> {
    let mut buffer = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: the empty name reads the link `fd` itself; `buffer` is valid
    // for `buffer.len()` bytes.
    let len = unsafe {
        libc::readlinkat(
            fd.as_raw_fd(),
            c"".as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    if len < 0 {
        return Err(io::Error::last_os_error());
    }
    buffer.truncate(len as usize);
    Ok(PathBuf::from(OsString::from_vec(buffer)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A private directory under the system's temporary directory (`/tmp`
    /// is root's and sticky: the walk accepts it on the way).
    fn private_dir() -> tempfile::TempDir {
        crate::user_dirs::private_test_home()
    }

    fn mkdir(path: &Path, mode: u32) {
        std::fs::create_dir(path).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn open(path: &Path) -> Result<Option<OwnedFd>, String> {
        open_dir(path, Path::new(""))
    }

    fn refused(path: &Path) -> String {
        match open(path) {
            Err(why) => why,
            Ok(found) => panic!("{} was not refused: {found:?}", path.display()),
        }
    }

    #[test]
    fn a_private_chain_opens_and_a_missing_one_is_none() {
        let dir = private_dir();
        mkdir(&dir.path().join("a"), 0o700);
        mkdir(&dir.path().join("a/b"), 0o755);
        let fd = open(&dir.path().join("a/b")).unwrap().unwrap();
        let meta = metadata(&fd).unwrap();
        let expected = std::fs::metadata(dir.path().join("a/b")).unwrap();
        assert_eq!((meta.dev(), meta.ino()), (expected.dev(), expected.ino()));
        assert!(open(&dir.path().join("a/missing/c")).unwrap().is_none());
        assert!(open(Path::new("/")).unwrap().is_some());
        // `..` is walked, not resolved lexically.
        assert!(open(&dir.path().join("a/b/../b")).unwrap().is_some());
        assert!(refused(Path::new("relative")).contains("absolute"));
    }

    #[test]
    fn a_directory_others_can_write_is_refused_anywhere_on_the_way() {
        let dir = private_dir();
        mkdir(&dir.path().join("shared"), 0o770);
        mkdir(&dir.path().join("shared/mine"), 0o700);
        let why = refused(&dir.path().join("shared/mine"));
        assert!(
            why.contains("shared is writable by group or others"),
            "{why}"
        );
        mkdir(&dir.path().join("open"), 0o757);
        let why = refused(&dir.path().join("open"));
        assert!(why.contains("writable by group or others"), "{why}");
    }

    #[test]
    fn a_root_owned_sticky_directory_is_passed_only_on_the_way() {
        if euid() != 0 {
            // Only root can make a root-owned directory; `/tmp` is one and
            // is walked by every test here.
            return;
        }
        let dir = private_dir();
        let sticky = dir.path().join("sticky");
        mkdir(&sticky, 0o1777);
        mkdir(&sticky.join("mine"), 0o700);
        assert!(open(&sticky.join("mine")).unwrap().is_some());
        let why = refused(&sticky);
        assert!(why.contains("writable by group or others"), "{why}");
        let theirs = sticky.join("theirs");
        mkdir(&theirs, 0o700);
        std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        let why = refused(&theirs);
        assert!(why.contains("owned by uid 65534"), "{why}");
    }

    #[test]
    fn links_are_followed_only_when_root_owns_them() {
        let dir = private_dir();
        let real = dir.path().join("real");
        mkdir(&real, 0o700);
        mkdir(&real.join("below"), 0o700);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("real", &link).unwrap();
        let relative_from_link = dir.path().join("up");
        std::os::unix::fs::symlink("real/below/..", &relative_from_link).unwrap();
        let owner = std::fs::symlink_metadata(&link).unwrap().uid();
        if owner == 0 {
            // Root's link (the system layout): followed, relative targets
            // resolved from the link's directory.
            let through = open(&link.join("below")).unwrap().unwrap();
            let meta = metadata(&through).unwrap();
            let expected = std::fs::metadata(real.join("below")).unwrap();
            assert_eq!(meta.ino(), expected.ino());
            let up = open(&relative_from_link).unwrap().unwrap();
            assert_eq!(
                metadata(&up).unwrap().ino(),
                std::fs::metadata(&real).unwrap().ino()
            );
            // Anyone else's link is refused, the user's included (when
            // the user is not root).
            std::os::unix::fs::lchown(&link, Some(65534), None).unwrap();
            let why = refused(&link.join("below"));
            assert!(why.contains("symbolic link owned by uid 65534"), "{why}");
        } else {
            let why = refused(&link.join("below"));
            assert!(
                why.contains(&format!("symbolic link owned by uid {owner}")),
                "{why}"
            );
        }
    }

    #[test]
    fn a_system_link_such_as_lib_is_followed() {
        // Merged-/usr systems make `/lib` root's link to `usr/lib`.
        let lib = Path::new("/lib");
        let is_root_link =
            std::fs::symlink_metadata(lib).is_ok_and(|meta| meta.is_symlink() && meta.uid() == 0);
        if !is_root_link {
            return;
        }
        let fd = open(lib).unwrap().unwrap();
        assert_eq!(
            metadata(&fd).unwrap().ino(),
            std::fs::metadata(lib).unwrap().ino()
        );
    }

    #[test]
    fn a_foreign_directory_or_a_file_on_the_way_is_refused() {
        let dir = private_dir();
        std::fs::write(dir.path().join("file"), b"x").unwrap();
        let why = refused(&dir.path().join("file/below"));
        assert!(why.contains("is a file"), "{why}");
        if euid() != 0 {
            return;
        }
        let theirs = dir.path().join("theirs");
        mkdir(&theirs, 0o755);
        std::os::unix::fs::chown(&theirs, Some(65534), None).unwrap();
        let why = refused(&theirs);
        assert!(why.contains("owned by uid 65534"), "{why}");
    }

    #[test]
    fn no_link_is_followed_below_the_home_whoever_owns_it() {
        let dir = private_dir();
        mkdir(&dir.path().join("real"), 0o700);
        std::os::unix::fs::symlink("real", dir.path().join("link")).unwrap();
        let why = open_dir(dir.path(), Path::new("link")).unwrap_err();
        assert!(
            why.contains("below the home directory octet-wasm follows none"),
            "{why}"
        );
        assert!(open_dir(dir.path(), Path::new("real")).unwrap().is_some());
        assert!(
            open_dir(dir.path(), Path::new("real/none"))
                .unwrap()
                .is_none()
        );
        let why = open_dir(dir.path(), Path::new("../x")).unwrap_err();
        assert!(why.contains("not a plain path"), "{why}");
    }

    #[test]
    fn link_loops_end() {
        let dir = private_dir();
        std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
        let why = refused(&dir.path().join("loop"));
        assert!(
            why.contains("more than 40 symbolic links") || why.contains("owned by uid"),
            "{why}"
        );
    }
}
