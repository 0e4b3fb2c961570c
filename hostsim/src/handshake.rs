//! The host's validation of a successful `initialize` result
//! (docs/protocol.md#host-validation, docs/protocol.md#definitions).
//! A result that fails it terminates the child, so the checker treats it as
//! fatal.

use super::offer_v02::REQUIRED_FEATURES;
use super::offer_v04;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

/// The six lifecycle methods (docs/protocol.md#lifecycle-subscription).
const LIFECYCLE_METHODS: [&str; 6] = [
    "session/started",
    "session/settled",
    "turn/started",
    "turn/settled",
    "tool/started",
    "tool/settled",
];
/// Catalog bounds (docs/protocol.md#definitions).
const MAX_TOOLS: usize = 256;
const MAX_COMMANDS: usize = 256;

/// Validates `result` against the `params` that asked for it and returns the
/// negotiated features (empty on API 0.1).
pub(crate) fn validate_initialize_result(
    params: &Value,
    result: &Value,
) -> Result<BTreeSet<String>, String> {
    let result = result
        .as_object()
        .ok_or("initialize result is not an object")?;
    let api_version = params["api_version"].as_str().unwrap_or("0.1");
    if result.get("api_version").and_then(Value::as_str) != Some(api_version) {
        return Err(format!("result api_version is not {api_version:?}"));
    }
    let features = match (api_version, result.get("protocol")) {
        ("0.1", None) => BTreeSet::new(),
        ("0.1", Some(_)) => return Err("API 0.1 result carries `protocol`".into()),
        (_, Some(protocol)) => validate_protocol(api_version, params, protocol)?,
        (_, None) => return Err(format!("API {api_version} result lacks `protocol`")),
    };
    let contributes = &params["contributes"];
    let tools = definitions(result, "tools")?;
    if tools.len() > MAX_TOOLS {
        return Err(format!("{} tools (limit 256)", tools.len()));
    }
    for tool in &tools {
        validate_tool(tool, api_version, &features)?;
    }
    if !features.contains("dynamic_tools") {
        same_names("tools", &tools, &contributes["tools"])?;
    }
    let commands = definitions(result, "commands")?;
    if commands.len() > MAX_COMMANDS {
        return Err(format!("{} commands (limit 256)", commands.len()));
    }
    for command in &commands {
        validate_command(command)?;
    }
    if !features.contains("runtime_commands") {
        same_names("commands", &commands, &contributes["commands"])?;
    }
    if let Some(shortcuts) = result.get("shortcuts") {
        let declared = contributes
            .get("shortcuts")
            .cloned()
            .unwrap_or(Value::Array(vec![]));
        if *shortcuts != declared {
            return Err("shortcuts differ from the manifest".into());
        }
    }
    if let Some(renderers) = result.get("tool_renderers")
        && !features.contains("dynamic_tool_renderers")
        && renderers.as_array().is_none_or(|list| !list.is_empty())
        && *renderers != contributes["tool_renderers"]
    {
        return Err("tool_renderers differ from the manifest".into());
    }
    Ok(features)
}

fn validate_protocol(
    api_version: &str,
    params: &Value,
    protocol: &Value,
) -> Result<BTreeSet<String>, String> {
    let offer = &params["protocol"];
    let protocol = protocol.as_object().ok_or("protocol is not an object")?;
    if let Some(key) = protocol
        .keys()
        .find(|key| !["version", "features", "limits", "lifecycle_events"].contains(&key.as_str()))
    {
        return Err(format!("protocol has unknown key `{key}`"));
    }
    if protocol.get("version").and_then(Value::as_str) != Some(api_version) {
        return Err(format!("protocol.version is not {api_version:?}"));
    }
    let listed = string_list(protocol.get("features"), "protocol.features")?;
    let features: BTreeSet<String> = listed.iter().cloned().collect();
    if features.len() != listed.len() {
        return Err("protocol.features has duplicates".into());
    }
    let offered =
        string_list(offer.get("optional_features"), "offered features").unwrap_or_default();
    if let Some(extra) = features
        .iter()
        .find(|f| !REQUIRED_FEATURES.contains(&f.as_str()) && !offered.contains(f))
    {
        return Err(format!("feature `{extra}` was not offered"));
    }
    if let Some(missing) = REQUIRED_FEATURES.iter().find(|f| !features.contains(**f)) {
        return Err(format!("required feature `{missing}` missing"));
    }
    for (feature, needs) in [
        ("approvals", "policy_intents"),
        ("agent_model_selection_v1", "agent_sessions"),
    ] {
        if features.contains(feature) && !features.contains(needs) {
            return Err(format!("feature `{feature}` needs `{needs}`"));
        }
    }
    let limits = protocol
        .get("limits")
        .and_then(Value::as_object)
        .ok_or("protocol.limits is not an object")?;
    offer_v04::check_limits(api_version, limits)?;
    let hooks =
        string_list(params["contributes"].get("hooks"), "contributes.hooks").unwrap_or_default();
    offer_v04::check_features(api_version, &features, &hooks)?;
    if limits
        .get("max_concurrent_requests")
        .and_then(Value::as_u64)
        .is_none_or(|limit| limit == 0)
    {
        return Err("protocol.limits.max_concurrent_requests is not a positive integer".into());
    }
    if let Some(events) = protocol.get("lifecycle_events") {
        let events = string_list(Some(events), "protocol.lifecycle_events")?;
        if !events.is_empty() && !features.contains("lifecycle_events") {
            return Err("lifecycle_events listed without the feature".into());
        }
        if let Some(unknown) = events
            .iter()
            .find(|e| !LIFECYCLE_METHODS.contains(&e.as_str()))
        {
            return Err(format!("unknown lifecycle method `{unknown}`"));
        }
    }
    Ok(features)
}

fn string_list(value: Option<&Value>, what: &str) -> Result<Vec<String>, String> {
    value
        .and_then(Value::as_array)
        .and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| format!("{what} is not an array of non-empty strings"))
}

fn definitions<'a>(
    result: &'a Map<String, Value>,
    key: &str,
) -> Result<Vec<&'a Map<String, Value>>, String> {
    result
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("result `{key}` is not an array"))?
        .iter()
        .map(|item| {
            item.as_object()
                .ok_or_else(|| format!("a `{key}` entry is not an object"))
        })
        .collect()
}

/// `[A-Za-z_][A-Za-z0-9_.-]*`, 1–64 bytes (docs/protocol.md#definitions).
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() <= 64
        && bytes
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn validate_tool(
    tool: &Map<String, Value>,
    api_version: &str,
    features: &BTreeSet<String>,
) -> Result<(), String> {
    let allowed: &[&str] = if api_version == "0.1" {
        &["name", "description", "parameters"]
    } else {
        &["name", "description", "parameters", "output_schema"]
    };
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    let permitted = |key: &str| {
        allowed.contains(&key)
            || (api_version == "0.4" && offer_v04::tool_key_allowed(key, features))
    };
    if let Some(key) = tool.keys().find(|key| !permitted(key)) {
        return Err(format!(
            "tool `{name}` has key `{key}` not allowed on API {api_version} with the negotiated features"
        ));
    }
    offer_v04::check_tool_values(name, tool)?;
    if !is_identifier(name) {
        return Err(format!("tool name {name:?} is not an identifier"));
    }
    if tool
        .get("description")
        .and_then(Value::as_str)
        .is_none_or(|d| d.trim().is_empty())
    {
        return Err(format!("tool `{name}` has no description"));
    }
    if !tool.get("parameters").is_some_and(Value::is_object) {
        return Err(format!("tool `{name}` parameters are not an object"));
    }
    if tool
        .get("output_schema")
        .is_some_and(|schema| !schema.is_object() && !schema.is_null())
    {
        return Err(format!("tool `{name}` output_schema is not an object"));
    }
    Ok(())
}

fn validate_command(command: &Map<String, Value>) -> Result<(), String> {
    let name = command
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if let Some(key) = command
        .keys()
        .find(|key| !["name", "description", "usage"].contains(&key.as_str()))
    {
        return Err(format!("command `{name}` has unknown key `{key}`"));
    }
    if !is_identifier(name) {
        return Err(format!("command name {name:?} is not an identifier"));
    }
    if command
        .get("description")
        .and_then(Value::as_str)
        .is_none_or(|d| d.trim().is_empty())
    {
        return Err(format!("command `{name}` has no description"));
    }
    if command
        .get("usage")
        .is_some_and(|usage| !usage.is_string() && !usage.is_null())
    {
        return Err(format!("command `{name}` usage is not a string"));
    }
    Ok(())
}

/// The returned names must equal the manifest's set, both duplicate-free.
fn same_names(key: &str, returned: &[&Map<String, Value>], declared: &Value) -> Result<(), String> {
    let returned: Vec<&str> = returned
        .iter()
        .filter_map(|item| item.get("name").and_then(Value::as_str))
        .collect();
    let declared: Vec<&str> = declared
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let returned_set: BTreeSet<&str> = returned.iter().copied().collect();
    let declared_set: BTreeSet<&str> = declared.iter().copied().collect();
    if returned_set.len() != returned.len() {
        return Err(format!("result {key} contain duplicate names"));
    }
    if returned_set != declared_set {
        return Err(format!(
            "result {key} {returned_set:?} differ from manifest {declared_set:?}"
        ));
    }
    Ok(())
}
