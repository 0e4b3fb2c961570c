//! The user's ceilings on what an extension may take.
//!
//! Everything an extension's author ships is a request: the memory, fuel
//! and deadlines in the `run` arguments or the component's metadata
//! section, and the capabilities in its manifest. The user's ceilings win
//! over all of them. They come from one file, found through the user
//! database and never through the environment (which the extension's
//! manifest sets, see [`crate::user_dirs`]):
//!
//! ```toml
//! # <home>/.config/octet-wasm/policy.toml (every key optional)
//! memory_mib = 512          # guest memory of the whole process, all instances together
//! fuel = 10_000_000_000     # per call; every call is metered once this is set
//!
//! [deadlines]               # milliseconds
//! command = 600_000         # up to 1_799_000: commands started from octet's options menu
//! cancel_grace = 500        # up to 1_500
//!
//! [capabilities]            # the most a manifest's [capabilities] can be granted
//! filesystem = "workspace"  # none | workspace | unrestricted
//! network = false
//! environment = ["GITHUB_TOKEN"]   # the only variables a guest may be given
//!
//! [extension."hello-world"] # by the manifest's name; overrides the keys above
//! memory_mib = 1024
//! [extension."hello-world".capabilities]
//! network = true
//! ```
//!
//! Deadline names: `request`, `command`, `before_prompt`, `after_response`,
//! `before_persistence`, `post_mutation`, `render`, `menu`, `lifecycle`,
//! `cancel_grace`. Each value is both the ceiling and what applies when the
//! extension asks for nothing; no value passes the host's own deadline
//! minus a margin ([`crate::protocol::deadlines::Bound::cap`]), so a policy
//! can raise only `command` (attended menu commands), `lifecycle` and
//! `cancel_grace` beyond the built-in ceilings.
//!
//! Without a file the built-in ceilings apply: 256 MiB for the process, no
//! fuel metering, the deadlines' defaults (cancel grace up to 1 s), and
//! whatever capabilities the manifest asks (the user consented to them
//! there).
//!
//! A file that is there but cannot be used fails closed: `run` and
//! `compile` refuse to start ([`load_for_start`]), with one error naming
//! the file and, for a file that is not a valid policy (an unknown key, a
//! bad value, a TOML syntax error), the line, column and key
//! ([`Invalid`]). Falling back to the built-in ceilings instead would
//! loosen what the user wrote: a misspelt key beside `filesystem = "none"`
//! would give the workspace back. The same holds for a file the user alone
//! cannot have written (a symbolic link, not owned by the user, writable by
//! group or others) or one reached through a directory the user alone does
//! not control (`file`: every ancestor from `/` passes the ancestor checks
//! of [`crate::user_dirs::trusted_path`]). Only a file that does not exist
//! (with every directory above it trusted) means the built-in ceilings.

mod ceilings;
pub mod clamp;
mod file;
mod format;
pub mod report;
mod trust;

pub use ceilings::{BUILT_IN_MEMORY_MIB, Ceilings};
pub use clamp::{Clamp, Origin};
pub use format::{Invalid, Table};

use crate::log::Level;
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::user_dirs::POLICY_FILE;

/// The policy file below the home directory.
const BELOW_HOME: &str = ".config/octet-wasm/policy.toml";

/// The policy file of the effective user (from the user database), if the
/// user has a home directory.
pub fn path() -> Option<PathBuf> {
    crate::user_dirs::home_dir().map(|home| home.join(BELOW_HOME))
}

/// The ceilings in force for one extension.
#[derive(Debug, Clone)]
pub struct Policy {
    pub ceilings: Ceilings,
    /// The file they came from; `None`: the built-in ceilings.
    pub file: Option<PathBuf>,
    /// Whether this extension's `[extension."<name>"]` table applied.
    pub table: Table,
    /// Values of the file lowered to the caps no policy can pass.
    pub notes: Vec<String>,
    /// Whose signatures the user accepts, and whether one is required.
    pub trust: crate::signing::TrustPolicy,
}

impl Policy {
    pub fn built_in() -> Policy {
        Policy {
            ceilings: Ceilings::built_in(),
            file: None,
            table: Table::Absent,
            notes: Vec::new(),
            trust: crate::signing::TrustPolicy::default(),
        }
    }

    /// Whether an `[extension."<name>"]` table applied.
    pub fn extension_table(&self) -> bool {
        self.table == Table::Applied
    }

    /// The SHA-256 this extension's table is pinned to, when that is not
    /// the running component's (so only the file's top level applied).
    pub fn table_pinned_elsewhere(&self) -> Option<&str> {
        match &self.table {
            Table::NotThisComponent { pinned } => Some(pinned),
            _ => None,
        }
    }

    /// Where the ceilings came from, for reports.
    pub fn source(&self) -> String {
        match &self.file {
            None => "built in (no policy file)".into(),
            Some(path) if self.extension_table() => {
                format!("{} (with this extension's own table)", path.display())
            }
            Some(path) if self.table_pinned_elsewhere().is_some() => format!(
                "{} (this extension's own table is pinned to another component: not applied)",
                path.display()
            ),
            Some(path) => path.display().to_string(),
        }
    }
}

/// Why the policy file could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The user database names no home directory for the effective user.
    NoHome,
    /// The file exists but only someone else could have written it, or it
    /// cannot be read.
    Refused { path: PathBuf, reason: String },
    /// The file is not a valid policy.
    Invalid { path: PathBuf, error: Invalid },
}

impl From<trust::FileProblem> for Problem {
    /// A publishers file the policy names is as much the policy as the
    /// policy file: the same refusals apply to it.
    fn from(problem: trust::FileProblem) -> Problem {
        match problem.invalid {
            Some((line, message)) => Problem::Invalid {
                path: problem.path,
                error: Invalid {
                    line,
                    column: 1,
                    key: Some("trust.publishers".into()),
                    message,
                },
            },
            None => Problem::Refused {
                path: problem.path,
                reason: problem.refused.unwrap_or_default(),
            },
        }
    }
}

impl Problem {
    /// Whether `run` and `compile` refuse to start over it: every problem
    /// with a file that is there. A user without a home has no file to
    /// loosen anything with, so the built-in ceilings apply.
    pub fn refuses_start(&self) -> bool {
        !matches!(self, Problem::NoHome)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NoHome => write!(
                f,
                "the user database names no home directory for this user, so there is no policy file"
            ),
            Problem::Refused { path, reason } => write!(
                f,
                "the policy file {} cannot be trusted: {reason}",
                path.display()
            ),
            Problem::Invalid { path, error } => {
                write!(
                    f,
                    "the policy file {} is invalid at {error}",
                    path.display()
                )
            }
        }
    }
}

/// The ceilings for `extension` (the manifest's name, as octet passes it
/// in `OCTET_EXTENSION_NAME`) running the component whose SHA-256 is
/// `digest` (a table pinned to another one does not apply), from the
/// user's policy file, and what was wrong with the file, if anything (the
/// built-in ceilings apply then).
pub fn load(extension: Option<&str>, digest: Option<&str>) -> (Policy, Option<Problem>) {
    match crate::user_dirs::home_dir() {
        Some(home) => load_from(&home, extension, digest),
        None => (Policy::built_in(), Some(Problem::NoHome)),
    }
}

/// [`load`] for the user whose home is `home`.
pub fn load_from(
    home: &Path,
    extension: Option<&str>,
    digest: Option<&str>,
) -> (Policy, Option<Problem>) {
    let path = &home.join(BELOW_HOME);
    let text = match file::read(home, Path::new(BELOW_HOME)) {
        Ok(text) => text,
        Err(file::Unusable::Missing) => return (Policy::built_in(), None),
        Err(file::Unusable::Refused(reason)) => {
            let problem = Problem::Refused {
                path: path.to_owned(),
                reason,
            };
            return (Policy::built_in(), Some(problem));
        }
    };
    match format::parse(&text, extension, digest) {
        Ok((settings, table)) => {
            let trust = match trust::resolve(&settings.trust, home) {
                Ok(trust) => trust,
                Err(problem) => return (Policy::built_in(), Some(Problem::from(problem))),
            };
            let (ceilings, notes) = Ceilings::from_settings(&settings);
            let policy = Policy {
                ceilings,
                file: Some(path.to_owned()),
                table,
                notes,
                trust,
            };
            (policy, None)
        }
        Err(error) => {
            let problem = Problem::Invalid {
                path: path.to_owned(),
                error,
            };
            (Policy::built_in(), Some(problem))
        }
    }
}

/// What `run` and `compile` do when the policy file cannot be used: they
/// do not start (the message is what octet shows for the extension).
pub const REFUSAL: &str = "octet-wasm does not start until it is fixed or removed";

/// [`load`] for `run` and `compile`: the ceilings, with what applies
/// logged, or (for a file that is there but cannot be used) the one-line
/// error they refuse to start with, logged once with the file, line,
/// column and key as fields.
pub fn load_for_start(extension: Option<&str>, digest: Option<&str>) -> Result<Policy, String> {
    let (policy, problem) = load(extension, digest);
    match &problem {
        None => {}
        Some(problem @ Problem::NoHome) => {
            crate::log!(Level::Warning, "no policy file; the built-in ceilings apply",
            "error" => problem.to_string())
        }
        Some(problem @ Problem::Refused { path, reason }) => {
            let message = format!("{problem}; {REFUSAL}");
            crate::log!(Level::Error, &message,
            "path" => path.display().to_string(), "error" => reason.clone());
            return Err(message);
        }
        Some(problem @ Problem::Invalid { path, error }) => {
            let message = format!("{problem}; {REFUSAL}");
            crate::log!(Level::Error, &message,
            "path" => path.display().to_string(), "line" => error.line, "column" => error.column,
            "key" => error.key.clone(), "error" => error.message.clone());
            return Err(message);
        }
    }
    if let Some(pinned) = policy.table_pinned_elsewhere() {
        crate::log!(Level::Warning, "this extension's policy table is pinned to another component; only the file's top level applies",
            "extension" => extension, "pinned_sha256" => pinned, "component_sha256" => digest);
    }
    for note in &policy.notes {
        crate::log!(Level::Warning, "policy value past what octet-wasm allows; lowered",
            "path" => policy.file.as_ref().map(|p| p.display().to_string()), "detail" => note.clone());
    }
    let c = &policy.ceilings;
    crate::log!(Level::Debug, "ceilings in force",
        "source" => policy.source(),
        "memory_mib" => c.memory_mib,
        "fuel" => c.fuel,
        "deadlines_ms" => clamp::deadline_list(&c.deadlines).into_iter().collect::<std::collections::BTreeMap<_, _>>());
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A home holding the policy file `text` with `mode`, and the file's
    /// path.
    fn policy_file(text: &str, mode: u32) -> (tempfile::TempDir, PathBuf) {
        let home = crate::user_dirs::private_test_home();
        let path = home.path().join(BELOW_HOME);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        (home, path)
    }

    #[test]
    fn a_valid_file_gives_its_ceilings_per_extension() {
        let (home, path) = policy_file(
            "memory_mib = 64\n[extension.big]\nmemory_mib = 1024\n",
            0o600,
        );
        let (policy, problem) = load_from(home.path(), Some("small"), None);
        assert_eq!(problem, None);
        assert_eq!(policy.ceilings.memory_mib, 64);
        assert!(!policy.extension_table());
        assert_eq!(policy.source(), path.display().to_string());
        let (policy, _) = load_from(home.path(), Some("big"), None);
        assert_eq!(policy.ceilings.memory_mib, 1024);
        assert!(policy.source().contains("this extension's own table"));
    }

    #[test]
    fn a_table_pinned_to_another_component_is_not_applied() {
        let pin = "0f".repeat(32);
        let (home, _) = policy_file(
            &format!("memory_mib = 64\n[extension.big]\nmemory_mib = 1024\nsha256 = \"{pin}\"\n"),
            0o600,
        );
        let (policy, problem) = load_from(home.path(), Some("big"), Some(&"11".repeat(32)));
        assert_eq!(problem, None);
        assert_eq!(policy.ceilings.memory_mib, 64);
        assert!(!policy.extension_table());
        assert_eq!(policy.table_pinned_elsewhere(), Some(pin.as_str()));
        assert!(policy.source().contains("pinned to another component"));
        let (policy, _) = load_from(home.path(), Some("big"), Some(&pin));
        assert_eq!(policy.ceilings.memory_mib, 1024);
        assert_eq!(policy.table_pinned_elsewhere(), None);
    }

    #[test]
    fn a_broken_or_untrusted_file_is_a_problem_that_refuses_start() {
        let (home, path) = policy_file(
            "memory_mib = 4096\n[capabilities]\nfilesystem = \"none\"\nnetwrok = false\n",
            0o600,
        );
        let (_, problem) = load_from(home.path(), None, None);
        let problem = problem.expect("a typo is a problem");
        assert!(problem.refuses_start());
        let Problem::Invalid { error, .. } = &problem else {
            panic!("{problem:?}");
        };
        assert_eq!((error.line, error.column), (4, 1));
        assert_eq!(error.key.as_deref(), Some("capabilities.netwrok"));
        let text = problem.to_string();
        assert!(
            text.contains(&path.display().to_string())
                && text.contains("line 4, column 1, key `capabilities.netwrok`"),
            "{text}"
        );

        let (home, _) = policy_file("memory_mib = 4096\n", 0o620);
        let (_, problem) = load_from(home.path(), None, None);
        assert!(
            matches!(&problem, Some(Problem::Refused { reason, .. }) if reason.contains("group")),
            "{problem:?}"
        );
        assert!(problem.unwrap().refuses_start());
        assert!(!Problem::NoHome.refuses_start());
    }

    #[test]
    fn no_file_is_the_built_in_ceilings_without_a_problem() {
        let dir = crate::user_dirs::private_test_home();
        let (policy, problem) = load_from(dir.path(), Some("x"), None);
        assert_eq!(problem, None);
        assert_eq!(policy.file, None);
        assert_eq!(policy.ceilings, Ceilings::built_in());
    }

    #[test]
    fn the_file_lives_under_the_users_home_from_the_user_database() {
        let path = path().expect("the test user has a home");
        assert!(path.ends_with(".config/octet-wasm/policy.toml"));
        assert!(path.starts_with(crate::user_dirs::home_dir().unwrap()));
    }
}
