//! Where a request comes from ([`Call`]) and what the instance learnt at
//! `init` (API version, negotiated features).

use std::cell::RefCell;
use std::sync::OnceLock;

use serde_json::Value;

use crate::bindings::octet::extension::types as wit;

pub use wit::ResourceOwner;

/// The context of the host request a handler is serving.
///
/// Host imports (notifications, progress, cancellation...) always act for
/// this request, so handlers never pass ids around; `Call` is for reading
/// where the request comes from, e.g. to key per-session state by
/// [`Call::resource_owner`].
#[derive(Debug, Clone)]
pub struct Call {
    request_id: u64,
    workspace: String,
    execution_scope: Option<String>,
    resource_owner: Option<ResourceOwner>,
    /// The host's JSON text, parsed on the first [`Call::host`]: most
    /// handlers never read it, and parsing it on every call was a
    /// measurable part of a call's cost.
    host_text: String,
    host: OnceLock<Value>,
}

impl Call {
    /// The host's JSON-RPC id of the request being served.
    pub fn request_id(&self) -> u64 {
        self.request_id
    }

    /// The active workspace root as the host names it (a host path; inside
    /// the sandbox see [`guest_workspace`]).
    pub fn workspace(&self) -> &str {
        &self.workspace
    }

    /// The host's tool-execution scope id, when it sent one.
    pub fn execution_scope(&self) -> Option<&str> {
        self.execution_scope.as_deref()
    }

    /// The host-derived owner of session-scoped work (API 0.2; absent on
    /// API 0.1 and for process-scoped work). Key per-session state by the
    /// whole owner: either fence changing means the state is stale.
    pub fn resource_owner(&self) -> Option<&ResourceOwner> {
        self.resource_owner.as_ref()
    }

    /// The host's session state (`session_id`, `model`, `active_skills`...)
    /// as JSON; `Value::Null` if the shim sent something unreadable.
    pub fn host(&self) -> &Value {
        self.host
            .get_or_init(|| serde_json::from_str(&self.host_text).unwrap_or(Value::Null))
    }

    pub(crate) fn from_wit(cx: wit::CallContext) -> Self {
        Self {
            request_id: cx.request_id,
            workspace: cx.workspace,
            execution_scope: cx.execution_scope,
            resource_owner: cx.resource_owner,
            host_text: cx.host,
            host: OnceLock::new(),
        }
    }

    /// A context for code that runs outside any request (lifecycle events,
    /// shutdown) and for unit tests of handlers.
    pub fn detached() -> Self {
        Self {
            request_id: 0,
            workspace: String::new(),
            execution_scope: None,
            resource_owner: None,
            host_text: String::new(),
            host: OnceLock::from(Value::Null),
        }
    }
}

/// What `init` told this instance.
struct InitState {
    api_version: String,
    features: Vec<String>,
    workspace: String,
    initialize: Value,
}

thread_local! {
    /// Set once by `init`, before the instance's first request. Wasm guests
    /// are single-threaded, so this is simply per-instance state.
    static INIT: RefCell<Option<InitState>> = const { RefCell::new(None) };
}

pub(crate) fn store_init(params: wit::InitParams) {
    let state = InitState {
        api_version: params.api_version,
        features: params.features,
        workspace: params.workspace,
        initialize: serde_json::from_str(&params.initialize).unwrap_or(Value::Null),
    };
    INIT.with(|init| *init.borrow_mut() = Some(state));
}

fn read_init<T>(read: impl FnOnce(&InitState) -> T, before_init: T) -> T {
    INIT.with(|init| init.borrow().as_ref().map_or(before_init, read))
}

/// The wire version the host speaks: `"0.1"` or `"0.2"`. Empty before `init`
/// (that is, inside the setup function, which runs for `describe`).
pub fn api_version() -> String {
    read_init(|init| init.api_version.clone(), String::new())
}

/// The negotiated protocol features (empty on API 0.1 and before `init`).
pub fn features() -> Vec<String> {
    read_init(|init| init.features.clone(), Vec::new())
}

/// Whether `feature` was negotiated, e.g. before offering progress that
/// would be refused on API 0.1.
pub fn has_feature(feature: &str) -> bool {
    read_init(|init| init.features.iter().any(|f| f == feature), false)
}

/// The workspace as this guest sees it in its own filesystem (`/workspace`
/// when the manifest grants it, otherwise the host path as text).
pub fn guest_workspace() -> String {
    read_init(|init| init.workspace.clone(), String::new())
}

/// The host's whole `initialize` params as JSON (`Value::Null` before
/// `init`), for the rare extension that needs more than the above.
pub fn initialize_params() -> Value {
    read_init(|init| init.initialize.clone(), Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(host: &str) -> wit::CallContext {
        wit::CallContext {
            request_id: 4,
            workspace: "/w".into(),
            execution_scope: None,
            resource_owner: None,
            host: host.into(),
        }
    }

    #[test]
    fn the_host_context_is_parsed_when_read() {
        let call = Call::from_wit(context(r#"{"session_id":"s","model":"m"}"#));
        assert_eq!(call.host()["session_id"], "s");
        assert_eq!(call.clone().host()["model"], "m");
        assert_eq!(Call::from_wit(context("not json")).host(), &Value::Null);
        assert_eq!(Call::detached().host(), &Value::Null);
        assert_eq!(call.request_id(), 4);
    }
}
