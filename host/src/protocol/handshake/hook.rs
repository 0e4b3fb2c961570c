//! The hooks the shim knows, by name. A manifest's `contributes.hooks`, the
//! host's `hook/run` and the guest's description carry hook names as
//! strings, any string; once a name is one of these, the shim's own rules
//! (which version has it, which feature it forces, which deadline and which
//! typed result it gets) compare the variant, so a misspelt hook is a
//! compile error rather than a rule that never applies. A name outside
//! this list is still served as a plain hook: whether it exists is the
//! host's call (it validated the manifest).

use super::api_version::ApiVersion;
use super::feature::Feature;

/// A hook of API 0.1, 0.2 or 0.4 (docs/protocol.md#hook-run,
/// docs/api-0.4.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hook {
    BeforePrompt,
    AfterResponse,
    BeforeToolCall,
    AfterToolCall,
    ProviderRetry,
    BeforePersistence,
    PostMutation,
    CacheWarmingDecision,
    CompactionStrategy,
    BeforeProviderRequest,
    BeforeProviderHeaders,
    AfterProviderResponse,
    ResourcesDiscover,
    ProviderContext,
    ModelTurnStart,
    ModelTurnEnd,
    SessionBeforeCompact,
    SessionCompact,
    SessionBeforeTree,
    SessionTree,
}

/// Hooks both 0.1 and later manifests may declare.
pub const V0_1: &[Hook] = &[
    Hook::BeforePrompt,
    Hook::AfterResponse,
    Hook::BeforeToolCall,
    Hook::AfterToolCall,
];

/// Hooks a 0.2 or 0.4 manifest may declare, but not a 0.1 one.
pub const V0_2: &[Hook] = &[
    Hook::ProviderRetry,
    Hook::BeforePersistence,
    Hook::PostMutation,
];

/// Hooks only a 0.4 manifest may declare. octet's manifest validation
/// refuses them on every earlier version.
pub const V0_4: &[Hook] = &[
    Hook::CacheWarmingDecision,
    Hook::CompactionStrategy,
    Hook::BeforeProviderRequest,
    Hook::BeforeProviderHeaders,
    Hook::AfterProviderResponse,
    Hook::ResourcesDiscover,
    Hook::ProviderContext,
    Hook::ModelTurnStart,
    Hook::ModelTurnEnd,
    Hook::SessionBeforeCompact,
    Hook::SessionCompact,
    Hook::SessionBeforeTree,
    Hook::SessionTree,
];

/// The provider pipeline hooks (`pipeline_hooks_v1`).
pub const PIPELINE: &[Hook] = &[
    Hook::BeforeProviderRequest,
    Hook::BeforeProviderHeaders,
    Hook::AfterProviderResponse,
];

impl Hook {
    /// The name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Hook::BeforePrompt => "before_prompt",
            Hook::AfterResponse => "after_response",
            Hook::BeforeToolCall => "before_tool_call",
            Hook::AfterToolCall => "after_tool_call",
            Hook::ProviderRetry => "provider_retry",
            Hook::BeforePersistence => "before_persistence",
            Hook::PostMutation => "post_mutation",
            Hook::CacheWarmingDecision => "cache_warming_decision",
            Hook::CompactionStrategy => "compaction_strategy",
            Hook::BeforeProviderRequest => "before_provider_request",
            Hook::BeforeProviderHeaders => "before_provider_headers",
            Hook::AfterProviderResponse => "after_provider_response",
            Hook::ResourcesDiscover => "resources_discover",
            Hook::ProviderContext => "provider_context",
            Hook::ModelTurnStart => "model_turn_start",
            Hook::ModelTurnEnd => "model_turn_end",
            Hook::SessionBeforeCompact => "session_before_compact",
            Hook::SessionCompact => "session_compact",
            Hook::SessionBeforeTree => "session_before_tree",
            Hook::SessionTree => "session_tree",
        }
    }

    /// The hook a wire name names, if any version has it.
    pub fn parse(name: &str) -> Option<Hook> {
        V0_1.iter()
            .chain(V0_2)
            .chain(V0_4)
            .copied()
            .find(|hook| hook.as_str() == name)
    }

    /// The earliest API version that has this hook.
    pub fn since(self) -> ApiVersion {
        if V0_1.contains(&self) {
            ApiVersion::V0_1
        } else if V0_2.contains(&self) {
            ApiVersion::V0_2
        } else {
            ApiVersion::V0_4
        }
    }

    /// The wire name of the feature a declared 0.4 hook needs negotiated
    /// (the host refuses an answer that declares the hook without it);
    /// `None` for the 0.1 and 0.2 hooks, which need none. A name, not a
    /// [`Feature`]: some of these features (`resource_paths_v1`,
    /// `session_entries`) are ones the shim does not implement, which
    /// `features::hook_features` turns into a refusal the user can act on.
    pub fn feature(self) -> Option<&'static str> {
        Some(match self {
            Hook::CacheWarmingDecision => Feature::CacheWarmingDecision.as_str(),
            Hook::CompactionStrategy => Feature::CompactionStrategy.as_str(),
            Hook::ResourcesDiscover => "resource_paths_v1",
            hook if PIPELINE.contains(&hook) => Feature::PipelineHooks.as_str(),
            hook if hook.since() == ApiVersion::V0_4 => "session_entries",
            _ => return None,
        })
    }
}

impl std::fmt::Display for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hook_parses_back_from_its_name() {
        let all: Vec<Hook> = V0_1.iter().chain(V0_2).chain(V0_4).copied().collect();
        assert_eq!(all.len(), 20);
        for hook in &all {
            assert_eq!(Hook::parse(hook.as_str()), Some(*hook));
            assert_eq!(hook.to_string(), hook.as_str());
        }
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "a hook is listed twice");
        assert_eq!(Hook::parse("on_boot"), None);
        assert_eq!(Hook::parse("Before_Prompt"), None);
        assert_eq!(Hook::parse(""), None);
    }

    #[test]
    fn each_hook_has_its_version() {
        assert_eq!(Hook::BeforeToolCall.since(), ApiVersion::V0_1);
        assert_eq!(Hook::PostMutation.since(), ApiVersion::V0_2);
        assert_eq!(Hook::SessionTree.since(), ApiVersion::V0_4);
        for hook in PIPELINE {
            assert_eq!(hook.since(), ApiVersion::V0_4);
        }
    }

    #[test]
    fn only_the_0_4_hooks_need_a_feature() {
        for hook in V0_1.iter().chain(V0_2) {
            assert_eq!(hook.feature(), None, "{hook}");
        }
        for hook in V0_4 {
            assert!(hook.feature().is_some(), "{hook}");
        }
        assert_eq!(
            Hook::CacheWarmingDecision.feature(),
            Some("cache_warming_decision")
        );
        assert_eq!(
            Hook::CompactionStrategy.feature(),
            Some("compaction_strategy")
        );
        assert_eq!(
            Hook::AfterProviderResponse.feature(),
            Some("pipeline_hooks_v1")
        );
        assert_eq!(Hook::ResourcesDiscover.feature(), Some("resource_paths_v1"));
        assert_eq!(Hook::ModelTurnStart.feature(), Some("session_entries"));
    }
}
