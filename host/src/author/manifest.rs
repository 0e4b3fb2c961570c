//! `octet-wasm manifest COMPONENT [--out PATH]`: the `extension.toml` that
//! matches a component, ready for octet.
//!
//! Updating: when `--out` names an existing manifest, what the author wrote
//! stays: `name`, `version`, `description`, `api_version` (checked against
//! the guest), `[capabilities]` whole, `[entrypoint]` `env` and extra `run`
//! options, every `[contributes]` key the component does not determine
//! (`notifications`, `confirmations`, `presentation`, ...) and any other
//! key. Only what the component determines is rewritten: the tool, command,
//! hook, surface, context, renderer and menu declarations, and the
//! component path. Comments are not kept.
//!
//! Choices for a new manifest:
//! - `api_version`: `--api-version`, else the metadata section's, else
//!   `0.4` for a guest that uses what only 0.4 carries (0.4 hooks, prompt
//!   metadata, 0.4 features), else `0.2` (cancellation, concurrency,
//!   progress, lifecycle). `0.1` is refused for a guest that uses something
//!   only 0.2 has (output schemas, optional features, lifecycle, a menu,
//!   concurrency above 1, the 0.2-only hooks); `0.1` and `0.2` are refused
//!   for a guest that handles a 0.4 hook (octet rejects such a manifest).
//! - `[capabilities]`: least privilege. A grant needs the import
//!   (`wasi:filesystem`; `wasi:sockets` or `wasi:http`) and, when the
//!   extension's source lies beside the manifest, a clear use in it
//!   (`check_sources`): interpreter runtimes import both whatever the code
//!   does. `--deny` drops a grant. `process` is always false (WebAssembly
//!   cannot start processes) and `environment` is never guessed.
//! - `[entrypoint]`: `octet-wasm run <file>.wasm`; `--pin` adds `--sha256
//!   <digest>`, so octet-wasm refuses any other bytes under that name (a
//!   rebuild then needs the manifest rewritten; an updated manifest that
//!   pins gets the new digest).
//! - `notifications = true` only when the source beside calls `notify`;
//!   `confirmations` only with `--confirmations`, since they interrupt the
//!   user.

use super::api_rules::api_version;
use super::component::{self, Analysis, Reach};
use super::say;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// `[contributes]` keys the component determines; the author owns the rest.
const DERIVED_CONTRIBUTES: &[&str] = &[
    "tools",
    "commands",
    "hooks",
    "ui",
    "context",
    "tool_renderers",
    "menu",
];
/// The keys `render` writes at the top and in `[entrypoint]`.
const TOP_KEYS: &[&str] = &["name", "version", "api_version", "description"];
const SECTIONS: &[&str] = &["entrypoint", "capabilities", "contributes"];

#[derive(clap::Args)]
pub struct ManifestArgs {
    /// The extension component (.wasm).
    component: PathBuf,
    /// Write the manifest here (normally `extension.toml` beside the
    /// component) instead of printing it.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// `name` (default: the metadata section's, else the guest's own).
    #[arg(long)]
    name: Option<String>,
    /// `version` (default: the metadata section's, else 0.1.0).
    #[arg(long)]
    version: Option<String>,
    /// `description` (default: the metadata section's).
    #[arg(long)]
    description: Option<String>,
    /// `api_version`: 0.1, 0.2 or 0.4 (default: the metadata section's, else
    /// 0.4 when the guest uses what only 0.4 carries, else 0.2).
    #[arg(long, value_name = "VERSION")]
    api_version: Option<String>,
    /// Do not grant a capability the imports imply (filesystem, network):
    /// the extension's own code does not use it.
    #[arg(long, value_name = "CAPABILITY")]
    deny: Vec<String>,
    /// Declare `confirmations = true` (the guest asks the user to confirm).
    #[arg(long)]
    confirmations: bool,
    /// Pin the component's digest (`--sha256`) in the entrypoint args; a
    /// rebuild then needs the manifest rewritten.
    #[arg(long, conflicts_with = "no_pin")]
    pin: bool,
    /// Leave `--sha256` out, even where the manifest being updated pins it.
    #[arg(long)]
    no_pin: bool,
}

pub fn run(args: ManifestArgs) -> Result<(), String> {
    for capability in &args.deny {
        if !matches!(capability.as_str(), "filesystem" | "network") {
            return Err(format!(
                "--deny {capability}: expected filesystem or network"
            ));
        }
    }
    let analysis = component::analyze(&args.component).map_err(|err| format!("{err:#}"))?;
    let existing = match &args.out {
        Some(out) if out.exists() => {
            let text = std::fs::read_to_string(out)
                .map_err(|err| format!("cannot read {}: {err}", out.display()))?;
            let table = toml::from_str::<Table>(&text).map_err(|err| {
                format!(
                    "cannot update {}: not valid TOML ({}); fix it, or remove it for a new one",
                    out.display(),
                    err.message()
                )
            })?;
            Some((table, text))
        }
        _ => None,
    };
    let rendered = render(&analysis, &args, existing.as_ref().map(|(table, _)| table))?;
    // An update edits the author's own text: comments and layout stay.
    let text = match &existing {
        Some((_, mine)) => super::manifest_merge::onto(mine, &rendered)
            .map_err(|err| format!("cannot update the manifest in place: {err}"))?,
        None => rendered,
    };
    match &args.out {
        Some(out) => {
            super::write_atomically(out, text.as_bytes())?;
            say(&format!("wrote {}", out.display()));
            let check = super::check::check_text(out, &text, Some(&analysis), &args.deny);
            for finding in &check {
                say(&finding.to_string());
            }
        }
        None => say(text.trim_end()),
    }
    Ok(())
}

fn quote(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

fn array(items: &[impl AsRef<str>]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| quote(i.as_ref())).collect();
    format!("[{}]", quoted.join(", "))
}

/// The component's path as the manifest names it: relative to the
/// manifest's directory when it lies below it, else its file name (the
/// component must then be copied beside the manifest).
fn component_arg(component: &Path, out: Option<&Path>) -> String {
    let file_name = || {
        component
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let Some(dir) = out.and_then(Path::parent) else {
        return file_name();
    };
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = absolute(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    });
    match absolute(component).strip_prefix(&dir) {
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => file_name(),
    }
}

/// The author's value of `key` in `section` (`None`: top level).
fn kept<'t>(existing: Option<&'t Table>, section: Option<&str>, key: &str) -> Option<&'t Value> {
    let table = match section {
        Some(section) => existing?.get(section)?.as_table()?,
        None => existing?,
    };
    table.get(key)
}

fn kept_str(existing: Option<&Table>, section: Option<&str>, key: &str) -> Option<String> {
    kept(existing, section, key)?.as_str().map(str::to_owned)
}

/// What the component alone cannot say: whether the extension's code
/// reads files, uses the network, sends notifications. `None` without any
/// source beside the manifest.
struct SourceUse {
    files: bool,
    network: bool,
    notifications: bool,
}

fn source_use(dir: &Path) -> Option<SourceUse> {
    use super::check_sources::{file_calls, has_sources, network_calls, notify_calls, uses};
    has_sources(dir).then(|| SourceUse {
        files: !uses(dir, file_calls).is_empty(),
        network: !uses(dir, network_calls).is_empty(),
        notifications: !uses(dir, notify_calls).is_empty(),
    })
}

fn render(
    analysis: &Analysis,
    args: &ManifestArgs,
    existing: Option<&Table>,
) -> Result<String, String> {
    let d = &analysis.description;
    let metadata = analysis.metadata.as_ref();
    let name = args
        .name
        .clone()
        .or_else(|| kept_str(existing, None, "name"))
        .or_else(|| metadata.map(|m| m.name.clone()))
        .unwrap_or_else(|| d.name.clone());
    let version = args
        .version
        .clone()
        .or_else(|| kept_str(existing, None, "version"))
        .or_else(|| metadata.map(|m| m.version.clone()))
        .unwrap_or_else(|| "0.1.0".into());
    let description = args
        .description
        .clone()
        .or_else(|| kept_str(existing, None, "description"))
        .or_else(|| metadata.and_then(|m| m.description.clone()))
        .unwrap_or_else(|| format!("{name}, a sandboxed WebAssembly extension"));
    let asked_api = args
        .api_version
        .clone()
        .or_else(|| kept_str(existing, None, "api_version"));
    let api = api_version(analysis, asked_api.as_deref())?;
    let denied = |c: &str| args.deny.iter().any(|d| d == c);
    let reach = &analysis.reach;
    let source_dir = args
        .out
        .as_deref()
        .or(Some(analysis.path.as_path()))
        .and_then(Path::parent)
        .map(|dir| {
            if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            }
        })
        .unwrap_or(Path::new("."));
    let source = source_use(source_dir);
    let filesystem =
        reach.filesystem && !denied("filesystem") && source.as_ref().is_none_or(|s| s.files);
    let network = reach.network && !denied("network") && source.as_ref().is_none_or(|s| s.network);

    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!("name = {}", quote(&name)));
    line(format!("version = {}", quote(&version)));
    line(format!("api_version = {}", quote(&api)));
    line(format!("description = {}", quote(&description)));
    // The author's other top-level keys (`requires_octet`, ...).
    for (key, value) in existing.into_iter().flatten() {
        if !TOP_KEYS.contains(&key.as_str())
            && !SECTIONS.contains(&key.as_str())
            && !value.is_table()
        {
            line(format!("{} = {value}", toml_key(key)));
        }
    }
    line(String::new());
    line(format!(
        "# Written by `octet-wasm manifest` from {} (octet:extension@{}).",
        analysis
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        analysis.wit_version.as_deref().unwrap_or("?")
    ));
    line("# The component path resolves against OCTET_EXTENSION_DIR.".into());
    line("[entrypoint]".into());
    line(r#"command = "octet-wasm""#.into());
    let old_args: Vec<String> = kept(existing, Some("entrypoint"), "args")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let was_pinned = old_args.iter().any(|a| a == "--sha256");
    let mut entry_args = vec![
        "run".to_owned(),
        component_arg(&analysis.path, args.out.as_deref()),
    ];
    // The author's own `run` options after the component, but the old pin.
    let mut rest = old_args.iter().skip(2);
    while let Some(arg) = rest.next() {
        if arg == "--sha256" {
            rest.next();
        } else {
            entry_args.push(arg.clone());
        }
    }
    if args.pin || (was_pinned && !args.no_pin) {
        entry_args.push("--sha256".into());
        entry_args.push(analysis.sha256.clone());
    }
    line(format!("args = {}", array(&entry_args)));
    if let Some(env) = kept(existing, Some("entrypoint"), "env") {
        line(format!("env = {env}"));
    }
    line(String::new());
    match existing
        .and_then(|t| t.get("capabilities"))
        .and_then(Value::as_table)
    {
        Some(capabilities) => {
            line("# The author's grants, kept; enforced by octet-wasm.".into());
            line("[capabilities]".into());
            for (key, value) in capabilities {
                let value = match key.as_str() {
                    "filesystem" if denied("filesystem") => Value::from("none"),
                    "network" if denied("network") => Value::from(false),
                    _ => value.clone(),
                };
                line(format!("{} = {value}", toml_key(key)));
            }
        }
        None => {
            line("# Enforced by octet-wasm; granted only where the code needs it.".into());
            for capability in ["filesystem", "network"] {
                let imports = Reach::imports_for(&analysis.imports, capability);
                if imports.is_empty() {
                    continue;
                }
                let granted = if capability == "filesystem" {
                    filesystem
                } else {
                    network
                };
                let why = if denied(capability) {
                    "denied (--deny)"
                } else if granted {
                    "granted"
                } else {
                    "not granted: the source beside the manifest does not use it"
                };
                line(format!(
                    "# {capability}: {why}; the component imports {}",
                    imports.join(", ")
                ));
            }
            if reach.environment {
                line(
                    "# The component imports wasi:cli/environment: it sees only the variables"
                        .into(),
                );
                line("# listed in `environment = [...]` (API 0.2), none by default.".into());
            }
            line("[capabilities]".into());
            line(format!(
                "filesystem = {}",
                quote(if filesystem { "workspace" } else { "none" })
            ));
            line("process = false".into());
            line(format!("network = {network}"));
        }
    }
    line(String::new());
    line("[contributes]".into());
    let tools: Vec<&str> = d.tools.iter().map(|t| t.name.as_str()).collect();
    let commands: Vec<&str> = d.commands.iter().map(|c| c.name.as_str()).collect();
    line(format!("tools = {}", array(&tools)));
    line(format!("commands = {}", array(&commands)));
    line(format!("hooks = {}", array(&d.hooks)));
    line(format!("ui = {}", array(&d.status_surfaces)));
    line(format!("context = {}", d.context));
    line(format!("tool_renderers = {}", array(&d.renderers)));
    if d.menu {
        line("menu = true".into());
    }
    let contributes = existing
        .and_then(|t| t.get("contributes"))
        .and_then(Value::as_table);
    match contributes {
        Some(contributes) => {
            for (key, value) in contributes {
                if DERIVED_CONTRIBUTES.contains(&key.as_str()) {
                    continue;
                }
                let value = match key.as_str() {
                    "confirmations" if args.confirmations => Value::from(true),
                    _ => value.clone(),
                };
                line(format!("{} = {value}", toml_key(key)));
            }
            if !contributes.contains_key("confirmations") && args.confirmations {
                line("confirmations = true".into());
            }
        }
        None => {
            let notifications = source.as_ref().is_some_and(|s| s.notifications);
            line(format!("notifications = {notifications}"));
            line(format!("confirmations = {}", args.confirmations));
        }
    }
    // The author's other tables, as written.
    for (key, value) in existing.into_iter().flatten() {
        if !SECTIONS.contains(&key.as_str()) && value.is_table() {
            line(String::new());
            let mut one = Table::new();
            one.insert(key.clone(), value.clone());
            line(
                toml::to_string(&one)
                    .unwrap_or_default()
                    .trim_end()
                    .to_owned(),
            );
        }
    }
    Ok(out)
}

/// A key as TOML writes it (quoted when it is not a bare key).
fn toml_key(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare { key.to_owned() } else { quote(key) }
}
