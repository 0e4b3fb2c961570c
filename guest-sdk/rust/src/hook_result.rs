//! [`HookResult`]: a hook's verdict and what it adds to the turn.

use serde::Serialize;

use crate::bindings::octet::extension::types as wit;
use crate::error::{Error, Result};
use crate::tool_result::to_json;
use crate::values::{ContextItem, Notification};

pub use wit::{CacheWarmingAction, RescanDecision, RetryDecision};

/// What a hook handler returns: continue or deny, plus context,
/// notifications and the typed extra of its own hook.
///
/// `HookResult::default()` is the protocol's default answer
/// (`{"disposition":{"action":"continue"},"context":[],"notifications":[]}`).
#[derive(Debug, Clone, Default)]
pub struct HookResult {
    deny: Option<String>,
    context: Vec<ContextItem>,
    notifications: Vec<Notification>,
    provider_retry: Option<RetryDecision>,
    persistence_metadata: Option<(Result<String, String>, bool)>,
    post_mutation: Option<RescanDecision>,
    cache_warming: Option<CacheWarmingAction>,
    compaction_frames: Vec<Vec<u8>>,
    provider_payload: Option<Result<String, String>>,
    provider_headers: Vec<wit::HeaderEdit>,
}

impl HookResult {
    /// Let the prompt or tool call go ahead (the default).
    pub fn proceed() -> Self {
        Self::default()
    }

    /// Block it with `reason`. Honoured only for `before_prompt` and
    /// `before_tool_call`; the host ignores it elsewhere.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self {
            deny: Some(reason.into()),
            ..Self::default()
        }
    }

    /// Adds context for the model.
    pub fn context(mut self, item: ContextItem) -> Self {
        self.context.push(item);
        self
    }

    /// Adds a notification for the user.
    pub fn notify(mut self, notification: Notification) -> Self {
        self.notifications.push(notification);
        self
    }

    /// `provider_retry` advice (sent only for that hook).
    pub fn provider_retry(mut self, decision: RetryDecision) -> Self {
        self.provider_retry = Some(decision);
        self
    }

    /// `before_persistence` metadata for the persisted entry (sent only for
    /// that hook); `public` lets other extensions read it.
    pub fn persistence_metadata(mut self, value: impl Serialize, public: bool) -> Self {
        self.persistence_metadata = Some((to_json(&value), public));
        self
    }

    /// `post_mutation` advice (sent only for that hook).
    pub fn post_mutation(mut self, decision: RescanDecision) -> Self {
        self.post_mutation = Some(decision);
        self
    }

    /// `cache_warming_decision` advice (API 0.4; sent only for that hook):
    /// keep the provider's prompt cache warm, or let it expire. Without it
    /// the hook gives no opinion and the host keeps its decision.
    pub fn cache_warming(mut self, action: CacheWarmingAction) -> Self {
        self.cache_warming = Some(action);
        self
    }

    /// Adds a PNG image of the text to compact (API 0.4,
    /// `compaction_strategy`; sent only for that hook, base64-encoded by the
    /// shim). At most 32 frames of 512 KiB each, and together they must fit
    /// in one 1 MiB protocol frame.
    pub fn compaction_frame(mut self, png: Vec<u8>) -> Self {
        self.compaction_frames.push(png);
        self
    }

    /// The provider payload to send instead of the one the hook received
    /// (API 0.4, `before_provider_request`; a JSON object or array of at most
    /// 768 KiB).
    pub fn provider_payload(mut self, payload: impl Serialize) -> Self {
        self.provider_payload = Some(to_json(&payload));
        self
    }

    /// Sets a provider request header (API 0.4, `before_provider_headers`).
    pub fn set_header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.set_header_values(name, [value.into()])
    }

    /// Sets a header to several values.
    pub fn set_header_values(
        mut self,
        name: impl Into<String>,
        values: impl IntoIterator<Item = String>,
    ) -> Self {
        self.provider_headers.push(wit::HeaderEdit {
            name: name.into(),
            values: Some(values.into_iter().collect()),
        });
        self
    }

    /// Removes a provider request header.
    pub fn remove_header(mut self, name: impl Into<String>) -> Self {
        self.provider_headers.push(wit::HeaderEdit {
            name: name.into(),
            values: None,
        });
        self
    }

    pub(crate) fn into_wit(self) -> Result<wit::HookResult> {
        let provider_payload = match self.provider_payload {
            None => None,
            Some(Ok(payload)) => Some(payload),
            Some(Err(message)) => {
                return Err(Error::failed(format!(
                    "the provider payload could not be serialised: {message}"
                )));
            }
        };
        let persistence_metadata = match self.persistence_metadata {
            None => None,
            Some((Ok(value), public)) => Some(wit::PersistenceMetadata { value, public }),
            Some((Err(message), _)) => {
                return Err(Error::failed(format!(
                    "persistence metadata could not be serialised: {message}"
                )));
            }
        };
        Ok(wit::HookResult {
            disposition: match self.deny {
                Some(reason) => wit::Disposition::Deny(reason),
                None => wit::Disposition::Continue,
            },
            context: self.context,
            notifications: self.notifications,
            provider_retry: self.provider_retry,
            persistence_metadata,
            post_mutation: self.post_mutation,
            cache_warming: self.cache_warming,
            compaction_frames: self.compaction_frames,
            provider_payload,
            provider_headers: self.provider_headers,
        })
    }
}

/// What a hook handler may return: a [`HookResult`], `()` (continue), an
/// `Option` of it (`None` = continue), or a `Result` of any of these.
pub trait IntoHookResult {
    /// Converts the handler's value into a result.
    fn into_hook_result(self) -> Result<HookResult>;
}

impl IntoHookResult for HookResult {
    fn into_hook_result(self) -> Result<HookResult> {
        Ok(self)
    }
}

impl IntoHookResult for () {
    fn into_hook_result(self) -> Result<HookResult> {
        Ok(HookResult::default())
    }
}

impl IntoHookResult for Option<HookResult> {
    fn into_hook_result(self) -> Result<HookResult> {
        Ok(self.unwrap_or_default())
    }
}

impl<T: IntoHookResult> IntoHookResult for Result<T> {
    fn into_hook_result(self) -> Result<HookResult> {
        self?.into_hook_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_continue_with_nothing_added() {
        let result = HookResult::default().into_wit().unwrap();
        assert_eq!(result.disposition, wit::Disposition::Continue);
        assert!(result.context.is_empty() && result.notifications.is_empty());
    }

    #[test]
    fn api_0_4_extras_reach_the_wit() {
        let result = HookResult::proceed()
            .cache_warming(CacheWarmingAction::Stop)
            .compaction_frame(vec![1, 2])
            .provider_payload(serde_json::json!({"model": "m"}))
            .set_header("x-a", "1")
            .remove_header("x-b")
            .into_wit()
            .unwrap();
        assert_eq!(result.cache_warming, Some(CacheWarmingAction::Stop));
        assert_eq!(result.compaction_frames, [vec![1, 2]]);
        assert_eq!(result.provider_payload.as_deref(), Some(r#"{"model":"m"}"#));
        assert_eq!(result.provider_headers.len(), 2);
        assert_eq!(result.provider_headers[1].values, None);
    }

    #[test]
    fn deny_carries_its_reason() {
        let result = HookResult::deny("no").into_wit().unwrap();
        assert_eq!(result.disposition, wit::Disposition::Deny("no".into()));
    }
}
