//! `octet-wasm demo`: a small scripted octet host for any extension
//! directory, printed readably.
//!
//! It launches this very binary with the manifest's entrypoint args exactly
//! as octet would (cleared environment, `OCTET_*` variables, cwd = the
//! workspace) through [`octet_hostsim`], whose checker applies octet's
//! fatal rules to every line, so the demo doubles as a smoke test: it fails
//! if the shim writes anything octet would die of. It plays either the
//! requests the command line names (`--tool`, `--command`) or a tour of
//! everything the manifest declares, answers the extension's own requests
//! like a permissive local octet ([`services`]), and can record the session
//! for [`replay`].
//!
//! The demo is an author's tool that the user runs: started as an
//! extension (a bundle's `[entrypoint].args` naming `demo --record FILE`)
//! it refuses, so nothing in the bundle chooses its flags or where it
//! writes. It reads the manifest only for what octet would send (name,
//! version, `[capabilities]`, `[contributes]`) and the entrypoint args it
//! passes to `run`, which treats them as hostile as usual (it does not
//! apply `[entrypoint].env`).

pub mod args;
mod composition;
pub mod record;
pub mod replay;
mod services;
mod transcript;
mod wire;

pub use args::DemoArgs;

use anyhow::{Context as _, bail};
use args::Step;
use octet_hostsim::{ApiVersion, Context, InitializeParams, Launch, ManifestSpec};
use serde_json::{Value, json};
use services::LocalHost;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use toml::Table;
use transcript::{heading, say};
use wire::Wire;

/// What the demo needs from `extension.toml`.
pub(crate) struct Manifest {
    pub path: PathBuf,
    pub name: String,
    pub version: String,
    pub api_version: String,
    pub api: ApiVersion,
    pub args: Vec<String>,
    pub filesystem: String,
    pub network: bool,
    pub secrets: Vec<String>,
    pub tools: Vec<String>,
    pub commands: Vec<String>,
    pub hooks: Vec<String>,
    pub ui: Vec<String>,
    pub tool_renderers: Vec<String>,
    pub context: bool,
    pub notifications: bool,
    pub confirmations: bool,
    pub presentation: bool,
}

impl Manifest {
    pub(crate) fn read(dir: &Path) -> anyhow::Result<Manifest> {
        let path = dir.join("extension.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let table: Table = toml::from_str(&text)
            .with_context(|| format!("{} is not valid TOML", path.display()))?;
        let string = |section: Option<&Table>, key: &str| {
            section
                .and_then(|t| t.get(key))
                .and_then(toml::Value::as_str)
                .map(str::to_owned)
        };
        let strings = |section: Option<&Table>, key: &str| -> Vec<String> {
            section
                .and_then(|t| t.get(key))
                .and_then(toml::Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|i| i.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let flag = |section: Option<&Table>, key: &str| {
            section
                .and_then(|t| t.get(key))
                .and_then(toml::Value::as_bool)
                == Some(true)
        };
        let section = |key: &str| table.get(key).and_then(toml::Value::as_table);
        let (entry, caps, c) = (
            section("entrypoint"),
            section("capabilities"),
            section("contributes"),
        );
        let name =
            string(Some(&table), "name").with_context(|| format!("{}: no name", path.display()))?;
        let api_version = string(Some(&table), "api_version").unwrap_or_default();
        let api = ApiVersion::parse(&api_version).with_context(|| {
            format!(
                "{}: api_version {api_version:?} is not one octet-wasm speaks",
                path.display()
            )
        })?;
        Ok(Manifest {
            version: string(Some(&table), "version").unwrap_or_else(|| "0.1.0".into()),
            args: strings(entry, "args"),
            filesystem: string(caps, "filesystem").unwrap_or_else(|| "none".into()),
            network: flag(caps, "network"),
            secrets: strings(caps, "secrets"),
            tools: strings(c, "tools"),
            commands: strings(c, "commands"),
            hooks: strings(c, "hooks"),
            ui: strings(c, "ui"),
            tool_renderers: strings(c, "tool_renderers"),
            context: flag(c, "context"),
            notifications: flag(c, "notifications"),
            confirmations: flag(c, "confirmations"),
            presentation: flag(c, "presentation"),
            path,
            name,
            api_version,
            api,
        })
    }

    /// The `initialize` params octet sends for this manifest, offering
    /// `secrets` when the manifest declares some (the demo is their broker).
    fn initialize_params(&self, workspace: &Path) -> Value {
        fn names(items: &[String]) -> Vec<&str> {
            items.iter().map(String::as_str).collect()
        }
        let spec = ManifestSpec::new(&self.name, self.api)
            .version(&self.version)
            .filesystem(&self.filesystem)
            .network(self.network)
            .tools(&names(&self.tools))
            .commands(&names(&self.commands))
            .hooks(&names(&self.hooks))
            .ui(&names(&self.ui))
            .tool_renderers(&names(&self.tool_renderers))
            .context(self.context)
            .notifications(self.notifications)
            .confirmations(self.confirmations);
        let mut params = InitializeParams::new(&spec, &self.path, workspace).to_json();
        if let Some(Value::Array(offered)) = params
            .get_mut("protocol")
            .and_then(|protocol| protocol.get_mut("optional_features"))
        {
            // The offer is octet's for this API version (composition
            // included: demo/composition.rs serves it), plus `secrets` when
            // the manifest lists some.
            if !self.secrets.is_empty() && !offered.iter().any(|f| f == "secrets") {
                offered.push(json!("secrets"));
            }
        }
        if self.presentation {
            params["contributes"]["presentation"] = json!(true);
        }
        if !self.secrets.is_empty() {
            params["capabilities"]["secrets"] = json!(self.secrets);
        }
        params
    }
}

/// Plays the session; `Err` when the extension misbehaves.
pub fn run(args: &DemoArgs) -> anyhow::Result<()> {
    let answers = args.answers().map_err(anyhow::Error::msg)?;
    let slow_arguments = args
        .slow_args
        .as_deref()
        .map(|text| serde_json::from_str::<Value>(text).context("--slow-args is not valid JSON"))
        .transpose()?;
    let dir = args.extension_dir.canonicalize().with_context(|| {
        format!(
            "extension directory {} not found",
            args.extension_dir.display()
        )
    })?;
    let manifest = Manifest::read(&dir)?;
    let (workspace, temporary_workspace) = match &args.workspace {
        Some(dir) => (
            dir.canonicalize()
                .with_context(|| format!("--workspace {} not found", dir.display()))?,
            false,
        ),
        None => (scratch_dir("workspace")?, true),
    };
    let scratch = scratch_dir("scratch")?;
    let shim = std::env::current_exe().context("cannot locate the octet-wasm binary")?;
    let launch = Launch::new(shim)
        .args(&manifest.args)
        .extension_dir(&dir)
        .manifest_path(&manifest.path)
        .workspace(&workspace)
        .scratch(&scratch)
        .api_version(manifest.api)
        .name(&manifest.name);
    let recorder = match &args.record {
        Some(path) => Some(record::Recorder::create(
            path,
            &record::Header {
                octet_wasm_recording: 1,
                octet_wasm_version: env!("CARGO_PKG_VERSION").into(),
                extension: manifest.name.clone(),
                api_version: manifest.api_version.clone(),
                entrypoint_args: manifest.args.clone(),
                extension_dir: dir.clone(),
                manifest: manifest.path.clone(),
                workspace: workspace.clone(),
                started_unix_ms: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
            },
        )?),
        None => None,
    };
    heading(&format!(
        "octet-wasm demo: {} (API {}) from {}, workspace {}",
        manifest.name,
        manifest.api_version,
        dir.display(),
        workspace.display()
    ));
    let session = launch.spawn().context("cannot start the extension")?;
    let host = LocalHost::new(answers, manifest.secrets.clone(), &scratch);
    let mut wire = Wire::new(session, host, recorder, args.full);
    let played = play(&mut wire, args, slow_arguments, &manifest, &workspace);
    let log = wire.session.stderr().records();
    if let Some(recorder) = &wire.recorder {
        say(&format!("  (recorded to {})", recorder.path().display()));
    }
    drop(wire);
    if temporary_workspace {
        let _ = std::fs::remove_dir_all(&workspace);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    heading("shim log (stderr, structured)");
    for record in log.iter().take(40) {
        say(&format!("  {}", Value::Object(record.clone())));
    }
    played
}

fn play(
    wire: &mut Wire,
    args: &DemoArgs,
    slow_arguments: Option<Value>,
    manifest: &Manifest,
    workspace: &Path,
) -> anyhow::Result<()> {
    let reply = wire.exchange("initialize", manifest.initialize_params(workspace))?;
    match reply.outcome() {
        Some(Ok(result)) => {
            wire.host.tools = result["tools"]
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .filter_map(|t| t["name"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
        }
        Some(Err(error)) => bail!("initialize failed: {} ({})", error.message, error.code),
        None => bail!("initialize was not answered"),
    }
    let mut context = Context::new(workspace);
    if manifest.api.negotiates() {
        context = context.resource_owner("demo-session", "demo-instance", 1);
    }
    let context = context.to_json();
    if args.script.steps.is_empty() {
        let arguments = args
            .script
            .tour_arguments
            .clone()
            .unwrap_or_else(|| json!({"name": "Ada"}));
        tour(wire, manifest, &context, &arguments, slow_arguments)?;
    } else {
        for step in &args.script.steps {
            match step {
                Step::Tool { name, arguments } => {
                    let params = wire.tool_params(name, arguments, &context);
                    wire.exchange("tool/call", params)?;
                }
                Step::Command { name, arguments } => {
                    wire.exchange(
                        "command/execute",
                        json!({"name": name, "arguments": arguments, "context": context}),
                    )?;
                }
            }
        }
    }
    let started = std::time::Instant::now();
    wire.exchange("shutdown", json!({}))?;
    let status = wire.session.wait_exit(Duration::from_secs(4))?;
    say(&format!(
        "  (process exited with {status} {} ms after the shutdown request)",
        started.elapsed().as_millis()
    ));
    wire.finish()?;
    heading("every frame passed octet's fatal-rule checks");
    Ok(())
}

/// Everything the manifest declares, once: the first tool and command, the
/// hooks, context, status surfaces, renderers, and (on versions with
/// cancellation) a tool call cancelled after 200 ms.
fn tour(
    wire: &mut Wire,
    manifest: &Manifest,
    context: &Value,
    arguments: &Value,
    slow_arguments: Option<Value>,
) -> anyhow::Result<()> {
    let mut last_output = String::new();
    if let Some(tool) = manifest.tools.first() {
        let params = wire.tool_params(tool, arguments, context);
        let reply = wire.exchange("tool/call", params)?;
        last_output = output_text(&reply);
    }
    if let Some(command) = manifest.commands.first() {
        wire.exchange(
            "command/execute",
            json!({"name": command, "arguments": ["Ada"], "context": context}),
        )?;
    }
    for hook in &manifest.hooks {
        let payload = match hook.as_str() {
            "before_prompt" => json!({"prompt": "Say hello"}),
            "after_response" => json!({"response": "Hello!"}),
            "before_tool_call" => json!({"name": "bash", "arguments": {"command": "ls"}}),
            "after_tool_call" => {
                json!({"name": "bash", "arguments": {"command": "ls"}, "output": "README.md", "is_error": false})
            }
            _ => continue,
        };
        wire.exchange(
            "hook/run",
            json!({"hook": hook, "payload": payload, "context": context}),
        )?;
    }
    if manifest.context {
        wire.exchange(
            "context/collect",
            json!({"prompt": "Say hello", "context": context}),
        )?;
    }
    for surface in &manifest.ui {
        wire.exchange(
            "status/collect",
            json!({"surface": surface, "context": context}),
        )?;
    }
    for tool in &manifest.tool_renderers {
        wire.exchange(
            "tool/render",
            json!({"name": tool, "arguments": arguments, "output": last_output, "is_error": false, "context": context}),
        )?;
    }
    if manifest.api.negotiates()
        && let Some(tool) = manifest.tools.first()
    {
        let arguments = slow_arguments.unwrap_or_else(|| arguments.clone());
        let params = wire.tool_params(tool, &arguments, context);
        let id = wire.request("tool/call", params)?;
        std::thread::sleep(Duration::from_millis(200));
        wire.notify("$/cancelRequest", json!({"id": id, "reason": "user"}))?;
        wire.wait(id)?;
    }
    Ok(())
}

fn output_text(reply: &octet_hostsim::Frame) -> String {
    match reply.outcome() {
        Some(Ok(result)) => match &result["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

pub(crate) fn scratch_dir(what: &str) -> anyhow::Result<PathBuf> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!(
        "octet-wasm-demo-{what}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    dir.canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(api_version: &str, secrets: &str) -> (tempfile::TempDir, Manifest) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("extension.toml"),
            format!(
                "name = \"x\"\nversion = \"0.1.0\"\napi_version = \"{api_version}\"\n\
                 [entrypoint]\ncommand = \"octet-wasm\"\nargs = [\"run\", \"x.wasm\"]\n\
                 [capabilities]\n{secrets}\n[contributes]\ntools = [\"t\"]\n"
            ),
        )
        .unwrap();
        let manifest = Manifest::read(dir.path()).unwrap();
        (dir, manifest)
    }

    fn offered(params: &Value) -> Vec<String> {
        params["protocol"]["optional_features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn secrets_add_to_the_versions_offer_instead_of_replacing_it() {
        let (dir, with) = manifest("0.4", "secrets = [\"API_TOKEN\"]");
        let (_, without) = manifest("0.4", "");
        let with = offered(&with.initialize_params(dir.path()));
        let without = offered(&without.initialize_params(dir.path()));
        assert!(with.iter().any(|f| f == "secrets"));
        assert!(!without.iter().any(|f| f == "secrets"));
        assert!(
            with.iter().any(|f| f == "tool_prompt_metadata_v1"),
            "{with:?}"
        );
        assert_eq!(
            with.iter().filter(|f| *f != "secrets").collect::<Vec<_>>(),
            without.iter().collect::<Vec<_>>()
        );
    }

    /// octet offers composition to every 0.4 process; the demo's printed
    /// offer must match it (issue 26, author friction 7).
    #[test]
    fn the_0_4_offer_is_octets_composition_included() {
        let (dir, manifest) = manifest("0.4", "");
        let offer = offered(&manifest.initialize_params(dir.path()));
        let octets = octet_hostsim::v0_4_optional_features(&[], true);
        assert_eq!(offer, octets);
        assert!(
            offer.iter().any(|f| f == "tool_composition_v1"),
            "{offer:?}"
        );
    }
}
