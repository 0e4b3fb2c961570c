//! Which protocol features and hooks each wire version allows, and the
//! coupling rules between them (docs/api-0.4.md).
//!
//! API 0.2 and 0.4 share one wire; 0.4 only widens what may be negotiated.
//! The host checks the answered features against a per-version allowed set
//! and kills the process for a name outside it, so the shim filters with the
//! same sets before it answers, and refuses a manifest it could only answer
//! wrongly.

use super::api_version::ApiVersion;
use super::feature::Feature;
use super::hook::Hook;
use crate::wire::message::RpcError;
use serde_json::json;

/// Every feature name the host knows only on API 0.4 (offered or not, and
/// whether or not the shim implements it): never answered on 0.2.
pub const V0_4_ONLY: &[&str] = &[
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

/// Whether the shim may negotiate `feature` on `api`.
pub fn supported(api: ApiVersion, feature: &str) -> bool {
    Feature::parse(feature).is_some_and(|feature| feature.allowed_on(api))
}

/// Feature pairs where the first is meaningless, and refused by the host,
/// without the second.
pub const COUPLED: &[(&str, &str)] = &[
    // Decorations travel inside `$/progress`.
    ("progress_decoration", "request_progress"),
    // Approval tokens ride on `policy/evaluate`.
    ("approvals", "policy_intents"),
    // Model selection and the 0.4 session additions ride on `agent/*`.
    ("agent_model_selection_v1", "agent_sessions"),
    ("agent_session_events_v1", "agent_sessions"),
    ("agent_session_lifetime_v1", "agent_sessions"),
    ("autocomplete_edit_v1", "autocomplete"),
    ("session_compaction_v1", "session_control_v1"),
];

/// Drops every feature whose prerequisite is missing, until none is left
/// (a chain of prerequisites falls as a whole).
pub fn apply_coupling(features: &mut Vec<String>) {
    loop {
        let before = features.len();
        let snapshot = features.clone();
        features.retain(|feature| {
            COUPLED
                .iter()
                .filter(|(dependent, _)| dependent == feature)
                .all(|(_, needs)| snapshot.iter().any(|f| f == needs))
        });
        if features.len() == before {
            return;
        }
    }
}

/// Checks the manifest's hooks against the wire version and the host's
/// offer, and returns the features they force: a 0.4 hook must select its
/// feature, so a hook whose feature the host did not offer, or the shim
/// does not implement, makes the handshake impossible and is refused here
/// with what the user can do about it.
pub fn hook_features(
    api: ApiVersion,
    hooks: &[String],
    offered: &[String],
) -> Result<Vec<&'static str>, RpcError> {
    let mut forced = Vec::new();
    for name in hooks {
        // Unknown names are the host's business (it validated the manifest).
        let Some(hook) = Hook::parse(name) else {
            continue;
        };
        match hook.since() {
            ApiVersion::V0_4 if api != ApiVersion::V0_4 => {
                return Err(RpcError::invalid_params(format!(
                    "initialize contributes.hooks names {hook}, which exists only on API 0.4; the manifest declares {}",
                    api.as_str()
                ))
                .with_data(json!({ "hook": hook.as_str(), "api_version": api.as_str() })));
            }
            ApiVersion::V0_2 | ApiVersion::V0_4 if api == ApiVersion::V0_1 => {
                return Err(RpcError::invalid_params(format!(
                    "initialize contributes.hooks names {hook}, which does not exist on API 0.1"
                ))
                .with_data(json!({ "hook": hook.as_str(), "api_version": api.as_str() })));
            }
            _ => {}
        }
        let Some(feature) = hook.feature() else {
            continue;
        };
        if !supported(api, feature) {
            return Err(RpcError::server(format!(
                "octet-wasm cannot serve hook {hook}: it needs protocol feature {feature}, which octet-wasm does not implement; remove {hook} from [contributes].hooks in extension.toml"
            ))
            .with_data(json!({ "hook": hook.as_str(), "feature": feature })));
        }
        if !offered.iter().any(|f| f == feature) {
            return Err(RpcError::server(format!(
                "hook {hook} needs protocol feature {feature}, which the host did not offer; this octet cannot run the hook: remove it from [contributes].hooks in extension.toml"
            ))
            .with_data(json!({ "hook": hook.as_str(), "feature": feature })));
        }
        if !forced.contains(&feature) {
            forced.push(feature);
        }
    }
    Ok(forced)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_0_4_additions_are_never_supported_on_0_2() {
        for feature in super::super::feature::OPTIONAL_V0_4 {
            let name = feature.as_str();
            assert!(supported(ApiVersion::V0_4, name), "{name}");
            assert!(!supported(ApiVersion::V0_2, name), "{name}");
            assert!(V0_4_ONLY.contains(&name), "{name}");
        }
        assert!(supported(ApiVersion::V0_2, "artifacts"));
        assert!(supported(ApiVersion::V0_4, "artifacts"));
    }

    #[test]
    fn coupling_drops_chains() {
        let mut features = names(&["approvals", "progress_decoration", "request_progress"]);
        apply_coupling(&mut features);
        assert_eq!(
            features,
            names(&["progress_decoration", "request_progress"])
        );
        let mut features = names(&["session_compaction_v1", "agent_session_events_v1"]);
        apply_coupling(&mut features);
        assert!(features.is_empty(), "{features:?}");
    }

    #[test]
    fn a_0_4_hook_forces_its_feature() {
        let offered = names(&["cache_warming_decision", "pipeline_hooks_v1"]);
        let hooks = names(&[
            "cache_warming_decision",
            "before_provider_request",
            "after_provider_response",
            "before_prompt",
        ]);
        assert_eq!(
            hook_features(ApiVersion::V0_4, &hooks, &offered).unwrap(),
            ["cache_warming_decision", "pipeline_hooks_v1"]
        );
    }

    #[test]
    fn hooks_out_of_their_version_or_offer_are_refused() {
        let hooks = names(&["cache_warming_decision"]);
        let offered = names(&["cache_warming_decision"]);
        let err = hook_features(ApiVersion::V0_2, &hooks, &offered).unwrap_err();
        assert_eq!(err.code, -32602);
        assert!(err.message.contains("only on API 0.4"), "{}", err.message);
        let err = hook_features(ApiVersion::V0_1, &names(&["provider_retry"]), &[]).unwrap_err();
        assert!(err.message.contains("API 0.1"), "{}", err.message);
        let err = hook_features(ApiVersion::V0_4, &hooks, &[]).unwrap_err();
        assert_eq!(err.code, -32000);
        assert!(err.message.contains("did not offer"), "{}", err.message);
        let err = hook_features(
            ApiVersion::V0_4,
            &names(&["model_turn_start"]),
            &names(&["session_entries"]),
        )
        .unwrap_err();
        assert!(
            err.message.contains("does not implement"),
            "{}",
            err.message
        );
        // Unknown names are the host's business (it validated the manifest).
        assert!(hook_features(ApiVersion::V0_2, &names(&["custom"]), &[]).is_ok());
    }
}
