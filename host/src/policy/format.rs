//! The policy file's TOML, parsed strictly: the user wrote it, so a key
//! octet-wasm does not know is reported rather than guessed at.

use crate::protocol::deadlines::{NAMES, PerName};
use crate::runtime::FsAccess;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The whole file: settings for every extension, and tables that override
/// them for one extension each.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    memory_mib: Option<u64>,
    fuel: Option<u64>,
    receipts: Option<bool>,
    #[serde(default)]
    deadlines: DeadlineTable,
    #[serde(default)]
    capabilities: CapabilityTable,
    /// Keyed by the extension's name (`OCTET_EXTENSION_NAME`).
    #[serde(default)]
    extension: BTreeMap<String, Settings>,
}

/// What one table sets; every key is optional.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Memory for the whole process, in MiB.
    pub memory_mib: Option<u64>,
    /// Fuel per call.
    pub fuel: Option<u64>,
    /// Usage receipts (`crate::receipts`): only the user switches them on.
    pub receipts: Option<bool>,
    #[serde(default)]
    pub deadlines: DeadlineTable,
    #[serde(default)]
    pub capabilities: CapabilityTable,
    /// Only in an `[extension."<name>"]` table: the SHA-256 of the one
    /// component the table is for. The name comes from the bundle's own
    /// manifest, so without this any bundle can claim the table.
    pub sha256: Option<String>,
}

/// Whether an `[extension."<name>"]` table applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Table {
    /// The file has no table for this name.
    Absent,
    Applied,
    /// The table is pinned to another component (or the component's digest
    /// is not known here): only the top level applies.
    NotThisComponent {
        pinned: String,
    },
}

/// `[deadlines]`: milliseconds per deadline name (`protocol::deadlines`).
pub type DeadlineTable = PerName<Option<u64>>;

impl Default for DeadlineTable {
    fn default() -> Self {
        PerName::build(|_| None)
    }
}

impl DeadlineTable {
    /// The value set for `name`, if any.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.value(name).copied().flatten()
    }

    fn entries(&self) -> [(&'static str, Option<u64>); NAMES.len()] {
        NAMES.map(|name| (name, self.get(name)))
    }

    /// `self` with every value `over` sets replaced.
    fn overridden(&self, over: &DeadlineTable) -> DeadlineTable {
        PerName::build(|name| over.get(name).or(self.get(name)))
    }
}

/// `[capabilities]`: the most a sandbox may be given.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapabilityTable {
    pub filesystem: Option<Filesystem>,
    pub network: Option<bool>,
    /// The variable names that may reach a guest.
    pub environment: Option<Vec<String>>,
}

/// The widest filesystem access, as the manifest spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Filesystem {
    None,
    Workspace,
    Unrestricted,
}

impl Filesystem {
    pub fn access(self) -> FsAccess {
        match self {
            Filesystem::None => FsAccess::None,
            Filesystem::Workspace => FsAccess::Workspace,
            Filesystem::Unrestricted => FsAccess::Unrestricted,
        }
    }
}

impl Settings {
    /// `self` with everything `over` sets replaced, key by key.
    fn overridden(&self, over: &Settings) -> Settings {
        Settings {
            memory_mib: over.memory_mib.or(self.memory_mib),
            fuel: over.fuel.or(self.fuel),
            receipts: over.receipts.or(self.receipts),
            deadlines: self.deadlines.overridden(&over.deadlines),
            capabilities: CapabilityTable {
                filesystem: over
                    .capabilities
                    .filesystem
                    .or(self.capabilities.filesystem),
                network: over.capabilities.network.or(self.capabilities.network),
                environment: over
                    .capabilities
                    .environment
                    .clone()
                    .or_else(|| self.capabilities.environment.clone()),
            },
            sha256: None,
        }
    }

    /// Values TOML accepts but a ceiling cannot be.
    fn check(&self, table: &str) -> Result<(), String> {
        let at = |key: &str| {
            if table.is_empty() {
                key.to_owned()
            } else {
                format!("{table}.{key}")
            }
        };
        if self.memory_mib == Some(0) {
            return Err(format!("{} must be at least 1", at("memory_mib")));
        }
        if self.fuel == Some(0) {
            return Err(format!("{} must be at least 1", at("fuel")));
        }
        if let Some(pin) = &self.sha256
            && !crate::runtime::cache::ComponentDigest::is_hex(pin)
        {
            return Err(format!(
                "{} must be a SHA-256 in hex (64 characters), as `octet-wasm inspect` shows it",
                at("sha256")
            ));
        }
        for (name, value) in self.deadlines.entries() {
            if value == Some(0) {
                return Err(format!(
                    "{} must be at least 1 ms",
                    at(&format!("deadlines.{name}"))
                ));
            }
        }
        Ok(())
    }
}

/// The settings that apply to `extension` running the component whose
/// SHA-256 is `digest` (the top level, overridden by `[extension."<name>"]`
/// when there is one and it is not pinned to another component), and
/// whether such a table applied.
pub fn parse(
    text: &str,
    extension: Option<&str>,
    digest: Option<&str>,
) -> Result<(Settings, Table), String> {
    let file: File = toml::from_str(text).map_err(|err| err.to_string().trim_end().to_owned())?;
    let top = Settings {
        memory_mib: file.memory_mib,
        fuel: file.fuel,
        receipts: file.receipts,
        deadlines: file.deadlines,
        capabilities: file.capabilities,
        sha256: None,
    };
    top.check("")?;
    for (name, settings) in &file.extension {
        settings.check(&format!("extension.{name:?}"))?;
    }
    match extension.and_then(|name| file.extension.get(name)) {
        None => Ok((top, Table::Absent)),
        Some(own) => match &own.sha256 {
            Some(pin) if !digest.is_some_and(|digest| digest.eq_ignore_ascii_case(pin)) => Ok((
                top,
                Table::NotThisComponent {
                    pinned: pin.clone(),
                },
            )),
            _ => Ok((top.overridden(own), Table::Applied)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
memory_mib = 128
fuel = 1_000_000

[deadlines]
command = 600_000
cancel_grace = 500

[capabilities]
filesystem = "workspace"
network = false
environment = ["GITHUB_TOKEN"]

[extension."hello-world"]
memory_mib = 512

[extension."hello-world".deadlines]
render = 300

[extension."hello-world".capabilities]
network = true
"#;

    #[test]
    fn the_top_level_applies_to_every_extension() {
        let (settings, own) = parse(SAMPLE, Some("someone-else"), None).unwrap();
        assert_eq!(own, Table::Absent);
        assert_eq!(settings.memory_mib, Some(128));
        assert_eq!(settings.fuel, Some(1_000_000));
        assert_eq!(settings.deadlines.command, Some(600_000));
        assert_eq!(settings.deadlines.render, None);
        assert_eq!(
            settings.capabilities.filesystem,
            Some(Filesystem::Workspace)
        );
        assert_eq!(settings.capabilities.network, Some(false));
        assert_eq!(
            settings.capabilities.environment.as_deref(),
            Some(&["GITHUB_TOKEN".to_owned()][..])
        );
        assert_eq!(parse(SAMPLE, None, None).unwrap().0, settings);
    }

    #[test]
    fn an_extension_table_overrides_key_by_key() {
        let (settings, own) = parse(SAMPLE, Some("hello-world"), None).unwrap();
        assert_eq!(own, Table::Applied);
        assert_eq!(settings.memory_mib, Some(512));
        assert_eq!(settings.fuel, Some(1_000_000));
        assert_eq!(settings.deadlines.render, Some(300));
        assert_eq!(settings.deadlines.command, Some(600_000));
        assert_eq!(settings.capabilities.network, Some(true));
        assert_eq!(
            settings.capabilities.filesystem,
            Some(Filesystem::Workspace)
        );
    }

    #[test]
    fn receipts_are_set_globally_and_per_extension() {
        let text = "receipts = true\n[extension.quiet]\nreceipts = false\n[extension.loud]\nmemory_mib = 64\n";
        assert_eq!(
            parse(text, Some("other"), None).unwrap().0.receipts,
            Some(true)
        );
        assert_eq!(
            parse(text, Some("loud"), None).unwrap().0.receipts,
            Some(true)
        );
        assert_eq!(
            parse(text, Some("quiet"), None).unwrap().0.receipts,
            Some(false)
        );
        let only_one = "[extension.one]\nreceipts = true\n";
        assert_eq!(
            parse(only_one, Some("one"), None).unwrap().0.receipts,
            Some(true)
        );
        assert_eq!(parse(only_one, Some("two"), None).unwrap().0.receipts, None);
        let err = parse("receipts = \"yes\"", None, None).unwrap_err();
        assert!(err.contains("receipts"), "{err}");
    }

    #[test]
    fn a_pinned_table_applies_only_to_its_component() {
        let pin = "ab".repeat(32);
        let text =
            format!("memory_mib = 64\n[extension.tool]\nmemory_mib = 1024\nsha256 = \"{pin}\"\n");
        let (settings, own) = parse(&text, Some("tool"), Some(&pin.to_uppercase())).unwrap();
        assert_eq!((settings.memory_mib, own), (Some(1024), Table::Applied));
        for digest in [Some("cd".repeat(32)), None] {
            let (settings, own) = parse(&text, Some("tool"), digest.as_deref()).unwrap();
            assert_eq!(settings.memory_mib, Some(64), "{digest:?}");
            assert_eq!(
                own,
                Table::NotThisComponent {
                    pinned: pin.clone()
                }
            );
        }
        let err = parse("[extension.tool]\nsha256 = \"abc\"\n", Some("tool"), None).unwrap_err();
        assert!(
            err.contains("extension.\"tool\".sha256 must be a SHA-256"),
            "{err}"
        );
        let err = parse("sha256 = \"abc\"\n", None, None).unwrap_err();
        assert!(err.contains("sha256"), "{err}");
    }

    #[test]
    fn an_empty_file_sets_nothing() {
        assert_eq!(
            parse("", Some("x"), None).unwrap(),
            (Settings::default(), Table::Absent)
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors_naming_them() {
        for (text, needle) in [
            ("memroy_mib = 64", "memroy_mib"),
            ("[deadlines]\nrendr = 100", "rendr"),
            ("[capabilities]\nprocess = true", "process"),
            ("[capabilities]\nfilesystem = \"home\"", "home"),
            ("[extension.x]\nextension = {}", "extension"),
            ("[extension.x.deadlines]\nforever = 1", "forever"),
            ("memory_mib = -1", "memory_mib"),
            ("memory_mib = \"lots\"", "memory_mib"),
            ("memory_mib = 0", "memory_mib must be at least 1"),
            ("fuel = 0", "fuel must be at least 1"),
            (
                "[deadlines]\nrender = 0",
                "deadlines.render must be at least 1 ms",
            ),
            (
                "[extension.\"a b\"]\nmemory_mib = 0",
                "extension.\"a b\".memory_mib must be at least 1",
            ),
            ("memory_mib = 64\nmemory_mib = 65", "duplicate"),
            ("not toml at all", "line 1"),
        ] {
            let err = parse(text, Some("x"), None).unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }
}
