//! The one way a guest reaches the host: the [`Bridge`] trait the protocol
//! layer implements. Every import the runtime links calls one of its
//! methods; a service a bridge does not serve refuses with the same error.

use super::pending;
use super::types;
use std::future::Future;
use std::sync::Arc;

/// What a guest may ask of the host, implemented by the protocol layer.
///
/// Every call names the scope of the request the instance is serving
/// (`None` outside a request: `init`, lifecycle, shutdown), so the
/// implementation can attribute, gate and bound it.
pub trait Bridge: Send + Sync + 'static {
    /// Per-request data the protocol layer attaches to a guest call.
    type Scope: Clone + Send + Sync + 'static;

    fn log(&self, level: types::LogLevel, message: String, fields: Option<String>);

    fn notify(
        &self,
        scope: Option<Self::Scope>,
        notification: types::Notification,
    ) -> impl Future<Output = Result<(), types::GuestError>> + Send;

    fn confirm(
        &self,
        scope: Option<Self::Scope>,
        request: types::Confirmation,
    ) -> impl Future<Output = Result<bool, types::GuestError>> + Send;

    fn request_input(
        &self,
        scope: Option<Self::Scope>,
        prompt: String,
        secret: bool,
    ) -> impl Future<Output = Result<Option<String>, types::GuestError>> + Send;

    fn progress(
        &self,
        scope: Option<Self::Scope>,
        event: types::ProgressEvent,
    ) -> impl Future<Output = Result<(), types::GuestError>> + Send;

    fn contribute_context(
        &self,
        item: types::ContextItem,
    ) -> impl Future<Output = Result<(), types::GuestError>> + Send;

    fn contribute_status(
        &self,
        item: types::StatusItem,
    ) -> impl Future<Output = Result<(), types::GuestError>> + Send;

    /// `artifacts.publish`: the artifact id.
    fn publish_artifact(
        &self,
        scope: Option<Self::Scope>,
        mime_type: String,
        data: Vec<u8>,
    ) -> impl Future<Output = Result<String, types::GuestError>> + Send {
        let _ = (scope, mime_type, data);
        async { Err(no_service("artifacts")) }
    }

    /// `tools-catalog.register`.
    fn register_tools(
        &self,
        tools: Vec<types::ToolDefinition>,
    ) -> impl Future<Output = Result<types::CatalogUpdate, types::GuestError>> + Send {
        let _ = tools;
        async { Err(no_service("tools-catalog")) }
    }

    /// `tools-catalog.unregister`.
    fn unregister_tools(
        &self,
        names: Vec<String>,
    ) -> impl Future<Output = Result<types::CatalogUpdate, types::GuestError>> + Send {
        let _ = names;
        async { Err(no_service("tools-catalog")) }
    }

    /// `secrets.get`.
    fn get_secret(
        &self,
        scope: Option<Self::Scope>,
        name: String,
    ) -> impl Future<Output = Result<String, types::GuestError>> + Send {
        let _ = (scope, name);
        async { Err(no_service("secrets")) }
    }

    /// `policy.evaluate`.
    fn evaluate_policy(
        &self,
        scope: Option<Self::Scope>,
        intent: types::Intent,
        approval_token: Option<String>,
    ) -> impl Future<Output = Result<types::Verdict, types::GuestError>> + Send {
        let _ = (scope, intent, approval_token);
        async { Err(no_service("policy")) }
    }

    /// `presentation.update`.
    fn update_presentation(
        &self,
        scope: Option<Self::Scope>,
        snapshot: String,
        owner: Option<types::ResourceOwner>,
    ) -> impl Future<Output = Result<(), types::GuestError>> + Send {
        let _ = (scope, snapshot, owner);
        async { Err(no_service("presentation")) }
    }

    /// `agents.spawn`.
    fn spawn_agent(
        &self,
        scope: Option<Self::Scope>,
        request: types::SpawnRequest,
    ) -> impl Future<Output = Result<types::Spawned, types::GuestError>> + Send {
        let _ = (scope, request);
        async { Err(no_service("agents")) }
    }

    /// `agents.send` (steering).
    fn steer_agent(
        &self,
        scope: Option<Self::Scope>,
        target: String,
        message: String,
    ) -> impl Future<Output = Result<types::Steered, types::GuestError>> + Send {
        let _ = (scope, target, message);
        async { Err(no_service("agents")) }
    }

    /// `agents.follow-up`.
    fn follow_up_agent(
        &self,
        scope: Option<Self::Scope>,
        target: String,
        message: String,
    ) -> impl Future<Output = Result<types::FollowedUp, types::GuestError>> + Send {
        let _ = (scope, target, message);
        async { Err(no_service("agents")) }
    }

    /// `agents.list-agents`.
    fn list_agents(
        &self,
        scope: Option<Self::Scope>,
    ) -> impl Future<Output = Result<types::AgentSnapshot, types::GuestError>> + Send {
        let _ = scope;
        async { Err(no_service("agents")) }
    }

    /// `agents.wait`.
    fn wait_agents(
        &self,
        scope: Option<Self::Scope>,
        timeout_ms: Option<u32>,
    ) -> impl Future<Output = Result<types::Waited, types::GuestError>> + Send {
        let _ = (scope, timeout_ms);
        async { Err(no_service("agents")) }
    }

    /// `agents.interrupt`.
    fn interrupt_agent(
        &self,
        scope: Option<Self::Scope>,
        target: String,
    ) -> impl Future<Output = Result<types::Interrupted, types::GuestError>> + Send {
        let _ = (scope, target);
        async { Err(no_service("agents")) }
    }

    /// `agents.list-models`.
    fn list_agent_models(
        &self,
        scope: Option<Self::Scope>,
        query: Option<String>,
        limit: Option<u32>,
    ) -> impl Future<Output = Result<types::ModelList, types::GuestError>> + Send {
        let _ = (scope, query, limit);
        async { Err(no_service("agents")) }
    }

    /// `composition.context` (API 0.4).
    fn composition_context(
        &self,
        scope: Option<Self::Scope>,
    ) -> impl Future<Output = Result<types::CompositionContext, types::GuestError>> + Send {
        let _ = scope;
        async { Err(no_service("composition")) }
    }

    /// `composition.call` (API 0.4): the value (or outcome) as JSON text.
    fn composition_call(
        &self,
        scope: Option<Self::Scope>,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> impl Future<Output = Result<String, types::GuestError>> + Send {
        let _ = (scope, name, arguments, full_outcome);
        async { Err(no_service("composition")) }
    }

    /// `composition.start-call` (API 0.4): the call with octet's partial
    /// results (`updates`), in flight when this returns.
    fn composition_start(
        self: Arc<Self>,
        scope: Option<Self::Scope>,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> impl Future<Output = Result<pending::PendingCall, types::GuestError>> + Send {
        let _ = (scope, name, arguments, full_outcome);
        async { Err(no_service("composition")) }
    }

    /// `composition.store` (API 0.4).
    fn composition_store(
        &self,
        scope: Option<Self::Scope>,
        set: Vec<(String, String)>,
        delete: Vec<String>,
    ) -> impl Future<Output = Result<(), types::GuestError>> + Send {
        let _ = (scope, set, delete);
        async { Err(no_service("composition")) }
    }

    /// `tools-catalog.current`.
    fn current_catalog(&self) -> types::CatalogUpdate {
        types::CatalogUpdate {
            revision: 0,
            tools: Vec::new(),
        }
    }
}

/// The refusal of a service this bridge does not serve.
fn no_service(what: &str) -> types::GuestError {
    types::GuestError::Rpc(types::GuestRpcError {
        code: types::SERVER_ERROR,
        message: format!("the {what} service is not available here"),
        data: None,
    })
}
