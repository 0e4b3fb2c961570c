//! The `initialize` handshake: checking the host's params, checking the
//! guest's description against the manifest, negotiating, and the reply.
//!
//! Pure functions over JSON and the guest's [`Description`]; the server
//! calls them in order (docs/protocol.md#initialize).

use super::api_version::ApiVersion;
use super::feature::Feature;
use super::features;
use super::manifest::Contributes;
use crate::runtime::types::{Description, LifecycleKind, ToolDefinition};
use crate::wire::message::RpcError;
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// Most requests the shim lets the host keep in flight, whatever the guest
/// asks: the host's own default cap and the admission bound
/// (docs/protocol.md#concurrency, docs/choices.md#admission).
pub const MAX_CONCURRENCY: u32 = 64;

/// What the host's params say, checked.
#[derive(Debug, Clone)]
pub struct HostOffer {
    pub api: ApiVersion,
    pub contributes: Contributes,
    pub capabilities: Value,
    pub workspace: Option<String>,
    /// API 0.2: required features in the host's order.
    pub required: Vec<String>,
    /// API 0.2: optional features in the host's order.
    pub optional: Vec<String>,
    /// API 0.2: the host's concurrency cap (1 when absent, like the SDK).
    pub max_concurrent: u32,
}

/// The outcome of negotiation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    pub features: Vec<String>,
    pub max_concurrent: u32,
    /// Subscribed lifecycle methods, sorted (`turn/started`, ...).
    pub lifecycle: Vec<String>,
}

impl Negotiated {
    pub fn has(&self, feature: Feature) -> bool {
        self.features.iter().any(|f| f == feature.as_str())
    }
}

/// Checks the host's `initialize` params (the SDK's rules and texts,
/// docs/protocol.md#initialize-checks).
/// `env_version` is `OCTET_EXTENSION_API_VERSION`, when set.
pub fn check_params(params: &Value, env_version: Option<&str>) -> Result<HostOffer, RpcError> {
    let Value::Object(params) = params else {
        return Err(RpcError::invalid_params(
            "initialize params must be an object",
        ));
    };
    let requested = params
        .get("api_version")
        .and_then(Value::as_str)
        .unwrap_or("");
    let api = match requested {
        "0.1" => ApiVersion::V0_1,
        "0.2" => ApiVersion::V0_2,
        "0.4" => ApiVersion::V0_4,
        other => {
            return Err(RpcError::server(format!(
                "unsupported API version: host requested {other:?}, octet-wasm implements 0.1, 0.2 and 0.4"
            )));
        }
    };
    if let Some(selected) = env_version.filter(|v| !v.is_empty())
        && selected != requested
    {
        return Err(RpcError::server(format!(
            "unsupported API version: host requested {requested}, but OCTET_EXTENSION_API_VERSION selects {selected}"
        )));
    }
    let contributes = match params.get("contributes") {
        None => Contributes::default(),
        Some(value @ Value::Object(_)) => Contributes::from_json(value)?,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "initialize contributes must be an object",
            ));
        }
    };
    let mut offer = HostOffer {
        api,
        contributes,
        capabilities: params
            .get("capabilities")
            .cloned()
            .unwrap_or_else(|| json!({})),
        workspace: params
            .get("workspace")
            .and_then(Value::as_str)
            .map(str::to_owned),
        required: Vec::new(),
        optional: Vec::new(),
        max_concurrent: 1,
    };
    if api.negotiates() {
        check_protocol(params, &mut offer)?;
    }
    super::features::hook_features(api, &offer.contributes.hooks, &offer.optional)?;
    Ok(offer)
}

fn check_protocol(params: &Map<String, Value>, offer: &mut HostOffer) -> Result<(), RpcError> {
    let Some(Value::Object(protocol)) = params.get("protocol") else {
        return Err(RpcError::invalid_params(format!(
            "API {} initialize requires a protocol object",
            offer.api.as_str()
        )));
    };
    // The host copies the manifest's version into both places; a mismatch
    // is a host that would also refuse our answer.
    if protocol.get("version").and_then(Value::as_str) != Some(offer.api.as_str()) {
        return Err(RpcError::server(
            "unsupported executable-extension protocol version",
        ));
    }
    // A contract is the canonical 0.3 wire; a 0.4 process must never be
    // answered on it (octet's SDK refuses the same way).
    if offer.api == ApiVersion::V0_4
        && (params.contains_key("contract") || protocol.contains_key("contract"))
    {
        return Err(RpcError::server(
            "API 0.4 initialize must not carry a contract (that is the canonical API 0.3 wire, which octet-wasm does not speak)",
        ));
    }
    offer.required = feature_list(protocol, "required_features")?;
    offer.optional = feature_list(protocol, "optional_features")?;
    let unsupported: Vec<&String> = offer
        .required
        .iter()
        .filter(|f| {
            !super::feature::REQUIRED
                .iter()
                .any(|r| r.as_str() == f.as_str())
        })
        .collect();
    if !unsupported.is_empty() {
        return Err(RpcError::server(format!(
            "required API {} features are unsupported",
            offer.api.as_str()
        ))
        .with_data(json!({ "unsupported_features": unsupported })));
    }
    match protocol.get("limits") {
        None => {}
        Some(Value::Object(limits)) => match limits.get("max_concurrent_requests") {
            None => {}
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n > 0) => {
                offer.max_concurrent = n.as_u64().unwrap_or(1).min(u64::from(u32::MAX)) as u32;
            }
            Some(_) => {
                return Err(RpcError::invalid_params(
                    "protocol.limits.max_concurrent_requests must be a positive integer",
                ));
            }
        },
        Some(_) => {
            return Err(RpcError::invalid_params(
                "protocol.limits must be an object",
            ));
        }
    }
    Ok(())
}

fn feature_list(protocol: &Map<String, Value>, key: &str) -> Result<Vec<String>, RpcError> {
    let bad = || RpcError::invalid_params(format!("protocol.{key} must be an array of strings"));
    let items = match protocol.get(key) {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(bad()),
    };
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let name = item.as_str().filter(|s| !s.is_empty()).ok_or_else(bad)?;
        if !seen.insert(name) {
            return Err(RpcError::invalid_params(format!(
                "protocol.{key} contains duplicate features"
            )));
        }
        out.push(name.to_owned());
    }
    Ok(out)
}

/// Checks that the guest registers exactly what the manifest declares
/// (docs/protocol.md#registration-check: the SDK checks this even when
/// `dynamic_tools` will be negotiated).
pub fn check_registration(offer: &HostOffer, description: &Description) -> Result<(), RpcError> {
    let tools: Vec<&str> = description.tools.iter().map(|t| t.name.as_str()).collect();
    let commands: Vec<&str> = description
        .commands
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    compare("tools", offer.contributes.tools.as_deref(), &tools)?;
    compare("commands", offer.contributes.commands.as_deref(), &commands)
}

fn compare(key: &str, declared: Option<&[String]>, registered: &[&str]) -> Result<(), RpcError> {
    let Some(declared) = declared else {
        return Ok(());
    };
    let declared_set: BTreeSet<&str> = declared.iter().map(String::as_str).collect();
    let registered_set: BTreeSet<&str> = registered.iter().copied().collect();
    if declared_set != registered_set || registered_set.len() != registered.len() {
        let mut sorted_declared: Vec<&str> = declared_set.into_iter().collect();
        sorted_declared.sort_unstable();
        let mut sorted_registered = registered.to_vec();
        sorted_registered.sort_unstable();
        return Err(RpcError::invalid_params(format!(
            "registered {key} do not match manifest declarations"
        ))
        .with_data(json!({ "declared": sorted_declared, "registered": sorted_registered })));
    }
    Ok(())
}

/// Lifecycle method names in protocol spelling.
pub fn lifecycle_method(kind: LifecycleKind) -> &'static str {
    match kind {
        LifecycleKind::SessionStarted => "session/started",
        LifecycleKind::SessionSettled => "session/settled",
        LifecycleKind::TurnStarted => "turn/started",
        LifecycleKind::TurnSettled => "turn/settled",
        LifecycleKind::ToolStarted => "tool/started",
        LifecycleKind::ToolSettled => "tool/settled",
    }
}

/// Negotiates features and limits (API 0.2 and 0.4; nothing on 0.1): the
/// required features, plus the optional ones the guest uses, the host
/// offered and the shim supports on this version, in the host's order (like
/// the SDK). `lifecycle_events` only with at least one handler, so a guest
/// never subscribes to all six by accident
/// (docs/protocol.md#lifecycle-subscription). The features a declared 0.4
/// hook forces are always selected ([`check_params`] made sure the host
/// offered them), and `tool_prompt_metadata_v1` whenever a tool carries
/// prompt metadata.
pub fn negotiate(offer: &HostOffer, description: &Description) -> Negotiated {
    if !offer.api.negotiates() {
        return Negotiated {
            features: Vec::new(),
            max_concurrent: 1,
            lifecycle: Vec::new(),
        };
    }
    let mut wanted: BTreeSet<&str> = description.features.iter().map(String::as_str).collect();
    if description.lifecycle.is_empty() {
        wanted.remove(Feature::LifecycleEvents.as_str());
    } else {
        wanted.insert(Feature::LifecycleEvents.as_str());
    }
    for feature in &wanted {
        if !features::supported(offer.api, feature) {
            // The guest chooses how many of these there are: its budget pays.
            crate::guest_log!(crate::log::Level::Warning, "the guest declares a feature octet-wasm does not support on this API version; not negotiated",
                "feature" => feature, "api_version" => offer.api.as_str());
        }
    }
    let forced = features::hook_features(offer.api, &offer.contributes.hooks, &offer.optional)
        .unwrap_or_default();
    wanted.extend(forced);
    if description
        .tools
        .iter()
        .any(crate::protocol::imports::tools_catalog::prompt::has)
    {
        wanted.insert(Feature::ToolPromptMetadata.as_str());
    }
    let mut features: Vec<String> = offer.required.clone();
    for feature in &offer.optional {
        if wanted.contains(feature.as_str())
            && features::supported(offer.api, feature)
            && !features.contains(feature)
        {
            features.push(feature.clone());
        }
    }
    features::apply_coupling(&mut features);
    let lifecycle = if features
        .iter()
        .any(|f| f == Feature::LifecycleEvents.as_str())
    {
        let set: BTreeSet<&str> = description
            .lifecycle
            .iter()
            .map(|k| lifecycle_method(*k))
            .collect();
        set.into_iter().map(str::to_owned).collect()
    } else {
        Vec::new()
    };
    let max_concurrent = offer
        .max_concurrent
        .min(description.max_concurrency.max(1))
        .min(MAX_CONCURRENCY);
    Negotiated {
        features,
        max_concurrent,
        lifecycle,
    }
}

/// The `initialize` result (docs/protocol.md#initialize-answer,
/// docs/protocol.md#host-validation).
pub fn reply(
    api: ApiVersion,
    description: &Description,
    negotiated: &Negotiated,
) -> Result<Value, String> {
    let metadata = negotiated.has(Feature::ToolPromptMetadata);
    if !metadata {
        crate::protocol::imports::tools_catalog::prompt::warn_dropped(
            &description.tools,
            if api == ApiVersion::V0_4 {
                "the host did not offer tool_prompt_metadata_v1"
            } else {
                "prompt metadata needs an API 0.4 manifest"
            },
        );
    }
    let mut tools = Vec::with_capacity(description.tools.len());
    for tool in &description.tools {
        tools.push(tool_json(api, tool, metadata)?);
    }
    let commands: Vec<Value> = description
        .commands
        .iter()
        .map(|command| {
            let mut object = Map::new();
            object.insert("name".into(), json!(command.name));
            object.insert("description".into(), json!(command.description));
            if let Some(usage) = &command.usage {
                object.insert("usage".into(), json!(usage));
            }
            Value::Object(object)
        })
        .collect();
    let mut result = Map::new();
    result.insert("api_version".into(), json!(api.as_str()));
    result.insert("tools".into(), Value::Array(tools));
    result.insert("commands".into(), Value::Array(commands));
    if api.negotiates() {
        let mut protocol = Map::new();
        protocol.insert("version".into(), json!(api.as_str()));
        protocol.insert("features".into(), json!(negotiated.features));
        protocol.insert(
            "limits".into(),
            json!({ "max_concurrent_requests": negotiated.max_concurrent }),
        );
        if !negotiated.lifecycle.is_empty() {
            protocol.insert("lifecycle_events".into(), json!(negotiated.lifecycle));
        }
        result.insert("protocol".into(), Value::Object(protocol));
    }
    Ok(Value::Object(result))
}

/// A tool definition for the wire; `prompt_metadata` when
/// `tool_prompt_metadata_v1` was negotiated.
pub(crate) fn tool_json(
    api: ApiVersion,
    tool: &ToolDefinition,
    prompt_metadata: bool,
) -> Result<Value, String> {
    let parameters = crate::protocol::guest_json::parse(
        &tool.parameters,
        &format!("the parameter schema of tool {}", tool.name),
    )?;
    let mut object = Map::new();
    object.insert("name".into(), json!(tool.name));
    object.insert("description".into(), json!(tool.description));
    object.insert("parameters".into(), parameters);
    if api.negotiates()
        && let Some(schema) = &tool.output_schema
    {
        let schema = crate::protocol::guest_json::parse(
            schema,
            &format!("the output_schema of tool {}", tool.name),
        )?;
        object.insert("output_schema".into(), schema);
    }
    crate::protocol::imports::tools_catalog::prompt::insert(&mut object, tool, prompt_metadata);
    Ok(Value::Object(object))
}

#[cfg(test)]
#[path = "initialize_tests.rs"]
mod tests;
