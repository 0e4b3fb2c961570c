//! What a component is, found offline: its WIT version, its description
//! (from `describe`, run in a sandbox with no filesystem, network or
//! environment and no host attached), the imports it uses and the
//! capabilities they imply, its size, digest and metadata section.

use super::metadata::{self, Metadata};
use crate::runtime::cache::{self, Cache};
use crate::runtime::component_file::{self, ComponentFile};
use crate::runtime::offline::Offline;
use crate::runtime::types::{Description, LifecycleKind};
use crate::runtime::{FsAccess, Limits, Runtime, Sandbox, engine};
use anyhow::Context as _;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The export every guest provides; its version is the WIT version.
const GUEST_INTERFACE: &str = "octet:extension/guest";

/// What imports can reach beyond the component itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// Imports `wasi:filesystem/*`.
    pub filesystem: bool,
    /// Imports `wasi:sockets/*` or `wasi:http/*`.
    pub network: bool,
    /// Imports `wasi:cli/environment`.
    pub environment: bool,
}

impl Reach {
    /// The capabilities implied by `imports` (interface names, versioned).
    pub fn from_imports(imports: &[String]) -> Reach {
        let uses = |prefix: &str| imports.iter().any(|name| name.starts_with(prefix));
        Reach {
            filesystem: uses("wasi:filesystem/"),
            network: uses("wasi:sockets/") || uses("wasi:http/"),
            environment: uses("wasi:cli/environment"),
        }
    }

    /// The imports behind one capability, for messages.
    pub fn imports_for<'a>(imports: &'a [String], capability: &str) -> Vec<&'a str> {
        let prefixes: &[&str] = match capability {
            "filesystem" => &["wasi:filesystem/"],
            "network" => &["wasi:sockets/", "wasi:http/"],
            "environment" => &["wasi:cli/environment"],
            _ => &[],
        };
        imports
            .iter()
            .filter(|name| prefixes.iter().any(|p| name.starts_with(p)))
            .map(String::as_str)
            .collect()
    }
}

/// Everything the author tools know about a component.
pub struct Analysis {
    pub path: PathBuf,
    pub size: usize,
    pub sha256: String,
    /// Package version of the exported `octet:extension/guest` (`0.2.0`).
    pub wit_version: Option<String>,
    pub imports: Vec<String>,
    pub exports: Vec<String>,
    pub reach: Reach,
    pub metadata: Option<Metadata>,
    pub description: Description,
    /// What its signature section holds (`crate::signing`).
    pub signature: crate::signing::Examination,
}

/// Loads, validates, links and describes `path`. Uses the compiled cache
/// `run` uses, so inspecting a large component twice compiles it once.
pub fn analyze(path: &Path) -> anyhow::Result<Analysis> {
    let file = component_file::read_hashed(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let metadata = metadata::read(&file.bytes).with_context(|| format!("{}", path.display()))?;
    let cache = Cache::default_dir().and_then(|dir| Cache::open(&dir).ok());
    let limits = Limits::default();
    let runtime = match Runtime::<Offline>::load(&file, path, limits.clone(), cache.as_ref()) {
        Ok((runtime, _)) => runtime,
        Err(err) => {
            // Name what it imports and exports, so the mismatch is visible.
            let names = interface_names(&file, path, cache.as_ref())
                .map(|(imports, exports)| {
                    format!(
                        "\n  imports: {}\n  exports: {}",
                        imports.join(", "),
                        exports.join(", ")
                    )
                })
                .unwrap_or_default();
            anyhow::bail!("{err:#}{names}");
        }
    };
    let (engine, component) = runtime.component();
    let ty = component.component_type();
    let imports: Vec<String> = ty
        .imports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    let wit_version = exports.iter().find_map(|name| {
        name.strip_prefix(GUEST_INTERFACE)?
            .strip_prefix('@')
            .map(str::to_owned)
    });
    let sandbox = Sandbox {
        filesystem: FsAccess::None,
        filesystem_asked: FsAccess::None,
        workspace: std::env::temp_dir(),
        network: false,
        env: Vec::new(),
        scratch: None,
        output_bytes: limits.output_bytes,
    };
    let tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let description = tokio.block_on(async {
        let mut instance = runtime
            .instantiate(Arc::new(Offline), &sandbox)
            .await
            .map_err(|fault| anyhow::anyhow!("{fault}"))?;
        instance
            .describe()
            .await
            .map_err(|fault| anyhow::anyhow!("describe failed: {fault}"))
    })?;
    Ok(Analysis {
        path: path.to_path_buf(),
        size: file.bytes.len(),
        sha256: file.digest.hex(),
        wit_version,
        reach: Reach::from_imports(&imports),
        imports,
        exports,
        metadata,
        description,
        signature: crate::signing::examine(&file.bytes),
    })
}

fn interface_names(
    file: &ComponentFile,
    path: &Path,
    cache: Option<&Cache>,
) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let engine = engine::build(&Limits::default())?;
    let (component, _) = cache::load_or_compile(&engine, &file.bytes, &file.digest, path, cache)?;
    let ty = component.component_type();
    let names = |items: Vec<&str>| items.into_iter().map(str::to_owned).collect();
    Ok((
        names(ty.imports(&engine).map(|(n, _)| n).collect()),
        names(ty.exports(&engine).map(|(n, _)| n).collect()),
    ))
}

/// Lifecycle kinds in protocol spelling.
pub fn lifecycle_names(kinds: &[LifecycleKind]) -> Vec<&'static str> {
    kinds
        .iter()
        .map(|k| crate::protocol::handshake::initialize::lifecycle_method(*k))
        .collect()
}

fn json_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The description as JSON (schemas parsed back into JSON values).
pub fn description_json(description: &Description) -> Value {
    json!({
        "name": description.name,
        "tools": description.tools.iter().map(|tool| {
            let mut value = json!({
                "name": tool.name,
                "description": tool.description,
                "parameters": json_text(&tool.parameters),
            });
            if let Some(schema) = &tool.output_schema {
                value["output_schema"] = json_text(schema);
            }
            if let Some(snippet) = &tool.prompt_snippet {
                value["prompt_snippet"] = json!(snippet);
            }
            if !tool.prompt_guidelines.is_empty() {
                value["prompt_guidelines"] = json!(tool.prompt_guidelines);
            }
            value
        }).collect::<Vec<_>>(),
        "commands": description.commands.iter().map(|command| {
            let mut value = json!({"name": command.name, "description": command.description});
            if let Some(usage) = &command.usage {
                value["usage"] = json!(usage);
            }
            value
        }).collect::<Vec<_>>(),
        "hooks": description.hooks,
        "context": description.context,
        "status_surfaces": description.status_surfaces,
        "renderers": description.renderers,
        "menu": description.menu,
        "lifecycle": lifecycle_names(&description.lifecycle),
        "max_concurrency": description.max_concurrency,
        "features": description.features,
    })
}
