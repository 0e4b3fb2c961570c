//! What octet's coding product offers a third-party API 0.4 process, and
//! the host's extra checks of a 0.4 `initialize` result (docs/api-0.4.md).
//!
//! API 0.4 is the 0.2 wire: [`super::handshake`] runs the shared checks and
//! calls these for what only 0.4 allows (a wider feature set, the
//! `resource_refs_v1` limit echo, the 0.4 tool keys and the coupling rules
//! between declared hooks and features).

use serde_json::{Map, Value, json};
use std::collections::BTreeSet;
use std::path::Path;

use super::offer_v02::HOST_OPTIONAL_FEATURES;

/// Offered to every third-party 0.4 process, after the base list.
pub const V0_4_ALWAYS: [&str; 5] = [
    "resource_refs_v1",
    "operation_descriptors_v1",
    "tool_prompt_metadata_v1",
    "autocomplete_edit_v1",
    "tool_composition_v1",
];

/// The provider pipeline hooks (`pipeline_hooks_v1`).
pub const PIPELINE_HOOKS: [&str; 3] = [
    "before_provider_request",
    "before_provider_headers",
    "after_provider_response",
];

/// Hooks that need `session_entries` (the session-operation hooks and
/// `provider_context`).
pub const SESSION_ENTRY_HOOKS: [&str; 7] = [
    "provider_context",
    "model_turn_start",
    "model_turn_end",
    "session_before_compact",
    "session_compact",
    "session_before_tree",
    "session_tree",
];

/// Every hook name only a 0.4 manifest may declare.
pub fn is_v0_4_hook(hook: &str) -> bool {
    matches!(
        hook,
        "cache_warming_decision" | "compaction_strategy" | "resources_discover"
    ) || PIPELINE_HOOKS.contains(&hook)
        || SESSION_ENTRY_HOOKS.contains(&hook)
}

/// Every feature name octet knows only on API 0.4.
pub const V0_4_ONLY_FEATURES: [&str; 21] = [
    "resource_refs_v1",
    "operation_descriptors_v1",
    "tool_prompt_metadata_v1",
    "autocomplete_edit_v1",
    "compaction_strategy",
    "cache_warming_decision",
    "input_transform_v1",
    "before_prompt_state_v1",
    "pipeline_hooks_v1",
    "session_control_v1",
    "session_compaction_v1",
    "process_exec_v1",
    "mcp_registration_v1",
    "resource_paths_v1",
    "bulk_objects_v1",
    "tool_composition_v1",
    "remote_ui",
    "agent_session_events_v1",
    "agent_session_lifetime_v1",
    "provider_proxy_v1",
    "builtin_tool_overrides_v1",
];

/// The optional features for a 0.4 manifest declaring `hooks`: the base
/// list, the always-offered 0.4 additions, bulk objects when the host has
/// bulk storage, and the conditional features the declared hooks unlock
/// (`resource_paths_v1` is never offered: the simulated host is not the
/// interactive App).
pub fn optional_features(hooks: &[String], bulk_storage: bool) -> Vec<String> {
    let declares = |name: &str| hooks.iter().any(|h| h == name);
    let mut features: Vec<String> = HOST_OPTIONAL_FEATURES
        .iter()
        .chain(V0_4_ALWAYS.iter())
        .map(|f| (*f).to_owned())
        .collect();
    if bulk_storage {
        features.push("bulk_objects_v1".into());
    }
    if PIPELINE_HOOKS.iter().any(|h| declares(h)) {
        features.push("pipeline_hooks_v1".into());
    }
    for hook in ["compaction_strategy", "cache_warming_decision"] {
        if declares(hook) {
            features.push(hook.into());
        }
    }
    if declares("before_prompt") {
        features.push("input_transform_v1".into());
    }
    features
}

/// `protocol.limits.resource_refs_v1` as the host sends it; an answer may
/// only echo exactly this.
pub fn resource_refs_limits() -> Value {
    json!({"max_records": 256, "max_registrations_per_parent": 32})
}

/// `protocol.bulk_objects_v1` for a host with bulk storage beside
/// `workspace`.
pub fn bulk_objects(workspace: &Path) -> Value {
    let directory = workspace
        .parent()
        .unwrap_or(workspace)
        .join("bulk-transfer");
    json!({
        "profile": "local-file.v1",
        "transfer_directory": directory.to_string_lossy(),
        "limits": {
            "max_object_bytes": 256u64 << 20,
            "max_owner_bytes": 512u64 << 20,
            "max_write_tickets": 8,
            "max_read_leases": 32,
            "max_blobs_per_owner": 256,
        },
    })
}

/// The 0.4-only rules for `protocol.limits`: `resource_refs_v1`, when
/// present, must equal the offered defaults.
pub(super) fn check_limits(api_version: &str, limits: &Map<String, Value>) -> Result<(), String> {
    for key in limits.keys() {
        match key.as_str() {
            "max_concurrent_requests" => {}
            "resource_refs_v1" if api_version == "0.4" => {
                if limits[key] != resource_refs_limits() {
                    return Err("unsupported resource registry limits".into());
                }
            }
            "resource_refs_v1" => return Err("unsupported resource registry limits".into()),
            _ => return Err("protocol.limits has unknown keys".into()),
        }
    }
    Ok(())
}

/// The 0.4-only rules for the answered features: no 0.4 name on 0.2, and
/// every coupling rule between the manifest's hooks and the features.
pub(super) fn check_features(
    api_version: &str,
    features: &BTreeSet<String>,
    hooks: &[String],
) -> Result<(), String> {
    if api_version != "0.4" {
        if let Some(feature) = features
            .iter()
            .find(|f| V0_4_ONLY_FEATURES.contains(&f.as_str()))
        {
            return Err(format!("feature `{feature}` exists only on API 0.4"));
        }
        if let Some(hook) = hooks.iter().find(|h| is_v0_4_hook(h)) {
            return Err(format!("hook `{hook}` exists only on API 0.4"));
        }
        return Ok(());
    }
    let has = |f: &str| features.contains(f);
    let declares = |h: &str| hooks.iter().any(|x| x == h);
    for hook in ["compaction_strategy", "cache_warming_decision"] {
        if declares(hook) && !has(hook) {
            return Err(format!(
                "manifest declares `{hook}` but the feature is not selected"
            ));
        }
    }
    if declares("resources_discover") && !has("resource_paths_v1") {
        return Err("`resources_discover` requires `resource_paths_v1`".into());
    }
    if let Some(hook) = PIPELINE_HOOKS.iter().find(|h| declares(h))
        && !has("pipeline_hooks_v1")
    {
        return Err(format!(
            "pipeline hook `{hook}` requires `pipeline_hooks_v1`"
        ));
    }
    if let Some(hook) = SESSION_ENTRY_HOOKS.iter().find(|h| declares(h))
        && !has("session_entries")
    {
        return Err(format!("hook `{hook}` requires `session_entries`"));
    }
    for (feature, needs) in [
        ("autocomplete_edit_v1", "autocomplete"),
        ("session_compaction_v1", "session_control_v1"),
        ("agent_session_events_v1", "agent_sessions"),
        ("agent_session_lifetime_v1", "agent_sessions"),
    ] {
        if has(feature) && !has(needs) {
            return Err(format!("feature `{feature}` needs `{needs}`"));
        }
    }
    Ok(())
}

/// Most bytes of one prompt metadata string, and most guidelines.
pub const MAX_PROMPT_TEXT_BYTES: usize = 1024;
pub const MAX_PROMPT_GUIDELINES: usize = 16;

/// The tool keys a 0.4 result may add, each with the feature it needs.
const V0_4_TOOL_KEYS: [(&str, &str); 5] = [
    ("prompt_snippet", "tool_prompt_metadata_v1"),
    ("prompt_guidelines", "tool_prompt_metadata_v1"),
    ("operation", "operation_descriptors_v1"),
    ("composition", "tool_composition_v1"),
    ("constrained_sampling", ""),
];

/// Whether `key` is a tool key the 0.4 wire allows with `features`.
pub(super) fn tool_key_allowed(key: &str, features: &BTreeSet<String>) -> bool {
    V0_4_TOOL_KEYS
        .iter()
        .any(|(name, needs)| *name == key && (needs.is_empty() || features.contains(*needs)))
}

/// The 0.4 tool keys' values: prompt metadata within its bounds (LF and
/// TAB the only control characters), a composition block within its own.
pub(super) fn check_tool_values(name: &str, tool: &Map<String, Value>) -> Result<(), String> {
    let text_ok = |text: &str| {
        text.len() <= MAX_PROMPT_TEXT_BYTES
            && !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
    };
    if let Some(snippet) = tool.get("prompt_snippet")
        && !snippet.as_str().is_some_and(text_ok)
    {
        return Err(format!(
            "tool `{name}` prompt_snippet is not a string of at most 1,024 bytes without control characters other than LF and TAB"
        ));
    }
    if let Some(guidelines) = tool.get("prompt_guidelines") {
        let items = guidelines
            .as_array()
            .ok_or_else(|| format!("tool `{name}` prompt_guidelines is not an array"))?;
        if items.len() > MAX_PROMPT_GUIDELINES {
            return Err(format!(
                "tool `{name}` has {} prompt_guidelines (limit 16)",
                items.len()
            ));
        }
        if !items.iter().all(|g| g.as_str().is_some_and(text_ok)) {
            return Err(format!(
                "tool `{name}` has a prompt guideline that is not a string of at most 1,024 bytes without control characters other than LF and TAB"
            ));
        }
    }
    if let Some(composition) = tool.get("composition") {
        let block = composition
            .as_object()
            .ok_or_else(|| format!("tool `{name}` composition is not an object"))?;
        if block.keys().any(|k| k != "mode" && k != "inline_budget")
            || !matches!(
                block.get("mode").and_then(Value::as_str),
                Some("on" | "only")
            )
            || block
                .get("inline_budget")
                .is_some_and(|b| b.as_u64().is_none_or(|b| b > 16_000))
        {
            return Err(format!(
                "tool `{name}` composition is not {{mode: on|only, inline_budget?: 0..16000}}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn hooks_unlock_their_features() {
        let hooks = vec!["cache_warming_decision".to_owned(), "before_prompt".into()];
        let offer = optional_features(&hooks, false);
        assert!(offer.contains(&"cache_warming_decision".to_owned()));
        assert!(offer.contains(&"input_transform_v1".to_owned()));
        assert!(!offer.contains(&"pipeline_hooks_v1".to_owned()));
        assert!(!offer.contains(&"bulk_objects_v1".to_owned()));
        assert_eq!(offer.len(), 21 + 5 + 2);
    }

    #[test]
    fn coupling_rules() {
        let hooks = vec!["cache_warming_decision".to_owned()];
        assert!(check_features("0.4", &set(&[]), &hooks).is_err());
        assert!(check_features("0.4", &set(&["cache_warming_decision"]), &hooks).is_ok());
        assert!(check_features("0.2", &set(&["tool_prompt_metadata_v1"]), &[]).is_err());
        assert!(check_features("0.2", &set(&[]), &hooks).is_err());
        let pipeline = vec!["after_provider_response".to_owned()];
        assert!(check_features("0.4", &set(&[]), &pipeline).is_err());
        assert!(check_features("0.4", &set(&["autocomplete_edit_v1"]), &[]).is_err());
    }

    #[test]
    fn limits_echo_only_the_defaults() {
        let mut limits = Map::new();
        limits.insert("max_concurrent_requests".into(), json!(1));
        limits.insert("resource_refs_v1".into(), resource_refs_limits());
        assert!(check_limits("0.4", &limits).is_ok());
        assert!(check_limits("0.2", &limits).is_err());
        limits.insert("resource_refs_v1".into(), json!({"max_records": 1}));
        assert!(check_limits("0.4", &limits).is_err());
    }

    #[test]
    fn prompt_metadata_bounds() {
        let tool = |value: Value| value.as_object().cloned().unwrap();
        assert!(check_tool_values("t", &tool(json!({"prompt_snippet": "a\n\tb"}))).is_ok());
        assert!(check_tool_values("t", &tool(json!({"prompt_snippet": "a\rb"}))).is_err());
        let long = "x".repeat(1025);
        assert!(check_tool_values("t", &tool(json!({"prompt_snippet": long}))).is_err());
        let many: Vec<&str> = vec!["g"; 17];
        assert!(check_tool_values("t", &tool(json!({"prompt_guidelines": many}))).is_err());
        assert!(check_tool_values("t", &tool(json!({"prompt_guidelines": ["ok"]}))).is_ok());
    }
}
