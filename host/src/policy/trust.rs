//! `[trust]`: whose signatures the user accepts, and whether one is
//! required.
//!
//! ```toml
//! [trust]
//! publishers = ["ssh-ed25519 AAAA... alice@example", "~/.ssh/allowed_signers"]
//! require_signature = true
//! ```
//!
//! An entry is a public key line or the path (absolute, or `~/` for the
//! home) of a file in git's `allowed_signers` format, read under the same
//! checks as the policy file itself (only the user can have written it):
//! a file an extension could write would let it add its own key.
//!
//! An extension's table (`[extension."<name>".trust]`) adds publishers and
//! can add the requirement, but lifts it only when the table is pinned by
//! `sha256` to the running component: the name comes from the bundle's own
//! manifest, so an unpinned table is one any bundle can claim.

use super::file;
use crate::signing::TrustPolicy;
use crate::signing::keys::{self, Publisher};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// `[trust]` as written.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustTable {
    pub publishers: Option<Vec<String>>,
    pub require_signature: Option<bool>,
    /// The dotted key of the `require_signature = true` in force.
    #[serde(skip)]
    pub required_by: Option<String>,
}

impl TrustTable {
    /// Notes which key of `table` (dotted, `""` for the top level) sets the
    /// requirement.
    pub fn locate(&mut self, table: &str) {
        if self.require_signature == Some(true) {
            self.required_by = Some(format!("{table}trust.require_signature"));
        }
    }

    /// `self` (the top level) with an extension's table `own` applied;
    /// `pinned`: that table is pinned to the running component.
    pub fn overridden(&self, own: &TrustTable, pinned: bool) -> TrustTable {
        let publishers = match (&self.publishers, &own.publishers) {
            (None, None) => None,
            (top, own) => Some(top.iter().chain(own.iter()).flatten().cloned().collect()),
        };
        let (require_signature, required_by) = match own.require_signature {
            Some(false) if pinned => (Some(false), None),
            Some(true) => (Some(true), own.required_by.clone()),
            _ => (self.require_signature, self.required_by.clone()),
        };
        TrustTable {
            publishers,
            require_signature,
            required_by,
        }
    }

    /// Entries that are neither a key line nor a path (`table` is the
    /// dotted prefix of the key, for the message).
    pub fn check(&self) -> Result<(), (Vec<String>, String)> {
        for entry in self.publishers.iter().flatten() {
            if let Entry::Invalid(message) = Entry::of(entry) {
                return Err((vec!["trust".into(), "publishers".into()], message));
            }
        }
        Ok(())
    }
}

/// One entry of `publishers`.
enum Entry {
    Key(Publisher),
    File(PathBuf),
    Invalid(String),
}

impl Entry {
    fn of(text: &str) -> Entry {
        let trimmed = text.trim();
        if trimmed.starts_with("ssh-")
            || trimmed.starts_with("ecdsa-")
            || trimmed.starts_with("sk-")
        {
            return match Publisher::parse_line(trimmed) {
                Ok(key) => Entry::Key(key),
                Err(err) => Entry::Invalid(err),
            };
        }
        if trimmed.starts_with('/') || trimmed.starts_with("~/") {
            return Entry::File(PathBuf::from(trimmed));
        }
        Entry::Invalid(format!(
            "`{}` is neither a public key line (`ssh-ed25519 AAAA...`) nor an absolute or `~/` path to an allowed_signers file",
            trimmed.chars().take(60).collect::<String>()
        ))
    }
}

/// What went wrong reading a publishers file: the file, and either why it
/// is not trusted (`refused`) or the line of its text at fault.
#[derive(Debug)]
pub struct FileProblem {
    pub path: PathBuf,
    pub refused: Option<String>,
    pub invalid: Option<(usize, String)>,
}

/// The trust `table` gives for the user whose home is `home`, reading each
/// allowed_signers file it names; lines skipped in them are logged.
pub fn resolve(table: &TrustTable, home: &Path) -> Result<TrustPolicy, FileProblem> {
    let mut publishers: Vec<Publisher> = Vec::new();
    for entry in table.publishers.iter().flatten() {
        match Entry::of(entry) {
            Entry::Key(key) => publishers.push(key),
            Entry::File(path) => publishers.extend(read_signers(&path, home)?),
            // `check` refused these when the file was parsed.
            Entry::Invalid(message) => {
                return Err(FileProblem {
                    path: PathBuf::from(entry),
                    refused: Some(message),
                    invalid: None,
                });
            }
        }
    }
    Ok(TrustPolicy {
        publishers,
        required_by: table.required_by.clone(),
    })
}

fn read_signers(path: &Path, home: &Path) -> Result<Vec<Publisher>, FileProblem> {
    let (base, below, shown) = match path.strip_prefix("~") {
        Ok(below) => (home.to_owned(), below.to_owned(), home.join(below)),
        Err(_) => (
            PathBuf::from("/"),
            path.strip_prefix("/").unwrap_or(path).to_owned(),
            path.to_owned(),
        ),
    };
    let refused = |reason: String| FileProblem {
        path: shown.clone(),
        refused: Some(reason),
        invalid: None,
    };
    let text = match file::read(&base, &below) {
        Ok(text) => text,
        Err(file::Unusable::Missing) => {
            return Err(refused(
                "the publishers file named in trust.publishers does not exist".into(),
            ));
        }
        Err(file::Unusable::Refused(reason)) => return Err(refused(reason)),
    };
    let (keys, skipped) =
        keys::parse_allowed_signers(&text).map_err(|(line, message)| FileProblem {
            path: shown.clone(),
            refused: None,
            invalid: Some((line, message)),
        })?;
    for skip in skipped {
        crate::log!(crate::log::Level::Warning, "a publishers file line is not trusted",
            "path" => shown.display().to_string(), "line" => skip.line, "reason" => skip.reason);
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::super::format::parse;
    use super::*;

    fn line(seed: u8) -> String {
        Publisher {
            key: [seed; 32],
            comment: format!("k{seed}"),
        }
        .line()
    }

    fn trust(text: &str, name: Option<&str>, digest: Option<&str>) -> TrustTable {
        parse(text, name, digest).unwrap().0.trust
    }

    #[test]
    fn the_requirement_names_the_key_that_set_it() {
        let text = format!(
            "[trust]\npublishers = [\"{}\"]\nrequire_signature = true\n",
            line(1)
        );
        let table = trust(&text, None, None);
        assert_eq!(
            table.required_by.as_deref(),
            Some("trust.require_signature")
        );
        let policy = resolve(&table, Path::new("/nonexistent")).unwrap();
        assert_eq!(policy.publishers.len(), 1);
        let own = "[extension.\"my tool\".trust]\nrequire_signature = true\n";
        assert_eq!(
            trust(own, Some("my tool"), None).required_by.as_deref(),
            Some("extension.\"my tool\".trust.require_signature")
        );
        assert_eq!(trust(own, Some("other"), None).required_by, None);
    }

    #[test]
    fn only_a_table_pinned_to_the_component_lifts_the_requirement() {
        let pin = "ab".repeat(32);
        let unpinned =
            "[trust]\nrequire_signature = true\n[extension.x.trust]\nrequire_signature = false\n";
        assert!(trust(unpinned, Some("x"), None).required_by.is_some());
        let pinned = format!(
            "[trust]\nrequire_signature = true\n[extension.x]\nsha256 = \"{pin}\"\n[extension.x.trust]\nrequire_signature = false\n"
        );
        assert_eq!(trust(&pinned, Some("x"), Some(&pin)).required_by, None);
        assert!(
            trust(&pinned, Some("x"), Some(&"cd".repeat(32)))
                .required_by
                .is_some()
        );
    }

    #[test]
    fn a_table_adds_publishers_to_the_top_level() {
        let text = format!(
            "[trust]\npublishers = [\"{}\"]\n[extension.x.trust]\npublishers = [\"{}\"]\n",
            line(1),
            line(2)
        );
        assert_eq!(trust(&text, Some("x"), None).publishers.unwrap().len(), 2);
        assert_eq!(trust(&text, Some("y"), None).publishers.unwrap().len(), 1);
    }

    #[test]
    fn bad_trust_values_are_invalid_with_their_key() {
        let err = |text: &str| parse(text, Some("x"), None).unwrap_err();
        let e = err("[trust]\npublishers = [\"ssh-rsa AAAAB3NzaC1yc2E\"]\n");
        assert_eq!(e.key.as_deref(), Some("trust.publishers"), "{e}");
        assert!(e.message.contains("ssh-ed25519"), "{e}");
        let e = err("[trust]\npublishers = [\"my laptop key\"]\n");
        assert!(e.message.contains("neither a public key line"), "{e}");
        let e = err("[trust]\nrequire_signature = \"yes\"\n");
        assert_eq!(e.key.as_deref(), Some("trust.require_signature"), "{e}");
        let e = err("[trust]\nrequire_signatures = true\n");
        assert!(e.message.contains("require_signatures"), "{e}");
        let e = err("[extension.x.trust]\npublishers = [\"ssh-ed25519 !!\"]\n");
        assert_eq!(
            e.key.as_deref(),
            Some("extension.x.trust.publishers"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_or_malformed_publishers_file_is_a_problem() {
        let home = crate::user_dirs::private_test_home();
        let table = TrustTable {
            publishers: Some(vec!["~/signers".into()]),
            ..TrustTable::default()
        };
        let problem = resolve(&table, home.path()).unwrap_err();
        assert!(problem.refused.unwrap().contains("does not exist"));
        let path = home.path().join("signers");
        std::fs::write(&path, "alice@example not-a-key\n").unwrap();
        let problem = resolve(&table, home.path()).unwrap_err();
        assert_eq!(problem.invalid.unwrap().0, 1);
        std::fs::write(&path, format!("alice@example {}\n", line(4))).unwrap();
        assert_eq!(resolve(&table, home.path()).unwrap().publishers.len(), 1);
    }
}
