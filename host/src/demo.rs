//! `octet-wasm demo`: a scripted octet session against an extension
//! directory, printed readably.
//!
//! It launches this very binary with the manifest's entrypoint args exactly
//! as octet would (cleared environment, `OCTET_*` variables, cwd = a fresh
//! workspace) through [`crate::hostsim`], whose checker applies octet's
//! fatal rules to every line, so the demo doubles as a smoke test: it fails
//! if the shim writes anything octet would die of.

use crate::hostsim::{
    ApiVersion, Context, Frame, InitializeParams, Launch, ManifestSpec, Reply, Session,
};
use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to play.
pub struct DemoOptions {
    pub extension_dir: PathBuf,
    /// Arguments for the tool calls.
    pub arguments: Value,
    /// Arguments for the call that is cancelled (API 0.2).
    pub slow_arguments: Option<Value>,
}

#[derive(Deserialize)]
struct Manifest {
    name: String,
    version: Option<String>,
    api_version: String,
    entrypoint: Entrypoint,
    #[serde(default)]
    capabilities: Capabilities,
    #[serde(default)]
    contributes: Contributes,
}

#[derive(Deserialize)]
struct Entrypoint {
    #[serde(default)]
    args: Vec<String>,
}

#[derive(Deserialize, Default)]
struct Capabilities {
    filesystem: Option<String>,
}

#[derive(Deserialize, Default)]
struct Contributes {
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    commands: Vec<String>,
    #[serde(default)]
    hooks: Vec<String>,
    #[serde(default)]
    ui: Vec<String>,
    #[serde(default)]
    context: bool,
    #[serde(default)]
    tool_renderers: Vec<String>,
    #[serde(default)]
    notifications: bool,
    #[serde(default)]
    confirmations: bool,
}

const TIMEOUT: Duration = Duration::from_secs(30);

/// Plays the session; `Err` when the extension misbehaves.
pub fn run(options: &DemoOptions) -> anyhow::Result<()> {
    let dir = options.extension_dir.canonicalize().with_context(|| {
        format!(
            "extension directory {} not found",
            options.extension_dir.display()
        )
    })?;
    let manifest_path = dir.join("extension.toml");
    let text = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let manifest: Manifest = toml::from_str(&text)
        .with_context(|| format!("{} is not a valid manifest", manifest_path.display()))?;
    let api = ApiVersion::parse(&manifest.api_version).with_context(|| {
        format!(
            "{}: api_version {:?} is not 0.1 or 0.2",
            manifest_path.display(),
            manifest.api_version
        )
    })?;
    let spec = spec(&manifest, api);
    let workspace = scratch_dir("workspace")?;
    let scratch = scratch_dir("scratch")?;
    let shim = std::env::current_exe().context("cannot locate the octet-wasm binary")?;
    let launch = Launch::new(shim)
        .args(&manifest.entrypoint.args)
        .extension_dir(&dir)
        .manifest_path(&manifest_path)
        .workspace(&workspace)
        .scratch(&scratch)
        .api_version(api)
        .name(&manifest.name);
    heading(&format!(
        "octet-wasm demo: {} (API {}) from {}",
        manifest.name,
        manifest.api_version,
        dir.display()
    ));
    let mut session = launch.spawn().context("cannot start the extension")?;
    let played = play(
        &mut session,
        options,
        &manifest,
        &spec,
        &manifest_path,
        &workspace,
    );
    let log = session.stderr().records();
    let _ = std::fs::remove_dir_all(&workspace);
    let _ = std::fs::remove_dir_all(&scratch);
    heading("shim log (stderr, structured)");
    for record in log.iter().take(40) {
        say(&format!("  {}", Value::Object(record.clone())));
    }
    played
}

fn play(
    session: &mut Session,
    options: &DemoOptions,
    manifest: &Manifest,
    spec: &ManifestSpec,
    manifest_path: &Path,
    workspace: &Path,
) -> anyhow::Result<()> {
    let params = InitializeParams::new(spec, manifest_path, workspace).to_json();
    let reply = exchange(session, "initialize", params)?;
    if let Some(Err(error)) = reply.frame.outcome() {
        bail!("initialize failed: {} ({})", error.message, error.code);
    }
    let mut context = Context::new(workspace);
    if manifest.api_version == "0.2" {
        context = context.resource_owner("demo-session", "demo-instance", 1);
    }
    let context = context.to_json();
    let mut last_output = String::new();
    if let Some(tool) = manifest.contributes.tools.first() {
        let reply = exchange(
            session,
            "tool/call",
            json!({"name": tool, "arguments": options.arguments, "context": context}),
        )?;
        last_output = output_text(&reply);
    }
    if let Some(command) = manifest.contributes.commands.first() {
        exchange(
            session,
            "command/execute",
            json!({"name": command, "arguments": ["Ada"], "context": context}),
        )?;
    }
    for hook in &manifest.contributes.hooks {
        let payload = match hook.as_str() {
            "before_prompt" => json!({"prompt": "Say hello"}),
            "after_response" => json!({"response": "Hello!"}),
            "before_tool_call" => json!({"name": "bash", "arguments": {"command": "ls"}}),
            "after_tool_call" => {
                json!({"name": "bash", "arguments": {"command": "ls"}, "output": "README.md", "is_error": false})
            }
            _ => continue,
        };
        exchange(
            session,
            "hook/run",
            json!({"hook": hook, "payload": payload, "context": context}),
        )?;
    }
    if manifest.contributes.context {
        exchange(
            session,
            "context/collect",
            json!({"prompt": "Say hello", "context": context}),
        )?;
    }
    for surface in &manifest.contributes.ui {
        exchange(
            session,
            "status/collect",
            json!({"surface": surface, "context": context}),
        )?;
    }
    for tool in &manifest.contributes.tool_renderers {
        exchange(
            session,
            "tool/render",
            json!({"name": tool, "arguments": options.arguments, "output": last_output, "is_error": false, "context": context}),
        )?;
    }
    if manifest.api_version == "0.2"
        && let Some(tool) = manifest.contributes.tools.first()
    {
        let arguments = options
            .slow_arguments
            .clone()
            .unwrap_or_else(|| options.arguments.clone());
        let params = json!({"name": tool, "arguments": arguments, "context": context});
        say(&format!("→ tool/call {}", brief(&params)));
        let id = session.request("tool/call", params)?;
        std::thread::sleep(Duration::from_millis(200));
        say(&format!(
            "→ $/cancelRequest {}",
            json!({"id": id, "reason": "user"})
        ));
        session.cancel(id, "user")?;
        let reply = session.wait_response(id, TIMEOUT)?;
        show(&reply);
    }
    let started = std::time::Instant::now();
    exchange(session, "shutdown", json!({}))?;
    let status = session.wait_exit(Duration::from_secs(4))?;
    say(&format!(
        "  (process exited with {status} {} ms after the shutdown request)",
        started.elapsed().as_millis()
    ));
    session
        .check_clean()
        .map_err(|err| anyhow::anyhow!("the shim wrote a frame octet would reject: {err}"))?;
    heading("every frame passed octet's fatal-rule checks");
    Ok(())
}

fn spec(manifest: &Manifest, api: ApiVersion) -> ManifestSpec {
    fn names(items: &[String]) -> Vec<&str> {
        items.iter().map(String::as_str).collect()
    }
    let c = &manifest.contributes;
    ManifestSpec::new(&manifest.name, api)
        .version(manifest.version.as_deref().unwrap_or("0.1.0"))
        .filesystem(
            manifest
                .capabilities
                .filesystem
                .as_deref()
                .unwrap_or("none"),
        )
        .tools(&names(&c.tools))
        .commands(&names(&c.commands))
        .hooks(&names(&c.hooks))
        .ui(&names(&c.ui))
        .tool_renderers(&names(&c.tool_renderers))
        .context(c.context)
        .notifications(c.notifications)
        .confirmations(c.confirmations)
}

/// The params as shown: the execution context and the long initialize
/// members are elided, since they repeat on every request.
fn brief(params: &Value) -> Value {
    let mut shown = params.clone();
    if let Value::Object(map) = &mut shown {
        for key in [
            "context",
            "host",
            "extension",
            "capabilities",
            "contributes",
        ] {
            if map.contains_key(key) {
                map.insert(key.into(), json!("…"));
            }
        }
    }
    shown
}

fn exchange(session: &mut Session, method: &str, params: Value) -> anyhow::Result<Reply> {
    say(&format!("→ {method} {}", brief(&params)));
    let id = session.request(method, params)?;
    // Confirmations are answered "yes" so the demo never blocks.
    let reply = session.wait_response_with(id, TIMEOUT, |frame| {
        (frame.method() == Some("confirmation/request")).then(|| json!({"confirmed": true}))
    })?;
    show(&reply);
    Ok(reply)
}

fn show(reply: &Reply) {
    for frame in &reply.before {
        say(&format!("← {}", shorten(frame)));
    }
    say(&format!("← {}", shorten(&reply.frame)));
}

fn shorten(frame: &Frame) -> String {
    const MAX: usize = 400;
    if frame.raw.len() <= MAX {
        return frame.raw.clone();
    }
    let mut end = MAX;
    while !frame.raw.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &frame.raw[..end], frame.raw.len())
}

fn output_text(reply: &Reply) -> String {
    match reply.frame.outcome() {
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

fn scratch_dir(what: &str) -> anyhow::Result<PathBuf> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!(
        "octet-wasm-demo-{what}-{}-{nanos}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

#[allow(
    clippy::print_stdout,
    reason = "the demo's output is the transcript itself"
)]
fn say(line: &str) {
    println!("{line}");
}

fn heading(text: &str) {
    say("");
    say(&format!("== {text}"));
}
