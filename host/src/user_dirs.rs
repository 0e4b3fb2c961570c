//! The user's own directories, found without trusting the environment.
//!
//! octet clears the environment of an extension and then applies the
//! manifest's `[entrypoint].env`, so `HOME`, `XDG_CACHE_HOME`,
//! `XDG_CONFIG_HOME` and every `OCTET_WASM_*` variable are chosen by the
//! extension's author, the party the sandbox protects the user from. What
//! the shim trusts (compiled native code, the user's ceilings) therefore
//! lives under the home directory the *user database* names for the
//! effective uid, never under a path read from the environment or the
//! command line.

pub mod trusted_path;

use std::path::{Component, Path, PathBuf};

/// The effective user's home directory from the user database
/// ([`crate::user_db`]), or `None` when no database names one. Looked up
/// once per process: the cache, its guard and the policy all ask. `None`
/// is logged once, as one line: the shim then starts with the built-in
/// ceilings and no compiled cache.
pub fn home_dir() -> Option<PathBuf> {
    static HOME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    HOME.get_or_init(look_up_home).clone()
}

fn look_up_home() -> Option<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    match crate::user_db::home(uid) {
        Ok(Some((home, _))) => Some(home),
        Ok(None) => {
            crate::log!(crate::log::Level::Error, "no user database names a home directory for this user (not /etc/passwd, nscd or systemd's user database); the built-in ceilings apply and nothing is cached",
                "uid" => uid);
            None
        }
        Err(why) => {
            crate::log!(crate::log::Level::Error, "cannot look up this user's home directory; the built-in ceilings apply and nothing is cached",
                "uid" => uid, "error" => why);
            None
        }
    }
}

/// `<home>/.cache/octet-wasm`: the compiled-component cache.
pub fn cache_dir() -> Option<PathBuf> {
    home_dir().map(|home| home.join(".cache").join("octet-wasm"))
}

/// The policy file as people write its path, in messages. It lives here,
/// beside the directory it names, so the runtime's messages can name it
/// without importing the policy layer above it.
pub const POLICY_FILE: &str = "~/.config/octet-wasm/policy.toml";

/// `<home>/.config/octet-wasm`: the user's policy (ceilings).
pub fn config_dir() -> Option<PathBuf> {
    home_dir().map(|home| home.join(".config").join("octet-wasm"))
}

/// `<home>/.local/state/octet-wasm`: what the shim records for the user
/// (usage receipts), never read back by `run`.
pub fn state_dir() -> Option<PathBuf> {
    home_dir().map(|home| home.join(STATE_BELOW_HOME))
}

/// [`state_dir`] below the home directory.
pub const STATE_BELOW_HOME: &str = ".local/state/octet-wasm";

/// Whether `path` lies inside (or is) `root`, comparing the two as the
/// kernel resolves them: both are canonicalised when they exist (so a
/// symlinked workspace or cache is seen through), and compared lexically
/// after normalisation otherwise.
pub fn is_within(path: &Path, root: &Path) -> bool {
    let path = resolved(path);
    let root = resolved(root);
    path.starts_with(&root)
}

/// The canonical form of `path`, or of its longest existing ancestor with
/// the rest appended (a file that does not exist yet still resolves to where
/// it would be created).
fn resolved(path: &Path) -> PathBuf {
    let mut existing = normalised(path);
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            let mut full = canonical;
            full.extend(rest.iter().rev());
            return full;
        }
        match (
            existing.file_name().map(|n| n.to_owned()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return normalised(path),
        }
    }
}

/// `path` made absolute against the current directory, with `.` and `..`
/// removed lexically.
fn normalised(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let mut out = PathBuf::from("/");
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// A temporary directory standing for a user's home in tests: private
/// (0700), as the shim requires of the directories it writes under.
#[cfg(test)]
pub(crate) fn private_test_home() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    home
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_comes_from_the_user_database() {
        // Whatever HOME says (a test cannot safely change it for the whole
        // process), the answer is an absolute directory.
        let home = home_dir().expect("the test user has a passwd entry");
        assert!(home.is_absolute());
        assert!(cache_dir().unwrap().starts_with(&home));
        assert!(config_dir().unwrap().ends_with(".config/octet-wasm"));
        assert!(state_dir().unwrap().starts_with(&home));
        assert!(state_dir().unwrap().ends_with(".local/state/octet-wasm"));
    }

    #[test]
    fn containment_sees_through_dots_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        assert!(is_within(&root.join("a/b"), &root));
        assert!(is_within(&link.join("new-file"), &root));
        assert!(is_within(&root, &link));
        assert!(!is_within(&root.join("../elsewhere"), &root));
        assert!(!is_within(dir.path(), &root));
    }
}
