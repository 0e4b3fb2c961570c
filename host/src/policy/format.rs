//! The policy file's TOML, parsed strictly: the user wrote it, so a key
//! octet-wasm does not know is reported rather than guessed at, with the
//! line, column and key it is at ([`Invalid`]), because the shim refuses to
//! start until it is fixed.

use super::trust::TrustTable;
use crate::protocol::deadlines::{NAMES, PerName};
use crate::runtime::FsAccess;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use toml::de::{DeTable, DeValue};

/// Why a policy file's text is not a policy, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    /// The dotted key the problem is at (`capabilities.filesystem`), when
    /// the text gets far enough to have one.
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)?;
        if let Some(key) = &self.key {
            write!(f, ", key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A dotted key as TOML spells it: bare where it can be, quoted otherwise.
fn dotted(keys: &[String]) -> String {
    keys.iter()
        .map(|key| {
            let bare = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if bare {
                key.clone()
            } else {
                format!("{key:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Line and column (1-based) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |tail| tail.chars().count())
        + 1;
    (line, column)
}

/// The keys leading to what lies at byte `offset` of the parsed document:
/// the key whose name spans it, at any depth, else the one whose value
/// does. (A `[table]`'s own span covers its header, not its keys, so every
/// table is searched.)
fn keys_at(table: &DeTable<'_>, offset: usize) -> Vec<String> {
    for (key, value) in table.iter() {
        let name = || key.get_ref().to_string();
        if key.span().contains(&offset) {
            return vec![name()];
        }
        if let DeValue::Table(inner) = value.get_ref() {
            let deeper = keys_at(inner, offset);
            if !deeper.is_empty() {
                return std::iter::once(name()).chain(deeper).collect();
            }
        }
        if value.span().contains(&offset) {
            return vec![name()];
        }
    }
    Vec::new()
}

/// Where the value of `keys` starts (or the deepest of its keys the
/// document has), if the document has any.
fn offset_of(table: &DeTable<'_>, keys: &[String]) -> Option<usize> {
    let (first, rest) = keys.split_first()?;
    let (key, value) = table.iter().find(|(key, _)| key.get_ref() == first)?;
    match (rest.is_empty(), value.get_ref()) {
        (true, _) => Some(value.span().start),
        (false, DeValue::Table(inner)) => offset_of(inner, rest).or(Some(key.span().start)),
        (false, _) => Some(key.span().start),
    }
}

/// One line of an error text (the TOML crate's may span several).
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// For a text TOML cannot parse: the key a `key = value` line at `offset`
/// names, under the last `[table]` header above it.
fn key_on_line(text: &str, offset: usize) -> Option<String> {
    let (line, _) = line_column(text, offset);
    let lines: Vec<&str> = text.lines().collect();
    let this = lines.get(line - 1)?.trim();
    let (key, _) = this.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.starts_with('[') || key.starts_with('#') {
        return None;
    }
    let header = lines[..line - 1].iter().rev().find_map(|l| {
        let l = l.trim();
        let inner = l.strip_prefix('[')?.trim_start_matches('[');
        Some(inner.split(']').next()?.trim().to_owned())
    });
    Some(match header {
        Some(header) if !header.is_empty() => format!("{header}.{key}"),
        _ => key.to_owned(),
    })
}

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
    #[serde(default)]
    trust: TrustTable,
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
    #[serde(default)]
    pub trust: TrustTable,
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
            trust: self.trust.overridden(&over.trust, over.sha256.is_some()),
            sha256: None,
        }
    }

    /// Values TOML accepts but a ceiling cannot be: the keys (below
    /// `table`) and what is wrong.
    fn check(&self, table: &[String]) -> Result<(), (Vec<String>, String)> {
        let at = |keys: &[&str]| {
            let mut path = table.to_vec();
            path.extend(keys.iter().map(|key| (*key).to_owned()));
            path
        };
        if self.memory_mib == Some(0) {
            return Err((at(&["memory_mib"]), "must be at least 1".into()));
        }
        if self.fuel == Some(0) {
            return Err((at(&["fuel"]), "must be at least 1".into()));
        }
        if let Some(pin) = &self.sha256
            && !crate::runtime::cache::ComponentDigest::is_hex(pin)
        {
            return Err((
                at(&["sha256"]),
                "must be a SHA-256 in hex (64 characters), as `octet-wasm inspect` shows it".into(),
            ));
        }
        for (name, value) in self.deadlines.entries() {
            if value == Some(0) {
                return Err((at(&["deadlines", name]), "must be at least 1 ms".into()));
            }
        }
        self.trust.check().map_err(|(keys, message)| {
            (
                at(&keys.iter().map(String::as_str).collect::<Vec<_>>()),
                message,
            )
        })
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
) -> Result<(Settings, Table), Invalid> {
    let document = DeTable::parse(text).map_err(|err| {
        let offset = err.span().map_or(0, |span| span.start);
        let (line, column) = line_column(text, offset);
        Invalid {
            line,
            column,
            key: key_on_line(text, offset),
            message: one_line(err.message()),
        }
    })?;
    let document = document.get_ref();
    let at = |keys: Vec<String>, offset: Option<usize>, message: String| {
        let (line, column) = line_column(text, offset.unwrap_or(0));
        Invalid {
            line,
            column,
            key: (!keys.is_empty()).then(|| dotted(&keys)),
            message,
        }
    };
    let file: File = toml::from_str(text).map_err(|err| {
        let offset = err.span().map(|span| span.start);
        let keys = offset.map_or_else(Vec::new, |offset| keys_at(document, offset));
        at(keys, offset, one_line(err.message()))
    })?;
    let invalid_value = |(keys, message): (Vec<String>, String)| {
        let offset = offset_of(document, &keys);
        at(keys, offset, message)
    };
    let mut top = Settings {
        memory_mib: file.memory_mib,
        fuel: file.fuel,
        receipts: file.receipts,
        deadlines: file.deadlines,
        capabilities: file.capabilities,
        trust: file.trust,
        sha256: None,
    };
    top.trust.locate("");
    top.check(&[]).map_err(invalid_value)?;
    for (name, settings) in &file.extension {
        settings
            .check(&["extension".to_owned(), name.clone()])
            .map_err(invalid_value)?;
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
            _ => {
                let mut own = own.clone();
                let name = extension.unwrap_or_default();
                own.trust
                    .locate(&format!("{}.", dotted(&["extension".into(), name.into()])));
                Ok((top.overridden(&own), Table::Applied))
            }
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
        assert_eq!(err.key.as_deref(), Some("receipts"), "{err}");
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
        assert_eq!(err.key.as_deref(), Some("extension.tool.sha256"), "{err}");
        assert_eq!(err.line, 2);
        assert!(err.message.contains("must be a SHA-256"), "{err}");
        let err = parse("sha256 = \"abc\"\n", None, None).unwrap_err();
        assert!(err.to_string().contains("sha256"), "{err}");
    }

    #[test]
    fn an_empty_file_sets_nothing() {
        assert_eq!(
            parse("", Some("x"), None).unwrap(),
            (Settings::default(), Table::Absent)
        );
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors_naming_line_column_and_key() {
        for (text, line, column, key, needle) in [
            ("memroy_mib = 64", 1, 1, Some("memroy_mib"), "unknown field"),
            (
                "memory_mib = 64\n[deadlines]\nrendr = 100",
                3,
                1,
                Some("deadlines.rendr"),
                "rendr",
            ),
            (
                "[capabilities]\nfilesystem = \"none\"\nprocess = true",
                3,
                1,
                Some("capabilities.process"),
                "process",
            ),
            (
                "[capabilities]\nfilesystem = \"home\"",
                2,
                14,
                Some("capabilities.filesystem"),
                "home",
            ),
            (
                "[extension.x]\nextension = {}",
                2,
                1,
                Some("extension.x.extension"),
                "extension",
            ),
            (
                "[extension.\"a b\".deadlines]\nforever = 1",
                2,
                1,
                Some("extension.\"a b\".deadlines.forever"),
                "forever",
            ),
            ("memory_mib = -1", 1, 14, Some("memory_mib"), "-1"),
            (
                "\nmemory_mib = \"lots\"",
                2,
                14,
                Some("memory_mib"),
                "string",
            ),
            ("memory_mib = 0", 1, 14, Some("memory_mib"), "at least 1"),
            ("fuel = 0", 1, 8, Some("fuel"), "at least 1"),
            (
                "[deadlines]\nrender = 0",
                2,
                10,
                Some("deadlines.render"),
                "at least 1 ms",
            ),
            (
                "[extension.\"a b\"]\nmemory_mib = 0",
                2,
                14,
                Some("extension.\"a b\".memory_mib"),
                "at least 1",
            ),
            (
                "memory_mib = 64\nmemory_mib = 65",
                2,
                1,
                Some("memory_mib"),
                "duplicate",
            ),
            ("not toml at all", 1, 5, None, "expected"),
            (
                "[capabilities]\nnetwork = tru",
                2,
                11,
                Some("capabilities.network"),
                "",
            ),
        ] {
            let err = parse(text, Some("x"), None).unwrap_err();
            assert_eq!(
                (err.line, err.column, err.key.as_deref()),
                (line, column, key),
                "{text:?}: {err}"
            );
            assert!(err.message.contains(needle), "{text:?}: {err}");
            assert!(!err.to_string().contains('\n'), "{err}");
        }
    }
}
