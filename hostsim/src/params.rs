//! Builders for what octet sends: `initialize` params
//! (docs/protocol.md#initialize-params) from a manifest description and
//! execution contexts (docs/protocol.md#execution-context). Also renders the
//! description as an `extension.toml`, so tests can generate manifests.

use super::offer_v02::{HOST_OPTIONAL_FEATURES, REQUIRED_FEATURES};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The JSON-lines wire versions: 0.1 (frozen), 0.2 (feature-negotiated)
/// and 0.4 (octet's current authoring API: the 0.2 wire with a longer
/// offer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ApiVersion {
    #[default]
    V0_1,
    V0_2,
    V0_4,
}

impl ApiVersion {
    /// `"0.1"`, `"0.2"` or `"0.4"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V0_1 => "0.1",
            ApiVersion::V0_2 => "0.2",
            ApiVersion::V0_4 => "0.4",
        }
    }

    /// Parses `"0.1"` / `"0.2"` / `"0.4"`.
    pub fn parse(text: &str) -> Option<ApiVersion> {
        match text {
            "0.1" => Some(ApiVersion::V0_1),
            "0.2" => Some(ApiVersion::V0_2),
            "0.4" => Some(ApiVersion::V0_4),
            _ => None,
        }
    }

    /// Whether the version negotiates features (0.2 and 0.4).
    pub fn negotiates(self) -> bool {
        self != ApiVersion::V0_1
    }
}

/// The host's pending-request bound, offered as
/// `protocol.limits.max_concurrent_requests` (docs/protocol.md#concurrency).
pub const HOST_MAX_CONCURRENT_REQUESTS: u64 = 64;

/// The host version the simulated host reports.
pub const OCTET_VERSION: &str = "0.8.0";

/// The manifest facts the host serializes into `initialize`: identity,
/// `[capabilities]` and `[contributes]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ManifestSpec {
    pub name: String,
    pub version: String,
    pub api_version: ApiVersion,
    pub description: String,
    /// `filesystem`: `none`, `workspace` or `unrestricted`.
    pub filesystem: String,
    pub process: bool,
    pub network: bool,
    /// `[capabilities].environment` (API 0.2): brokered variable names.
    pub environment: Vec<String>,
    pub tools: Vec<String>,
    pub commands: Vec<String>,
    pub hooks: Vec<String>,
    pub ui: Vec<String>,
    pub context: bool,
    pub tool_renderers: Vec<String>,
    pub notifications: bool,
    pub confirmations: bool,
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

impl ManifestSpec {
    /// A manifest declaring nothing, with filesystem `none`.
    pub fn new(name: &str, api_version: ApiVersion) -> ManifestSpec {
        ManifestSpec {
            name: name.to_owned(),
            version: "0.1.0".to_owned(),
            api_version,
            description: format!("{name} extension"),
            filesystem: "none".to_owned(),
            process: false,
            network: false,
            environment: Vec::new(),
            tools: Vec::new(),
            commands: Vec::new(),
            hooks: Vec::new(),
            ui: Vec::new(),
            context: false,
            tool_renderers: Vec::new(),
            notifications: false,
            confirmations: false,
        }
    }

    pub fn tools(mut self, tools: &[&str]) -> Self {
        self.tools = strings(tools);
        self
    }

    pub fn commands(mut self, commands: &[&str]) -> Self {
        self.commands = strings(commands);
        self
    }

    pub fn hooks(mut self, hooks: &[&str]) -> Self {
        self.hooks = strings(hooks);
        self
    }

    pub fn ui(mut self, surfaces: &[&str]) -> Self {
        self.ui = strings(surfaces);
        self
    }

    pub fn tool_renderers(mut self, tools: &[&str]) -> Self {
        self.tool_renderers = strings(tools);
        self
    }

    pub fn context(mut self, declared: bool) -> Self {
        self.context = declared;
        self
    }

    pub fn notifications(mut self, declared: bool) -> Self {
        self.notifications = declared;
        self
    }

    pub fn confirmations(mut self, declared: bool) -> Self {
        self.confirmations = declared;
        self
    }

    pub fn filesystem(mut self, access: &str) -> Self {
        self.filesystem = access.to_owned();
        self
    }

    pub fn network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// `[capabilities].environment` (API 0.2 only; octet's manifest
    /// validation rejects it on 0.1).
    pub fn environment(mut self, names: &[&str]) -> Self {
        self.environment = strings(names);
        self
    }

    pub fn version(mut self, version: &str) -> Self {
        self.version = version.to_owned();
        self
    }

    pub fn description(mut self, description: &str) -> Self {
        self.description = description.to_owned();
        self
    }

    /// `initialize.params.capabilities`: the literal three-key shape, plus
    /// `environment` only when non-empty (docs/protocol.md#initialize-params).
    pub fn capabilities_json(&self) -> Value {
        let mut capabilities = json!({"filesystem": self.filesystem, "process": self.process, "network": self.network});
        if !self.environment.is_empty() {
            capabilities["environment"] = json!(self.environment);
        }
        capabilities
    }

    /// `initialize.params.contributes` (docs/protocol.md#initialize-params):
    /// 0.2 adds `shortcuts: []`.
    pub fn contributes_json(&self) -> Value {
        let mut contributes = json!({
            "tools": self.tools,
            "commands": self.commands,
            "hooks": self.hooks,
            "ui": self.ui,
            "context": self.context,
            "tool_renderers": self.tool_renderers,
            "notifications": self.notifications,
            "confirmations": self.confirmations,
        });
        if self.api_version.negotiates() {
            contributes["shortcuts"] = json!([]);
        }
        contributes
    }

    /// Renders the manifest as `extension.toml` with the given entrypoint.
    pub fn to_extension_toml(&self, command: &str, args: &[&str]) -> String {
        let quote = |text: &str| Value::from(text).to_string();
        let list = |items: &[String]| Value::from(items.to_vec()).to_string();
        let mut toml = String::new();
        let _ = writeln!(toml, "name = {}", quote(&self.name));
        let _ = writeln!(toml, "version = {}", quote(&self.version));
        let _ = writeln!(toml, "api_version = {}", quote(self.api_version.as_str()));
        let _ = writeln!(toml, "description = {}", quote(&self.description));
        let _ = writeln!(toml, "\n[entrypoint]\ncommand = {}", quote(command));
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        let _ = writeln!(toml, "args = {}", list(&args));
        let _ = writeln!(toml, "\n[capabilities]");
        let _ = writeln!(toml, "filesystem = {}", quote(&self.filesystem));
        let _ = writeln!(
            toml,
            "process = {}\nnetwork = {}",
            self.process, self.network
        );
        if !self.environment.is_empty() {
            let _ = writeln!(toml, "environment = {}", list(&self.environment));
        }
        let _ = writeln!(toml, "\n[contributes]");
        let _ = writeln!(toml, "tools = {}", list(&self.tools));
        let _ = writeln!(toml, "commands = {}", list(&self.commands));
        let _ = writeln!(toml, "hooks = {}", list(&self.hooks));
        let _ = writeln!(toml, "ui = {}", list(&self.ui));
        let _ = writeln!(toml, "context = {}", self.context);
        let _ = writeln!(toml, "tool_renderers = {}", list(&self.tool_renderers));
        let _ = writeln!(toml, "notifications = {}", self.notifications);
        let _ = writeln!(toml, "confirmations = {}", self.confirmations);
        toml
    }
}

/// Builds `initialize` params as octet does
/// (docs/protocol.md#initialize-params).
#[derive(Clone, Debug)]
pub struct InitializeParams {
    manifest: ManifestSpec,
    manifest_path: PathBuf,
    workspace: PathBuf,
    host: Value,
    optional_features: Vec<String>,
    max_concurrent_requests: u64,
    /// API 0.4: the `protocol.bulk_objects_v1` object, when the host has
    /// bulk storage.
    bulk_objects: Option<Value>,
}

impl InitializeParams {
    /// Params for `manifest` as loaded from `manifest_path`, with the
    /// workspace root `workspace`. For API 0.2 the offer is the host's real
    /// 21 optional features and a limit of 64; for API 0.4 it is what the
    /// coding product offers a third-party 0.4 process with this manifest
    /// ([`super::offer_v04::optional_features`]), with bulk storage.
    pub fn new(manifest: &ManifestSpec, manifest_path: &Path, workspace: &Path) -> Self {
        let (optional_features, bulk_objects) = match manifest.api_version {
            ApiVersion::V0_4 => (
                super::offer_v04::optional_features(&manifest.hooks, true),
                Some(super::offer_v04::bulk_objects(workspace)),
            ),
            _ => (strings(&HOST_OPTIONAL_FEATURES), None),
        };
        InitializeParams {
            manifest: manifest.clone(),
            manifest_path: manifest_path.to_owned(),
            workspace: workspace.to_owned(),
            host: host_state(),
            optional_features,
            max_concurrent_requests: HOST_MAX_CONCURRENT_REQUESTS,
            bulk_objects,
        }
    }

    /// API 0.4: leaves `protocol.bulk_objects_v1` (and the feature) out, as
    /// a host without bulk storage does.
    pub fn without_bulk_storage(mut self) -> Self {
        self.bulk_objects = None;
        self.optional_features.retain(|f| f != "bulk_objects_v1");
        self
    }

    /// Replaces the offered optional features (API 0.2).
    pub fn optional_features(mut self, features: &[&str]) -> Self {
        self.optional_features = strings(features);
        self
    }

    /// Replaces `protocol.limits.max_concurrent_requests` (API 0.2).
    pub fn max_concurrent_requests(mut self, limit: u64) -> Self {
        self.max_concurrent_requests = limit;
        self
    }

    /// Replaces the `host` state object.
    pub fn host(mut self, host: Value) -> Self {
        self.host = host;
        self
    }

    /// The params object.
    pub fn to_json(&self) -> Value {
        let manifest = &self.manifest;
        let mut params = Map::new();
        params.insert("api_version".into(), manifest.api_version.as_str().into());
        params.insert("octet_version".into(), OCTET_VERSION.into());
        params.insert(
            "extension".into(),
            json!({
                "name": manifest.name,
                "version": manifest.version,
                "manifest_path": self.manifest_path.to_string_lossy(),
                "source": "explicit",
            }),
        );
        params.insert("workspace".into(), self.workspace.to_string_lossy().into());
        params.insert("capabilities".into(), manifest.capabilities_json());
        params.insert("contributes".into(), manifest.contributes_json());
        params.insert("host".into(), self.host.clone());
        if manifest.api_version.negotiates() {
            params.insert("flag_values".into(), json!([]));
            let mut protocol = json!({
                "version": manifest.api_version.as_str(),
                "required_features": REQUIRED_FEATURES,
                "optional_features": self.optional_features,
                "limits": {"max_concurrent_requests": self.max_concurrent_requests},
            });
            if manifest.api_version == ApiVersion::V0_4 {
                // Sent to every 0.4 process, whatever it negotiates.
                protocol["limits"]["resource_refs_v1"] = super::offer_v04::resource_refs_limits();
                if let Some(bulk) = &self.bulk_objects {
                    protocol["bulk_objects_v1"] = bulk.clone();
                }
            }
            params.insert("protocol".into(), protocol);
        }
        Value::Object(params)
    }
}

/// The default `host` state (ExtensionHostState,
/// docs/protocol.md#initialize-params).
pub fn host_state() -> Value {
    json!({
        "session_id": null,
        "session_name": null,
        "model": "m-large",
        "reasoning": null,
        "active_skills": [],
    })
}

/// Builds an execution `context` object (docs/protocol.md#execution-context).
#[derive(Clone, Debug)]
pub struct Context {
    workspace: String,
    execution_scope: Option<String>,
    resource_owner: Option<Value>,
    host: Value,
}

impl Context {
    /// A context for `workspace` with no scope, no owner and the default
    /// host state.
    pub fn new(workspace: &Path) -> Context {
        Context {
            workspace: workspace.to_string_lossy().into_owned(),
            execution_scope: None,
            resource_owner: None,
            host: host_state(),
        }
    }

    pub fn execution_scope(mut self, scope: &str) -> Self {
        self.execution_scope = Some(scope.to_owned());
        self
    }

    /// Adds an API 0.2 `resource_owner` (docs/protocol.md#resource-owner).
    pub fn resource_owner(mut self, session_id: &str, instance_id: &str, generation: u64) -> Self {
        self.resource_owner = Some(json!({
            "session_id": session_id,
            "extension_instance_id": instance_id,
            "process_generation": generation,
        }));
        self
    }

    pub fn host(mut self, host: Value) -> Self {
        self.host = host;
        self
    }

    /// The context object; `resource_owner` is omitted when absent.
    pub fn to_json(&self) -> Value {
        let mut context = Map::new();
        context.insert("workspace".into(), self.workspace.clone().into());
        context.insert(
            "execution_scope".into(),
            self.execution_scope.clone().into(),
        );
        if let Some(owner) = &self.resource_owner {
            context.insert("resource_owner".into(), owner.clone());
        }
        context.insert("host".into(), self.host.clone());
        Value::Object(context)
    }
}
