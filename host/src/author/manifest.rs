//! `octet-wasm manifest COMPONENT [--out PATH]`: the `extension.toml` that
//! matches a component, ready for octet.
//!
//! Choices:
//! - `api_version`: `--api-version`, else the metadata section's, else
//!   `0.4` for a guest that uses what only 0.4 carries (0.4 hooks, prompt
//!   metadata, 0.4 features), else `0.2` (cancellation, concurrency,
//!   progress, lifecycle). `0.1` is refused for a guest that uses something
//!   only 0.2 has (output schemas, optional features, lifecycle, a menu,
//!   concurrency above 1, the 0.2-only hooks); `0.1` and `0.2` are refused
//!   for a guest that handles a 0.4 hook (octet rejects such a manifest).
//! - `[capabilities]`: least privilege from the imports. `filesystem =
//!   "workspace"` only when the component imports `wasi:filesystem`,
//!   `network = true` only when it imports `wasi:sockets` or `wasi:http`;
//!   `--deny` drops a grant the extension does not need (interpreter
//!   runtimes import both whether or not the extension's code uses them).
//!   `process` is always false (WebAssembly cannot start processes) and
//!   `environment` is never guessed.
//! - `[entrypoint]`: `octet-wasm run <file>.wasm --sha256 <digest>`, so
//!   octet-wasm refuses any other bytes under that name (`--no-pin` omits
//!   the digest, for a component that is rebuilt often).
//! - `notifications = true` (harmless, and the SDKs' examples use them);
//!   `confirmations` only with `--confirmations`, since they interrupt the
//!   user.

use super::api_rules::api_version;
use super::component::{self, Analysis, Reach};
use super::say;
use std::path::{Path, PathBuf};

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
    /// Leave `--sha256` out of the entrypoint args.
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
    let text = render(&analysis, &args)?;
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

fn render(analysis: &Analysis, args: &ManifestArgs) -> Result<String, String> {
    let d = &analysis.description;
    let metadata = analysis.metadata.as_ref();
    let name = args
        .name
        .clone()
        .or_else(|| metadata.map(|m| m.name.clone()))
        .unwrap_or_else(|| d.name.clone());
    let version = args
        .version
        .clone()
        .or_else(|| metadata.map(|m| m.version.clone()))
        .unwrap_or_else(|| "0.1.0".into());
    let description = args
        .description
        .clone()
        .or_else(|| metadata.and_then(|m| m.description.clone()))
        .unwrap_or_else(|| format!("{name}, a sandboxed WebAssembly extension"));
    let api = api_version(analysis, args.api_version.as_deref())?;
    let denied = |c: &str| args.deny.iter().any(|d| d == c);
    let reach = &analysis.reach;
    let filesystem = reach.filesystem && !denied("filesystem");
    let network = reach.network && !denied("network");

    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!("name = {}", quote(&name)));
    line(format!("version = {}", quote(&version)));
    line(format!("api_version = {}", quote(&api)));
    line(format!("description = {}", quote(&description)));
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
    let mut entry_args = vec![
        "run".to_owned(),
        component_arg(&analysis.path, args.out.as_deref()),
    ];
    if !args.no_pin {
        entry_args.push("--sha256".into());
        entry_args.push(analysis.sha256.clone());
    }
    line(format!("args = {}", array(&entry_args)));
    line(String::new());
    line("# Enforced by octet-wasm; granted only where the component's imports need it.".into());
    for capability in ["filesystem", "network"] {
        let imports = Reach::imports_for(&analysis.imports, capability);
        if imports.is_empty() {
            continue;
        }
        let verb = if denied(capability) {
            "denied (--deny)"
        } else {
            "granted"
        };
        line(format!(
            "# {capability}: {verb}; the component imports {}",
            imports.join(", ")
        ));
    }
    if reach.environment {
        line("# The component imports wasi:cli/environment: it sees only the variables".into());
        line("# listed in `environment = [...]` (API 0.2), none by default.".into());
    }
    line("[capabilities]".into());
    line(format!(
        "filesystem = {}",
        quote(if filesystem { "workspace" } else { "none" })
    ));
    line("process = false".into());
    line(format!("network = {network}"));
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
    line("notifications = true".into());
    line(format!("confirmations = {}", args.confirmations));
    if d.menu {
        line("menu = true".into());
    }
    Ok(out)
}
