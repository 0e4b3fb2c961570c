//! The protocol features the shim implements, by name. The host offers and
//! the guest declares features as strings, any string; once a name is one
//! of these, the shim's own checks (a service's gate, a negotiated
//! behaviour) compare the variant, so a misspelt feature is a compile
//! error rather than a gate that never opens.

use super::api_version::ApiVersion;

/// A feature the shim can negotiate (docs/protocol.md#negotiation,
/// docs/api-0.4.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    RequestCancellation,
    ContentParts,
    RequestProgress,
    ProgressDecoration,
    LifecycleEvents,
    Artifacts,
    DynamicTools,
    PolicyIntents,
    Approvals,
    Secrets,
    AgentSessions,
    AgentModelSelection,
    ToolPromptMetadata,
    CacheWarmingDecision,
    CompactionStrategy,
    PipelineHooks,
    ToolComposition,
}

/// Required features (every 0.2 and 0.4 offer has them).
pub const REQUIRED: &[Feature] = &[Feature::RequestCancellation, Feature::ContentParts];

/// Optional features on API 0.2 and 0.4. A guest that declares any other
/// feature simply does not get it (it is logged), so the shim never
/// negotiates a feature whose host traffic it cannot handle.
pub const OPTIONAL: &[Feature] = &[
    Feature::RequestProgress,
    Feature::ProgressDecoration,
    Feature::LifecycleEvents,
    Feature::Artifacts,
    Feature::DynamicTools,
    Feature::PolicyIntents,
    Feature::Approvals,
    Feature::Secrets,
    Feature::AgentSessions,
    Feature::AgentModelSelection,
];

/// Optional features only an API 0.4 process may negotiate.
pub const OPTIONAL_V0_4: &[Feature] = &[
    Feature::ToolPromptMetadata,
    Feature::CacheWarmingDecision,
    Feature::CompactionStrategy,
    Feature::PipelineHooks,
    Feature::ToolComposition,
];

impl Feature {
    /// The name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Feature::RequestCancellation => "request_cancellation",
            Feature::ContentParts => "content_parts",
            Feature::RequestProgress => "request_progress",
            Feature::ProgressDecoration => "progress_decoration",
            Feature::LifecycleEvents => "lifecycle_events",
            Feature::Artifacts => "artifacts",
            Feature::DynamicTools => "dynamic_tools",
            Feature::PolicyIntents => "policy_intents",
            Feature::Approvals => "approvals",
            Feature::Secrets => "secrets",
            Feature::AgentSessions => "agent_sessions",
            Feature::AgentModelSelection => "agent_model_selection_v1",
            Feature::ToolPromptMetadata => "tool_prompt_metadata_v1",
            Feature::CacheWarmingDecision => "cache_warming_decision",
            Feature::CompactionStrategy => "compaction_strategy",
            Feature::PipelineHooks => "pipeline_hooks_v1",
            Feature::ToolComposition => "tool_composition_v1",
        }
    }

    /// The feature a wire name names, if the shim implements it.
    pub fn parse(name: &str) -> Option<Feature> {
        REQUIRED
            .iter()
            .chain(OPTIONAL)
            .chain(OPTIONAL_V0_4)
            .copied()
            .find(|feature| feature.as_str() == name)
    }

    /// Whether the shim may negotiate this feature on `api`.
    pub fn allowed_on(self, api: ApiVersion) -> bool {
        api == ApiVersion::V0_4 || !OPTIONAL_V0_4.contains(&self)
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_feature_parses_back_from_its_name() {
        for feature in REQUIRED.iter().chain(OPTIONAL).chain(OPTIONAL_V0_4) {
            assert_eq!(Feature::parse(feature.as_str()), Some(*feature));
        }
        assert_eq!(Feature::parse("remote_ui"), None);
        assert_eq!(Feature::parse("Artifacts"), None);
    }

    #[test]
    fn the_0_4_features_are_only_allowed_on_0_4() {
        for feature in OPTIONAL_V0_4 {
            assert!(feature.allowed_on(ApiVersion::V0_4));
            assert!(!feature.allowed_on(ApiVersion::V0_2));
        }
        assert!(Feature::Artifacts.allowed_on(ApiVersion::V0_2));
    }
}
