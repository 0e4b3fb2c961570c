//! Reading the policy file only when the user alone can have written it.
//!
//! The file raises what an extension may take, so a file someone else
//! could write, or could swap, is no policy: every directory from `/` to
//! it passes the ancestor checks of [`trusted_path::open_dir`] (a link on
//! the way only when root owns it, each directory root's or the user's and
//! writable by nobody else), and the file must be a regular file in place
//! (not a symbolic link, which could lead into a directory an extension
//! can write), owned by the effective user, and writable by nobody else.
//! The file is opened relative to the checked directory's descriptor and
//! judged on its own descriptor, so nothing can be swapped between the
//! check and the read.

use crate::user_dirs::trusted_path;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Largest policy file read: a policy is a few hundred bytes.
const MAX_BYTES: u64 = 256 * 1024;

/// Why the file was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    /// There is no file: the built-in ceilings apply, as intended.
    Missing,
    /// The file exists but is not trusted or cannot be read.
    Refused(String),
}

/// The text of the policy file `below` the absolute `home`, if the user
/// alone controls it. A directory on the way that does not exist is
/// [`Unusable::Missing`]; one that fails the ancestor checks is refused,
/// whether or not a file lies below it (what is below could be anything).
pub fn read(home: &Path, below: &Path) -> Result<String, Unusable> {
    let (Some(parent), Some(name)) = (below.parent(), below.file_name()) else {
        return Err(Unusable::Refused(format!(
            "{} does not name a file",
            below.display()
        )));
    };
    let dir = match trusted_path::open_dir(home, parent) {
        Ok(Some(dir)) => dir,
        Ok(None) => return Err(Unusable::Missing),
        Err(reason) => return Err(Unusable::Refused(reason)),
    };
    let file = trusted_path::openat(
        dir.as_raw_fd(),
        Path::new(name),
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        0,
    )
    .map(std::fs::File::from);
    let file = match file {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(Unusable::Missing),
        Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Unusable::Refused(
                "it is a symbolic link; the policy is read only from a regular file in place"
                    .into(),
            ));
        }
        Err(err) => return Err(Unusable::Refused(format!("cannot open it: {err}"))),
    };
    let metadata = file
        .metadata()
        .map_err(|err| Unusable::Refused(format!("cannot inspect it: {err}")))?;
    trusted(&metadata).map_err(Unusable::Refused)?;
    if metadata.len() > MAX_BYTES {
        return Err(Unusable::Refused(format!(
            "it has {} bytes; a policy file may have at most {MAX_BYTES}",
            metadata.len()
        )));
    }
    let mut text = String::new();
    file.take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|err| Unusable::Refused(format!("cannot read it as UTF-8 text: {err}")))?;
    Ok(text)
}

/// Whether an opened file's metadata shows that only the effective user
/// can have written it.
fn trusted(metadata: &std::fs::Metadata) -> Result<(), String> {
    if !metadata.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    let euid = trusted_path::euid();
    if metadata.uid() != euid {
        return Err(format!(
            "it is owned by uid {}, not by the user running octet-wasm (uid {euid})",
            metadata.uid()
        ));
    }
    let mode = metadata.mode();
    if mode & 0o022 != 0 {
        return Err(format!(
            "it is writable by {} (mode {:o}); make it writable by its owner only (chmod go-w)",
            if mode & 0o002 != 0 {
                "everyone"
            } else {
                "its group"
            },
            mode & 0o777
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Reads `path` as the file below its own directory (the home).
    fn read(path: &Path) -> Result<String, Unusable> {
        super::read(path.parent().unwrap(), Path::new(path.file_name().unwrap()))
    }

    /// Reads `below` inside `home`.
    fn read_below(home: &Path, below: &str) -> Result<String, Unusable> {
        super::read(home, Path::new(below))
    }

    fn write(dir: &Path, mode: u32) -> std::path::PathBuf {
        let path = dir.join("policy.toml");
        std::fs::write(&path, "memory_mib = 64\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_private_regular_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o600, 0o644, 0o400] {
            let path = write(dir.path(), mode);
            assert_eq!(read(&path).unwrap(), "memory_mib = 64\n");
        }
    }

    #[test]
    fn a_missing_file_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            read(&dir.path().join("policy.toml")),
            Err(Unusable::Missing)
        );
    }

    fn refused(path: &Path) -> String {
        match read(path) {
            Err(Unusable::Refused(why)) => why,
            other => panic!("{} was not refused: {other:?}", path.display()),
        }
    }

    #[test]
    fn files_others_can_write_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let group = refused(&write(dir.path(), 0o664));
        assert!(group.contains("writable by its group"), "{group}");
        let world = refused(&write(dir.path(), 0o606));
        assert!(world.contains("writable by everyone"), "{world}");
    }

    #[test]
    fn links_directories_and_fifos_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = write(dir.path(), 0o600);
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(refused(&link).contains("symbolic link"));
        let subdir = dir.path().join("dir.toml");
        std::fs::create_dir(&subdir).unwrap();
        assert!(refused(&subdir).contains("not a regular file"));
        // A FIFO would block a plain open; it is opened non-blocking and
        // refused.
        let fifo = dir.path().join("fifo.toml");
        let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `name` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(refused(&fifo).contains("not a regular file"));
    }

    #[test]
    fn a_file_owned_by_someone_else_is_refused() {
        // Only root can give a file away (as on the CI and test machines);
        // for anyone else there is nothing to set up.
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), 0o600);
        std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
        assert!(refused(&path).contains("owned by uid 65534"));
    }

    fn refused_below(home: &Path, below: &str) -> String {
        match read_below(home, below) {
            Err(Unusable::Refused(why)) => why,
            other => panic!("{below} was not refused: {other:?}"),
        }
    }

    #[test]
    fn a_linked_or_shared_directory_on_the_way_is_refused() {
        let dir = crate::user_dirs::private_test_home();
        let home = dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let bundle = dir.path().join("bundle");
        std::fs::create_dir(&bundle).unwrap();
        write(&bundle, 0o600);
        // Below the home no link is followed, whoever owns it.
        std::os::unix::fs::symlink(&bundle, home.join("config")).unwrap();
        let why = refused_below(&home, "config/policy.toml");
        assert!(why.contains("symbolic link"), "{why}");
        // A link that leads nowhere is refused too: whatever is below it
        // is not the user's to vouch for.
        std::fs::remove_dir_all(&bundle).unwrap();
        let why = refused_below(&home, "config/policy.toml");
        assert!(why.contains("symbolic link"), "{why}");

        // Above the home, root's link is the system layout; anyone else's
        // is refused.
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("c")).unwrap();
        write(&real.join("c"), 0o600);
        let linked_home = dir.path().join("linked");
        std::os::unix::fs::symlink(&real, &linked_home).unwrap();
        if trusted_path::euid() == 0 {
            assert_eq!(
                read_below(&linked_home, "c/policy.toml").unwrap(),
                "memory_mib = 64\n"
            );
            std::os::unix::fs::lchown(&linked_home, Some(65534), None).unwrap();
        }
        let why = refused_below(&linked_home, "c/policy.toml");
        assert!(why.contains("symbolic link owned by uid"), "{why}");

        let shared = home.join("shared");
        std::fs::create_dir(&shared).unwrap();
        write(&shared, 0o600);
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o775)).unwrap();
        let why = refused_below(&home, "shared/policy.toml");
        assert!(why.contains("writable by group or others"), "{why}");
        // A missing directory on the way is no file, not a refusal.
        assert_eq!(
            read_below(&home, "absent/policy.toml"),
            Err(Unusable::Missing)
        );
    }

    #[test]
    fn oversized_and_binary_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, vec![b'#'; MAX_BYTES as usize + 1]).unwrap();
        assert!(refused(&path).contains("at most"));
        std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
        assert!(refused(&path).contains("UTF-8"));
    }
}
