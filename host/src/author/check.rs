//! `octet-wasm check MANIFEST [COMPONENT]`: every mismatch octet or
//! octet-wasm would reject at start-up, found offline, plus every
//! capability the component imports that the manifest does not grant.
//!
//! Problems (exit status 1) are what octet or the shim refuses: a manifest
//! octet rejects (unknown keys, bad values, hooks the version does not
//! allow), an `initialize` octet-wasm answers with an error (tool or command
//! sets, the definition rules of `protocol::catalog`), a pinned digest that
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
use crate::protocol::api_version::ApiVersion;
use crate::protocol::catalog::is_identifier;
use crate::run_args::{EntrypointError, RunArgs, check_sha256};
use std::collections::BTreeSet;
use std::fmt;
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Problem,
    Warning,
    Note,
}

/// One finding, naming the file, the field and the fix.
#[derive(Debug, Clone)]
pub struct Finding {
    pub severity: Severity,
    pub file: PathBuf,
    pub field: String,
    pub message: String,
    pub fix: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Problem => "problem",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        write!(
            f,
            "{label}: {}: {}: {}\n  fix: {}",
            self.file.display(),
            self.field,
            self.message,
            self.fix
        )
    }
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
    let (policy, policy_problem) = crate::policy::load(name.as_deref());
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

/// A policy file that will not be used, as a finding: the extension still
/// runs, under the built-in ceilings.
fn policy_finding(problem: &PolicyProblem) -> Finding {
    let (file, fix) = match problem {
        PolicyProblem::NoHome => (
            PathBuf::from(crate::policy::POLICY_FILE),
            "give the user a home directory in the user database to use a policy file".to_owned(),
        ),
        PolicyProblem::Refused { path, .. } => (
            path.clone(),
            format!(
                "make it a regular file owned by you and writable only by you (chmod go-w {})",
                path.display()
            ),
        ),
        PolicyProblem::Invalid { path, .. } => (
            path.clone(),
            "fix the key or value named; until then the built-in ceilings apply".to_owned(),
        ),
    };
    Finding {
        severity: Severity::Warning,
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
const ENTRYPOINT_KEYS: &[&str] = &["command", "args", "env"];
const CAPABILITY_KEYS: &[&str] = &[
    "filesystem",
    "process",
    "network",
    "environment",
    "secrets",
    "system_prompt",
    "builtin_tool_overrides",
];
const CONTRIBUTES_KEYS: &[&str] = &[
    "tools",
    "commands",
    "hooks",
    "ui",
    "context",
    "tool_renderers",
    "notifications",
    "confirmations",
    "shortcuts",
    "presentation",
    "menu",
    "providers",
    "flags",
];
const UI_SURFACES: &[&str] = &["status", "header", "footer"];

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
    fn push(&mut self, severity: Severity, field: &str, message: String, fix: String) {
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

    fn unknown_keys(&mut self, table: &Table, section: &str, known: &[&str]) {
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

    fn string(&mut self, table: &Table, section: &str, key: &str) -> Option<String> {
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

    fn flag(&mut self, table: &Table, section: &str, key: &str) -> bool {
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

    fn strings(&mut self, table: &Table, section: &str, key: &str) -> Vec<String> {
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

    fn section<'t>(&mut self, table: &'t Table, key: &str) -> Option<&'t Table> {
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

    fn entrypoint(&mut self, table: &Table, declared: &mut Declared) {
        let Some(entry) = self.section(table, "entrypoint") else {
            if !table.contains_key("entrypoint") {
                self.problem(
                    "entrypoint",
                    "missing: octet has nothing to start".into(),
                    "[entrypoint] command = \"octet-wasm\", args = [\"run\", \"<file>.wasm\"]"
                        .into(),
                );
            }
            return;
        };
        self.unknown_keys(entry, "entrypoint", ENTRYPOINT_KEYS);
        let command = self.string(entry, "entrypoint", "command");
        if command.is_none() && !entry.contains_key("command") {
            self.problem(
                "entrypoint.command",
                "missing".into(),
                "command = \"octet-wasm\"".into(),
            );
        }
        let args = self.strings(entry, "entrypoint", "args");
        if let Some(env) = entry.get("env") {
            match env.as_table() {
                Some(env) => {
                    for (name, value) in env {
                        let valid_name = name
                            .bytes()
                            .next()
                            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                        if !valid_name {
                            self.problem(
                                &format!("entrypoint.env.{name}"),
                                "not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)".into(),
                                "rename it".into(),
                            );
                        }
                        if value.as_str().is_none_or(|v| v.contains('\0')) {
                            self.problem(
                                &format!("entrypoint.env.{name}"),
                                "must be a string without NUL".into(),
                                format!("{name} = \"...\""),
                            );
                        }
                    }
                }
                None => self.problem(
                    "entrypoint.env",
                    "must be a table of strings".into(),
                    "[entrypoint.env] NAME = \"value\"".into(),
                ),
            }
        }
        let is_shim = command
            .as_deref()
            .is_some_and(|c| Path::new(c).file_name().is_some_and(|n| n == "octet-wasm"));
        if !is_shim {
            return;
        }
        self.run_args(&args, declared);
    }

    /// The `octet-wasm run` arguments, through the shim's own parser, then
    /// the values it would refuse at start-up.
    fn run_args(&mut self, args: &[String], declared: &mut Declared) {
        let fix = "args = [\"run\", \"<file>.wasm\", ...options]".to_owned();
        if args.first().map(String::as_str) != Some("run") {
            self.problem(
                "entrypoint.args",
                "octet-wasm needs `run` first".into(),
                fix,
            );
            return;
        }
        if args.get(1).is_none_or(|c| c.starts_with("--")) {
            self.problem("entrypoint.args", "no component after `run`".into(), fix);
            return;
        }
        // Each unknown option is reported and left out, so one pass names
        // every mistake; anything else stops the parse.
        let mut args = args.to_vec();
        let run = loop {
            match RunArgs::parse_entrypoint(&args) {
                Ok(run) => break run,
                Err(err) => {
                    self.problem(
                        "entrypoint.args",
                        err.to_string(),
                        "see `octet-wasm run --help`".into(),
                    );
                    let EntrypointError::UnknownOption(flag) = err else {
                        return;
                    };
                    let Some(at) = args.iter().position(|arg| *arg == flag) else {
                        return;
                    };
                    args.remove(at);
                }
            }
        };
        let mut bad = Vec::new();
        if let Some(hex) = &run.sha256 {
            declared.pinned = Some(hex.clone());
            bad.extend(check_sha256(hex).err());
        }
        if run.runtime.memory_mib == Some(0) {
            bad.push("--memory-mib \"0\" is not a positive whole number".to_owned());
        }
        let mut deadlines = crate::protocol::deadlines::Deadlines::default();
        for setting in &run.deadlines {
            bad.extend(deadlines.set(setting).err());
        }
        if let Some(dir) = &run.runtime.cache_dir {
            self.warning(
                "entrypoint.args",
                format!("--cache-dir {:?} is ignored: the shim always uses the user's own compiled cache (~/.cache/octet-wasm, the home from the user database), because the manifest could otherwise point it at files the extension planted", dir.display().to_string()),
                format!("remove --cache-dir {}", dir.display()),
            );
        }
        for message in bad {
            self.problem(
                "entrypoint.args",
                message,
                "see `octet-wasm run --help`".into(),
            );
        }
        declared.requests = run.requests();
    }

    fn capabilities(&mut self, table: &Table, declared: &mut Declared) {
        declared.filesystem = "none".into();
        let Some(caps) = self.section(table, "capabilities") else {
            return;
        };
        self.unknown_keys(caps, "capabilities", CAPABILITY_KEYS);
        if let Some(fs) = self.string(caps, "capabilities", "filesystem") {
            if matches!(fs.as_str(), "none" | "workspace" | "unrestricted") {
                declared.filesystem = fs;
            } else {
                self.problem(
                    "capabilities.filesystem",
                    format!("{fs:?} is not none, workspace or unrestricted"),
                    "filesystem = \"none\"".into(),
                );
            }
        }
        if self.flag(caps, "capabilities", "process") {
            self.warning(
                "capabilities.process",
                "WebAssembly cannot start processes; octet-wasm grants nothing for it".into(),
                "process = false".into(),
            );
        }
        declared.network = self.flag(caps, "capabilities", "network");
        declared.environment = self.strings(caps, "capabilities", "environment");
        let secrets = self.strings(caps, "capabilities", "secrets");
        let _ = self.flag(caps, "capabilities", "system_prompt");
        let overrides = self.strings(caps, "capabilities", "builtin_tool_overrides");
        match super::api_rules::overrides_problem(declared.api, &overrides) {
            Some((true, message, fix)) => {
                self.problem("capabilities.builtin_tool_overrides", message, fix)
            }
            Some((false, message, fix)) => {
                self.warning("capabilities.builtin_tool_overrides", message, fix)
            }
            None => {}
        }
        if declared.api == Some(ApiVersion::V0_1) {
            for (key, present) in [
                ("environment", !declared.environment.is_empty()),
                ("secrets", !secrets.is_empty()),
            ] {
                if present {
                    self.problem(
                        &format!("capabilities.{key}"),
                        "API 0.1 manifests cannot declare it".into(),
                        format!("api_version = \"0.2\", or remove {key}"),
                    );
                }
            }
        }
    }

    fn contributes(&mut self, table: &Table, declared: &mut Declared) {
        let Some(contributes) = self.section(table, "contributes") else {
            return;
        };
        let section = "contributes";
        self.unknown_keys(contributes, section, CONTRIBUTES_KEYS);
        for key in ["tools", "commands"] {
            let names = self.strings(contributes, section, key);
            for name in &names {
                if !is_identifier(name) {
                    self.problem(
                        &field(section, key),
                        format!("{name:?} is not an identifier (1-64 bytes of [A-Za-z_][A-Za-z0-9_.-]*, no leading '/')"),
                        "rename it in the guest and here".into(),
                    );
                }
            }
            if key == "tools" {
                declared.tools = names;
            } else {
                declared.commands = names;
            }
        }
        declared.hooks = self.strings(contributes, section, "hooks");
        for hook in declared.hooks.clone() {
            if let Some((message, fix)) = super::api_rules::hook_problem(declared.api, &hook) {
                self.problem("contributes.hooks", message, fix);
            }
        }
        declared.ui = self.strings(contributes, section, "ui");
        for surface in declared.ui.clone() {
            if !UI_SURFACES.contains(&surface.as_str()) {
                self.problem(
                    "contributes.ui",
                    format!("{surface:?} is not a UI surface"),
                    "use status, header or footer".into(),
                );
            }
        }
        declared.renderers = self.strings(contributes, section, "tool_renderers");
        for tool in declared.renderers.clone() {
            if !declared.tools.contains(&tool) {
                self.problem(
                    "contributes.tool_renderers",
                    format!("{tool:?} is not a tool this manifest declares"),
                    format!("add {tool:?} to tools or remove the renderer"),
                );
            }
        }
        declared.context = self.flag(contributes, section, "context");
        declared.menu = self.flag(contributes, section, "menu");
        for key in ["notifications", "confirmations", "presentation"] {
            let _ = self.flag(contributes, section, key);
        }
        if declared.api == Some(ApiVersion::V0_1) {
            for key in ["menu", "presentation", "shortcuts", "flags"] {
                if contributes.contains_key(key) {
                    self.problem(
                        &field(section, key),
                        "API 0.1 manifests cannot declare it".into(),
                        format!("api_version = \"0.2\", or remove {key}"),
                    );
                }
            }
        }
        if contributes.contains_key("providers") {
            self.problem(
                "contributes.providers",
                "providers belong to API 0.3 (on 0.4, provider_proxy_v1); octet-wasm serves neither".into(),
                "remove providers".into(),
            );
        }
    }
}

fn field(section: &str, key: &str) -> String {
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
