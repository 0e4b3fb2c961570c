//! Typed payloads of the API 0.4 hooks, to take in a hook handler:
//! `ext.hook("cache_warming_decision", |request: CacheWarmingRequest| ...)`.
//!
//! octet documents these payloads only in part, so every field has a
//! default: a payload with a member missing still reaches the handler, and
//! unknown members are ignored. Answer with the matching [`HookResult`]
//! extra ([`HookResult::cache_warming`], [`HookResult::compaction_frame`],
//! [`HookResult::provider_payload`], [`HookResult::set_header`]...).
//!
//! [`HookResult`]: crate::HookResult
//! [`HookResult::cache_warming`]: crate::HookResult::cache_warming
//! [`HookResult::compaction_frame`]: crate::HookResult::compaction_frame
//! [`HookResult::provider_payload`]: crate::HookResult::provider_payload
//! [`HookResult::set_header`]: crate::HookResult::set_header

use serde::Deserialize;
use serde_json::{Map, Value};

/// `cache_warming_decision`: whether to keep the provider's prompt cache
/// warm. The host waits about 200 ms; answer from what the payload says.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CacheWarmingRequest {
    /// The host's own estimate and decision.
    pub decision: CacheWarmingDecision,
    /// The model concerned, as the host describes it.
    pub model: Value,
}

/// The economics of one cache-warming decision.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CacheWarmingDecision {
    /// `streaming` or `idle`.
    pub phase: String,
    /// What warming would cost, in millionths of a dollar.
    pub warm_cost_microdollars: u64,
    /// What a cache miss would cost.
    pub miss_cost_microdollars: u64,
    /// How likely the conversation continues (0..1).
    pub continuation_probability: f64,
    /// Expected savings of warming (negative: warming loses money).
    pub expected_savings_microdollars: i64,
    /// Whether the figures above are real estimates.
    pub economics_available: bool,
    /// The host's current decision: `warm` or `stop`.
    pub action: String,
}

/// `compaction_strategy`: the text the host is about to compact for a
/// vision model.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct CompactionRequest {
    /// The vision model the compacted text is for.
    pub model_id: String,
    /// The text to compact.
    pub text: String,
}

/// The model of a provider pipeline hook.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProviderModel {
    /// The model's id.
    pub id: String,
    /// The provider serving it.
    pub provider: String,
    /// The provider API the request speaks.
    pub api: String,
}

/// `before_provider_request`: the payload about to go to the provider.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProviderRequest {
    /// The host's id of this provider operation.
    pub operation_id: String,
    /// The model the request goes to.
    pub model: ProviderModel,
    /// The provider payload (the provider API's own JSON).
    pub payload: Value,
}

/// `before_provider_headers`: the request headers about to be sent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProviderHeaders {
    /// The host's id of this provider operation.
    pub operation_id: String,
    /// The model the request goes to.
    pub model: ProviderModel,
    /// Header names and their values (a string or a list of strings).
    pub headers: Map<String, Value>,
}

/// `after_provider_response`: the provider's answer status and headers
/// (observation only).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ProviderResponse {
    /// The host's id of this provider operation.
    pub operation_id: String,
    /// The model that answered.
    pub model: ProviderModel,
    /// The HTTP status of the answer.
    pub status: u16,
    /// The answer's headers.
    pub headers: Map<String, Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_payloads_still_decode() {
        let request: CacheWarmingRequest = serde_json::from_str(
            r#"{"decision":{"phase":"idle","warm_cost_microdollars":6000,"expected_savings_microdollars":-3,"extra":1}}"#,
        )
        .unwrap();
        assert_eq!(request.decision.warm_cost_microdollars, 6000);
        assert_eq!(request.decision.expected_savings_microdollars, -3);
        assert!(request.model.is_null());
        let headers: ProviderHeaders =
            serde_json::from_str(r#"{"model":{"id":"m"},"headers":{"a":"b"}}"#).unwrap();
        assert_eq!(headers.model.id, "m");
        assert_eq!(headers.headers["a"], "b");
    }
}
