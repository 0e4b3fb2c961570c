//! [`HookResult`]: a hook's verdict and what it adds to the turn.

use serde::Serialize;

use crate::bindings::octet::extension::types as wit;
use crate::error::{Error, Result};
use crate::tool_result::to_json;
use crate::values::{ContextItem, Notification};

pub use wit::{RescanDecision, RetryDecision};

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

    pub(crate) fn into_wit(self) -> Result<wit::HookResult> {
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
    fn deny_carries_its_reason() {
        let result = HookResult::deny("no").into_wit().unwrap();
        assert_eq!(result.disposition, wit::Disposition::Deny("no".into()));
    }
}
