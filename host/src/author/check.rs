//! `octet-wasm check MANIFEST [COMPONENT]`: every mismatch octet or
//! octet-wasm would reject at start-up, found offline, plus every
//! capability the component imports that the manifest does not grant.
//!
//! Problems (exit status 1) are what octet or the shim refuses: a manifest
//! octet rejects (unknown keys, bad values, hooks the version does not
//! allow), an `initialize` octet-wasm answers with an error (tool or command
//! sets, the definition rules of `protocol::imports::tools_catalog::definitions`), a pinned digest that
//! does not match. Warnings are what works but is probably a mistake (a hook
//! the guest handles that the manifest never declares, so octet never calls
//! it). Notes are facts worth knowing that need no change: an import the
//! manifest does not grant still links, and only fails inside the sandbox
//! if the code uses it (every interpreter runtime imports files, and
//! Python sockets, whether or not the extension does); least privilege is
//! the right default, so a fresh scaffold passes with exit status 0.

use super::component::{self, Analysis};
use super::metadata::is_semver;
use super::say;
use crate::policy::report::{self, Requests};
use crate::policy::{Origin, Policy, Problem as PolicyProblem};
use crate::protocol::handshake::api_version::ApiVersion;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toml::Table;

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The manifest (extension.toml).
    manifest: PathBuf,
    /// The component; default: the one the manifest's `octet-wasm run`
    /// args name, beside the manifest.
    component: Option<PathBuf>,
    /// Leave out the note that a capability the component imports
    /// (filesystem, network) is not granted: the extension's own code does
    /// not use it.
    #[arg(long, value_name = "CAPABILITY")]
    deny: Vec<String>,
}

pub use super::finding::{Finding, Severity};

/// `check MANIFEST` with nothing else (what `build` runs last).
pub fn run_on(manifest: PathBuf) -> Result<bool, String> {
    run(CheckArgs {
        manifest,
        component: None,
        deny: Vec::new(),
    })
}

pub fn run(args: CheckArgs) -> Result<bool, String> {
    for capability in &args.deny {
        if !matches!(capability.as_str(), "filesystem" | "network") {
            return Err(format!(
                "--deny {capability}: expected filesystem or network"
            ));
        }
    }
    let text = std::fs::read_to_string(&args.manifest)
        .map_err(|err| format!("cannot read {}: {err}", args.manifest.display()))?;
    let mut findings = Vec::new();
    let component = args.component.clone().or_else(|| {
        let table: Table = toml::from_str(&text).ok()?;
        let dir = args.manifest.parent().unwrap_or(Path::new("."));
        component_from_entrypoint(&table).map(|c| dir.join(c))
    });
    let analysis = match &component {
        Some(path) => match component::analyze(path) {
            Ok(analysis) => Some(analysis),
            Err(err) => {
                findings.push(Finding {
                    severity: Severity::Problem,
                    file: path.clone(),
                    field: "component".into(),
                    message: format!("octet-wasm cannot load it: {err:#}"),
                    fix: "rebuild the component against wit/0.4.0 (octet:extension@0.4.0) or wit/ (0.2.0)".into(),
                });
                None
            }
        },
        None => None,
    };
    // The user's ceilings for the extension octet will name in
    // OCTET_EXTENSION_NAME: the manifest's `name`.
    let name = toml::from_str::<Table>(&text)
        .ok()
        .and_then(|table| table.get("name")?.as_str().map(str::to_owned));
    let digest = analysis.as_ref().map(|analysis| analysis.sha256.as_str());
    let (policy, policy_problem) = crate::policy::load(name.as_deref(), digest);
    if let Some(problem) = policy_problem {
        findings.push(policy_finding(&problem));
    }
    let (more, ceilings) = check_text_under(
        &args.manifest,
        &text,
        analysis.as_ref(),
        &args.deny,
        Some(&policy),
    );
    findings.extend(more);
    let mut ceilings = ceilings;
    if let Some(analysis) = &analysis {
        let trust = &policy.trust;
        if let Err(reason) = crate::signing::decide_on(&analysis.signature, &analysis.sha256, trust)
        {
            findings.push(Finding {
                severity: Severity::Problem,
                file: analysis.path.clone(),
                field: "signature".into(),
                message: reason,
                fix: "sign it with a key the policy lists (`octet-wasm sign COMPONENT --key KEY`), or add its publisher's key line to [trust] publishers".into(),
            });
        }
        ceilings.extend(super::sign::report_lines(
            &analysis.signature,
            &analysis.sha256,
            &policy.trust,
        ));
    }
    // Code beside the manifest that clearly uses files under filesystem =
    // "none" is a warning, in place of the note the imports alone make.
    let dir = args.manifest.parent().unwrap_or(Path::new("."));
    let uses = super::check_sources::without_grant(&text, dir);
    if !uses.is_empty() && !args.deny.iter().any(|d| d == "filesystem") {
        findings
            .retain(|f| !(f.severity == Severity::Note && f.field == "capabilities.filesystem"));
        findings.extend(uses.into_iter().map(|found| Finding {
            severity: Severity::Warning,
            message: found.message(),
            field: format!("line {}", found.line),
            file: found.file,
            fix: super::check_sources::FIX.into(),
        }));
    }
    for finding in &findings {
        say(&finding.to_string());
    }
    for line in &ceilings {
        say(line);
    }
    let count = |severity| findings.iter().filter(|f| f.severity == severity).count();
    let (problems, warnings, notes) = (
        count(Severity::Problem),
        count(Severity::Warning),
        count(Severity::Note),
    );
    let against = analysis
        .as_ref()
        .map(|a| format!(" against {}", a.path.display()))
        .unwrap_or_else(|| " (manifest only: no component)".into());
    say(&format!(
        "{}{against}: {problems} problem(s), {warnings} warning(s), {notes} note(s)",
        args.manifest.display()
    ));
    Ok(problems == 0)
}

/// The component an `octet-wasm run` entrypoint names.
fn component_from_entrypoint(table: &Table) -> Option<String> {
    let entry = table.get("entrypoint")?.as_table()?;
    let args = entry.get("args")?.as_array()?;
    if args.first()?.as_str()? != "run" {
        return None;
    }
    args.get(1)?.as_str().map(str::to_owned)
}

/// Checks a manifest's text, and it against `analysis` when given.
pub fn check_text(
    path: &Path,
    text: &str,
    analysis: Option<&Analysis>,
    deny: &[String],
) -> Vec<Finding> {
    check_text_under(path, text, analysis, deny, None).0
}

/// [`check_text`], plus (with a `policy`) a warning for each limit the
/// manifest's args or the component's metadata ask above the user's
/// ceilings, and the lines reporting the limits `run` will use.
pub fn check_text_under(
    path: &Path,
    text: &str,
    analysis: Option<&Analysis>,
    deny: &[String],
    policy: Option<&Policy>,
) -> (Vec<Finding>, Vec<String>) {
    let mut checker = Checker {
        file: path.to_path_buf(),
        findings: Vec::new(),
        report: Vec::new(),
    };
    match toml::from_str::<Table>(text) {
        Ok(table) => checker.manifest(&table, analysis, deny, policy),
        Err(err) => checker.problem(
            "(file)",
            format!("not valid TOML: {}", err.message()),
            "fix the TOML syntax".into(),
        ),
    }
    (checker.findings, checker.report)
}

/// A policy file that will not be used, as a finding: a problem when it is
/// there (`run` and `compile` refuse to start under it), a warning when
/// the user has no home (the built-in ceilings apply).
fn policy_finding(problem: &PolicyProblem) -> Finding {
    let (file, fix) = match problem {
        PolicyProblem::NoHome => (
            PathBuf::from(crate::policy::POLICY_FILE),
            "give the user a home directory in the user database to use a policy file".to_owned(),
        ),
        PolicyProblem::Refused { path, .. } => (
            path.clone(),
            format!(
                "make it a regular file owned by you and writable only by you (chmod go-w {}), reached through directories only you or root control and no link but root's; until then `run` and `compile` refuse to start",
                path.display()
            ),
        ),
        PolicyProblem::Invalid { path, .. } => (
            path.clone(),
            "fix the key or value named (or remove the file); until then `run` and `compile` refuse to start".to_owned(),
        ),
    };
    Finding {
        severity: if problem.refuses_start() {
            Severity::Problem
        } else {
            Severity::Warning
        },
        file,
        field: "(policy)".into(),
        message: problem.to_string(),
        fix,
    }
}

pub(super) struct Checker {
    pub(super) file: PathBuf,
    pub(super) findings: Vec<Finding>,
    /// The limits `run` will use, one line each (with a policy).
    report: Vec<String>,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "version",
    "api_version",
    "description",
    "entrypoint",
    "capabilities",
    "contributes",
    "requires_octet",
];
/// What the manifest declares, as far as the component checks need it.
#[derive(Default)]
pub(super) struct Declared {
    pub(super) api: Option<ApiVersion>,
    pub(super) tools: Vec<String>,
    pub(super) commands: Vec<String>,
    pub(super) hooks: Vec<String>,
    pub(super) ui: Vec<String>,
    pub(super) renderers: Vec<String>,
    pub(super) context: bool,
    pub(super) menu: bool,
    pub(super) filesystem: String,
    pub(super) network: bool,
    pub(super) environment: Vec<String>,
    pub(super) pinned: Option<String>,
    /// The limits the `run` args ask for.
    pub(super) requests: Requests,
    pub(super) name: Option<String>,
    pub(super) version: Option<String>,
}

impl Checker {
    pub(super) fn push(&mut self, severity: Severity, field: &str, message: String, fix: String) {
        self.findings.push(Finding {
            severity,
            file: self.file.clone(),
            field: field.into(),
            message,
            fix,
        });
    }

    pub(super) fn problem(&mut self, field: &str, message: String, fix: String) {
        self.push(Severity::Problem, field, message, fix);
    }

    pub(super) fn warning(&mut self, field: &str, message: String, fix: String) {
        self.push(Severity::Warning, field, message, fix);
    }

    pub(super) fn note(&mut self, field: &str, message: String, fix: String) {
        self.push(Severity::Note, field, message, fix);
    }

    pub(super) fn unknown_keys(&mut self, table: &Table, section: &str, known: &[&str]) {
        for key in table.keys() {
            if !known.contains(&key.as_str()) {
                let field = if section.is_empty() {
                    key.clone()
                } else {
                    format!("{section}.{key}")
                };
                self.problem(
                    &field,
                    "unknown key: octet rejects manifests with keys it does not know".into(),
                    format!("remove it (known keys here: {})", known.join(", ")),
                );
            }
        }
    }

    pub(super) fn string(&mut self, table: &Table, section: &str, key: &str) -> Option<String> {
        let value = table.get(key)?;
        match value.as_str() {
            Some(text) => Some(text.to_owned()),
            None => {
                self.problem(
                    &field(section, key),
                    format!("must be a string, not {}", value.type_str()),
                    format!("{key} = \"...\""),
                );
                None
            }
        }
    }

    pub(super) fn flag(&mut self, table: &Table, section: &str, key: &str) -> bool {
        match table.get(key) {
            None => false,
            Some(toml::Value::Boolean(b)) => *b,
            Some(other) => {
                self.problem(
                    &field(section, key),
                    format!("must be true or false, not {}", other.type_str()),
                    format!("{key} = true or {key} = false"),
                );
                false
            }
        }
    }

    pub(super) fn strings(&mut self, table: &Table, section: &str, key: &str) -> Vec<String> {
        let Some(value) = table.get(key) else {
            return Vec::new();
        };
        let items = value.as_array().map(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
        });
        let Some(Some(items)) = items else {
            self.problem(
                &field(section, key),
                "must be an array of strings".into(),
                format!("{key} = [\"...\"]"),
            );
            return Vec::new();
        };
        let mut seen = BTreeSet::new();
        for item in &items {
            if !seen.insert(item.as_str()) {
                self.problem(
                    &field(section, key),
                    format!("{item:?} is listed twice"),
                    "list each name once".into(),
                );
            }
        }
        items
    }

    fn manifest(
        &mut self,
        table: &Table,
        analysis: Option<&Analysis>,
        deny: &[String],
        policy: Option<&Policy>,
    ) {
        self.unknown_keys(table, "", TOP_KEYS);
        let mut declared = Declared {
            name: self.string(table, "", "name"),
            version: self.string(table, "", "version"),
            ..Declared::default()
        };
        match declared.name.as_deref() {
            None if !table.contains_key("name") => {
                self.problem("name", "missing".into(), "name = \"my-extension\"".into())
            }
            Some(name) if name.trim().is_empty() => self.problem(
                "name",
                "must not be empty".into(),
                "name = \"my-extension\"".into(),
            ),
            _ => {}
        }
        match declared.version.clone() {
            None if !table.contains_key("version") => {
                self.problem("version", "missing".into(), "version = \"0.1.0\"".into())
            }
            Some(version) if !is_semver(&version) => self.problem(
                "version",
                format!("{version:?} is not a semantic version"),
                "version = \"MAJOR.MINOR.PATCH\", e.g. \"0.1.0\"".into(),
            ),
            _ => {}
        }
        let _ = self.string(table, "", "description");
        let _ = self.string(table, "", "requires_octet");
        declared.api = match self.string(table, "", "api_version").as_deref() {
            Some("0.1") => Some(ApiVersion::V0_1),
            Some("0.2") => Some(ApiVersion::V0_2),
            Some("0.4") => Some(ApiVersion::V0_4),
            Some(other) => {
                self.problem(
                    "api_version",
                    format!("{other:?} is not a version octet-wasm speaks"),
                    "api_version = \"0.4\" (or \"0.2\", \"0.1\")".into(),
                );
                None
            }
            None => {
                if !table.contains_key("api_version") {
                    self.problem(
                        "api_version",
                        "missing: it selects the wire".into(),
                        "api_version = \"0.2\"".into(),
                    );
                }
                None
            }
        };
        self.entrypoint(table, &mut declared);
        self.capabilities(table, &mut declared);
        self.contributes(table, &mut declared);
        if let Some(analysis) = analysis {
            self.against_component(&declared, analysis, deny);
        }
        if let Some(policy) = policy {
            self.limits(&declared, analysis, policy);
        }
    }

    /// Warns of each limit `run` will lower to the user's ceiling, and
    /// records the limits it will use.
    fn limits(&mut self, declared: &Declared, analysis: Option<&Analysis>, policy: &Policy) {
        let metadata = analysis
            .and_then(|a| a.metadata.as_ref())
            .map(|m| m.limits.clone())
            .unwrap_or_default();
        // A value `run` would refuse outright was reported with the args
        // (or the metadata section, which is validated when read).
        let Ok(outcome) = report::outcome(policy, &declared.requests, &metadata.requests()) else {
            return;
        };
        for clamp in &outcome.clamps {
            let at_most = if clamp.unit.is_empty() {
                format!("at most {}", clamp.ceiling)
            } else {
                format!("at most {} {}", clamp.ceiling, clamp.unit)
            };
            let or_user = if clamp.raisable {
                ", or have the user raise the ceiling"
            } else {
                ""
            };
            let (file, field, fix) = match (clamp.origin, analysis) {
                (Origin::Metadata, Some(analysis)) => (
                    analysis.path.clone(),
                    "octet-wasm-metadata limits",
                    format!("embed {at_most} with `octet-wasm embed-metadata`{or_user}"),
                ),
                _ => (
                    self.file.clone(),
                    "entrypoint.args",
                    format!("ask for {at_most}{or_user}"),
                ),
            };
            self.findings.push(Finding {
                severity: Severity::Warning,
                file,
                field: field.into(),
                message: format!("run will lower it: {clamp}"),
                fix,
            });
        }
        self.report = report::lines(policy, &outcome);
    }

    pub(super) fn section<'t>(&mut self, table: &'t Table, key: &str) -> Option<&'t Table> {
        match table.get(key) {
            None => None,
            Some(toml::Value::Table(section)) => Some(section),
            Some(other) => {
                self.problem(
                    key,
                    format!("must be a table, not {}", other.type_str()),
                    format!("write it as a [{key}] section"),
                );
                None
            }
        }
    }
}

pub(super) fn field(section: &str, key: &str) -> String {
    if section.is_empty() {
        key.to_owned()
    } else {
        format!("{section}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(text: &str) -> Vec<(Severity, String)> {
        check_text(Path::new("extension.toml"), text, None, &[])
            .into_iter()
            .map(|f| (f.severity, f.field))
            .collect()
    }

    #[test]
    fn semver() {
        assert!(is_semver("0.1.0") && is_semver("1.2.3-beta.1+x"));
        assert!(!is_semver("1.2") && !is_semver("v1.2.3") && !is_semver("1.2.3-"));
    }

    #[test]
    fn clean_manifest() {
        let text = r#"
name = "x"
version = "0.1.0"
api_version = "0.1"
description = "d"
[entrypoint]
command = "octet-wasm"
args = ["run", "x.wasm", "--memory-mib", "64", "--deadline-ms", "render=300"]
[capabilities]
filesystem = "none"
process = false
network = false
[contributes]
tools = ["a"]
hooks = ["before_prompt"]
tool_renderers = ["a"]
"#;
        assert_eq!(findings(text), vec![]);
    }

    #[test]
    fn each_static_mistake() {
        let text = r#"
name = "x"
version = "1"
api_version = "0.1"
homepage = "h"
[entrypoint]
command = "octet-wasm"
args = ["run", "x.wasm", "--turbo", "--deadline-ms", "forever=1"]
[capabilities]
filesystem = "home"
environment = ["HOME"]
[contributes]
tools = ["a", "a", "/b"]
hooks = ["post_mutation", "on_boot"]
ui = ["sidebar"]
tool_renderers = ["c"]
menu = true
"#;
        let fields: Vec<String> = findings(text).into_iter().map(|(_, f)| f).collect();
        for expected in [
            "homepage",
            "version",
            "entrypoint.args",
            "capabilities.filesystem",
            "capabilities.environment",
            "contributes.tools",
            "contributes.hooks",
            "contributes.ui",
            "contributes.tool_renderers",
            "contributes.menu",
        ] {
            assert!(
                fields.iter().any(|f| f == expected),
                "{expected} not in {fields:?}"
            );
        }
        assert_eq!(fields.iter().filter(|f| *f == "entrypoint.args").count(), 2);
    }
}
