//! The guest's imports, served by the session: every gate (manifest,
//! negotiation, active parent) and bound is checked here, before a frame is
//! written, and a refusal reaches the guest as an error naming what is
//! missing. Nothing refused is ever written to the host. Reverse
//! notifications past their budget are dropped rather than refused
//! (`Session::notify_guest`).

use super::gate::{self, refused};
use crate::log::Level;
use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::protocol::results::encode;
use crate::runtime::Bridge;
use crate::runtime::types::*;
use crate::wire::error_code::ErrorCode;
use base64::Engine as _;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// Longest `input/request` prompt (docs/protocol.md#input-request; beyond is
/// fatal on the host).
pub const MAX_INPUT_PROMPT: usize = 16 * 1024;
/// Longest `input/request` answer the SDK accepts
/// (docs/protocol.md#input-request).
pub const MAX_INPUT_ANSWER: usize = 256 * 1024;

fn not_found(message: impl Into<String>) -> GuestError {
    refused(ErrorCode::MethodNotFound, message)
}

impl Session {
    /// A child request on behalf of `scope`'s request.
    async fn child(
        &self,
        scope: &RequestState,
        method: &str,
        params: Value,
    ) -> Result<Value, GuestError> {
        let text_ids = self.setup().is_some_and(|s| s.api.negotiates());
        self.child_requests
            .call(self.writer(), text_ids, method, params, &scope.cancel)
            .await
            .map_err(|error| gate::child_error(method, error))
    }

    /// The parent a child request runs under. On API 0.2 it must be a
    /// model tool call or a declared command (docs/protocol.md#active-parent).
    fn parent<'a>(
        &self,
        api: ApiVersion,
        scope: Option<&'a Arc<RequestState>>,
        what: &str,
    ) -> Result<Option<&'a Arc<RequestState>>, GuestError> {
        match (api, scope) {
            (ApiVersion::V0_1, scope) => Ok(scope),
            (_, Some(scope)) if scope.active_parent => Ok(Some(scope)),
            (_, _) => Err(refused(
                ErrorCode::InvalidParams,
                format!("{what} is only available while serving a tool call or a command"),
            )),
        }
    }
}

impl Bridge for Session {
    type Scope = Arc<RequestState>;

    fn log(&self, level: LogLevel, message: String, fields: Option<String>) {
        let level = match level {
            LogLevel::Debug => Level::Debug,
            LogLevel::Info => Level::Info,
            LogLevel::Warning => Level::Warning,
            LogLevel::Error => Level::Error,
        };
        let mut record = Map::new();
        match fields
            .as_deref()
            .map(|text| crate::protocol::guest_json::parse(text, "log fields"))
        {
            Some(Ok(Value::Object(map))) => record = map,
            Some(Ok(other)) => {
                record.insert("fields".into(), other);
            }
            Some(Err(error)) => {
                record.insert("fields".into(), json!(fields));
                record.insert("fields_error".into(), json!(error.to_string()));
            }
            None => {}
        }
        record.insert("source".into(), json!("guest"));
        crate::log::guest(level, &message, Value::Object(record));
    }

    async fn notify(
        &self,
        scope: Option<Self::Scope>,
        notification: Notification,
    ) -> Result<(), GuestError> {
        let setup = gate::ready(self, "notify")?;
        if !setup.contributes.notifications {
            return Err(not_found(
                "notifications are not declared: add `notifications = true` under [contributes] in extension.toml",
            ));
        }
        let params = encode::notification(&notification);
        self.notify_guest("notification", &params, scope.as_ref())
            .await
    }

    async fn confirm(
        &self,
        scope: Option<Self::Scope>,
        request: Confirmation,
    ) -> Result<bool, GuestError> {
        let setup = gate::ready(self, "confirm")?;
        if !setup.contributes.confirmations {
            return Err(not_found(
                "confirmations are not declared: add `confirmations = true` under [contributes] in extension.toml",
            ));
        }
        let parent = self.parent(setup.api, scope.as_ref(), "confirm")?;
        let mut params = Map::new();
        if let (true, Some(parent)) = (setup.api.negotiates(), parent) {
            params.insert("parent_request_id".into(), json!(parent.id));
        }
        params.insert("prompt".into(), json!(request.prompt));
        if let Some(detail) = request.detail {
            params.insert("detail".into(), json!(detail));
        }
        params.insert("destructive".into(), json!(request.destructive));
        params.insert("default".into(), json!(request.default));
        let cancel_scope;
        let scope_ref = match parent {
            Some(parent) => parent.as_ref(),
            None => {
                cancel_scope = detached_scope();
                &cancel_scope
            }
        };
        let reply = self
            .child(scope_ref, "confirmation/request", Value::Object(params))
            .await?;
        reply
            .get("confirmed")
            .and_then(Value::as_bool)
            .ok_or_else(|| GuestError::Failed("invalid confirmation response".into()))
    }

    async fn request_input(
        &self,
        scope: Option<Self::Scope>,
        prompt: String,
        secret: bool,
    ) -> Result<Option<String>, GuestError> {
        let setup = gate::ready(self, "request-input")?;
        if setup.api == ApiVersion::V0_1 {
            return Err(not_found("input/request is not available on API 0.1"));
        }
        if prompt.trim().is_empty() {
            return Err(GuestError::InvalidParams(
                "the input prompt must not be blank".into(),
            ));
        }
        if prompt.len() > MAX_INPUT_PROMPT {
            return Err(GuestError::InvalidParams(format!(
                "the input prompt is {} bytes; the limit is {MAX_INPUT_PROMPT}",
                prompt.len()
            )));
        }
        let Some(parent) = self.parent(setup.api, scope.as_ref(), "request-input")? else {
            return Err(refused(
                ErrorCode::InvalidParams,
                "request-input needs an active request",
            ));
        };
        let params = json!({ "parent_request_id": parent.id, "prompt": prompt, "secret": secret });
        let reply = self.child(parent, "input/request", params).await?;
        let invalid = || GuestError::Failed("invalid input response".into());
        let Value::Object(map) = reply else {
            return Err(invalid());
        };
        if map.len() != 1 {
            return Err(invalid());
        }
        match map.get("value") {
            Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.len() > MAX_INPUT_ANSWER => Err(GuestError::Failed(
                "input response exceeds the 256 KiB bound".into(),
            )),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            _ => Err(invalid()),
        }
    }

    async fn progress(
        &self,
        scope: Option<Self::Scope>,
        event: ProgressEvent,
    ) -> Result<(), GuestError> {
        let setup = gate::ready(self, "progress")?;
        if !setup.has(crate::protocol::handshake::feature::Feature::RequestProgress) {
            return Err(not_found(
                "progress needs API 0.2 or 0.4 with the negotiated `request_progress` feature (the host must offer it; declare it in the extension's setup: Rust `ext.uses_progress()`, JavaScript `ext.usesProgress()`, C `octet_uses_progress(ext)`, Python: keep \"request_progress\" in `Extension(supported_features=...)`)",
            ));
        }
        let Some(request) = scope else {
            return Err(refused(
                ErrorCode::InvalidParams,
                "progress is only available while serving a request",
            ));
        };
        let event = match event {
            ProgressEvent::Status(status) => {
                let mut object = Map::new();
                object.insert("type".into(), json!("status"));
                object.insert("message".into(), json!(status.message));
                if let Some(current) = status.current {
                    object.insert("current".into(), json!(current));
                }
                if let Some(total) = status.total {
                    object.insert("total".into(), json!(total));
                }
                if let Some(unit) = status.unit {
                    object.insert("unit".into(), json!(unit));
                }
                Value::Object(object)
            }
            ProgressEvent::Output(output) => {
                let stream = match output.stream {
                    OutputStream::Stdout => "stdout",
                    OutputStream::Stderr => "stderr",
                };
                match String::from_utf8(output.data) {
                    Ok(text) => {
                        json!({ "type": "output", "stream": stream, "encoding": "utf8", "data": text })
                    }
                    Err(err) => json!({
                        "type": "output", "stream": stream, "encoding": "base64",
                        "data": base64::engine::general_purpose::STANDARD.encode(err.into_bytes()),
                    }),
                }
            }
            ProgressEvent::Decoration(decoration) => {
                if !setup.has(crate::protocol::handshake::feature::Feature::ProgressDecoration) {
                    return Err(not_found(
                        "decorations need the negotiated `progress_decoration` feature (the host must offer it; declare it in the extension's setup: Rust `ext.uses_progress_decoration()`, JavaScript `ext.usesProgressDecoration()`, C `octet_uses_progress_decoration(ext)`, Python: keep \"progress_decoration\" in `Extension(supported_features=...)`)",
                    ));
                }
                check_decoration_text("label", &decoration.label, 256)?;
                let mut object = Map::new();
                object.insert("type".into(), json!("decoration"));
                object.insert("label".into(), json!(decoration.label));
                if let Some(detail) = decoration.detail {
                    check_decoration_text("detail", &detail, 4096)?;
                    object.insert("detail".into(), json!(detail));
                }
                Value::Object(object)
            }
        };
        // Held while queueing: the answer cannot overtake this frame.
        let settled = request.settled.lock().await;
        if *settled {
            return Err(if request.cancel.is_cancelled() {
                GuestError::Cancelled
            } else {
                refused(ErrorCode::ServerError, "request has already settled")
            });
        }
        // A dropped event leaves a gap in the sequence, which octet allows
        // (strictly increasing is the rule).
        let params = json!({ "request_id": request.id, "sequence": request.next_sequence(), "event": event });
        let sent = self
            .notify_guest("$/progress", &params, Some(&request))
            .await;
        drop(settled);
        sent
    }

    async fn contribute_context(&self, item: ContextItem) -> Result<(), GuestError> {
        let setup = gate::ready(self, "contribute-context")?;
        if !setup.contributes.context {
            return Err(not_found(
                "context is not declared: add `context = true` under [contributes] in extension.toml",
            ));
        }
        self.notify_guest("context/contribution", &encode::context_item(&item), None)
            .await
    }

    async fn contribute_status(&self, item: StatusItem) -> Result<(), GuestError> {
        let setup = gate::ready(self, "contribute-status")?;
        if !setup.contributes.declares_surface(&item.surface) {
            return Err(not_found(format!(
                "status surface {:?} is not declared: add it to `ui` under [contributes] in extension.toml",
                item.surface
            )));
        }
        self.notify_guest("status/contribution", &encode::status_item(&item), None)
            .await
    }

    async fn publish_artifact(
        &self,
        scope: Option<Self::Scope>,
        mime_type: String,
        data: Vec<u8>,
    ) -> Result<String, GuestError> {
        super::artifacts::publish(self, scope, mime_type, data).await
    }

    async fn register_tools(
        &self,
        tools: Vec<ToolDefinition>,
    ) -> Result<CatalogUpdate, GuestError> {
        super::tools_catalog::register(self, tools).await
    }

    async fn unregister_tools(&self, names: Vec<String>) -> Result<CatalogUpdate, GuestError> {
        super::tools_catalog::unregister(self, names).await
    }

    async fn get_secret(
        &self,
        scope: Option<Self::Scope>,
        name: String,
    ) -> Result<String, GuestError> {
        super::secrets::get(self, scope, name).await
    }

    async fn evaluate_policy(
        &self,
        scope: Option<Self::Scope>,
        intent: Intent,
        approval_token: Option<String>,
    ) -> Result<Verdict, GuestError> {
        super::policy::evaluate(self, scope, intent, approval_token).await
    }

    async fn update_presentation(
        &self,
        scope: Option<Self::Scope>,
        snapshot: String,
        owner: Option<ResourceOwner>,
    ) -> Result<(), GuestError> {
        super::presentation::update(self, scope, snapshot, owner).await
    }

    async fn spawn_agent(
        &self,
        scope: Option<Self::Scope>,
        request: SpawnRequest,
    ) -> Result<Spawned, GuestError> {
        super::agents::spawn(self, scope, request).await
    }

    async fn steer_agent(
        &self,
        scope: Option<Self::Scope>,
        target: String,
        message: String,
    ) -> Result<Steered, GuestError> {
        super::agents::steer(self, scope, target, message).await
    }

    async fn follow_up_agent(
        &self,
        scope: Option<Self::Scope>,
        target: String,
        message: String,
    ) -> Result<FollowedUp, GuestError> {
        super::agents::follow_up(self, scope, target, message).await
    }

    async fn list_agents(&self, scope: Option<Self::Scope>) -> Result<AgentSnapshot, GuestError> {
        super::agents::list(self, scope).await
    }

    async fn wait_agents(
        &self,
        scope: Option<Self::Scope>,
        timeout_ms: Option<u32>,
    ) -> Result<Waited, GuestError> {
        super::agents::wait(self, scope, timeout_ms).await
    }

    async fn interrupt_agent(
        &self,
        scope: Option<Self::Scope>,
        target: String,
    ) -> Result<Interrupted, GuestError> {
        super::agents::interrupt(self, scope, target).await
    }

    async fn list_agent_models(
        &self,
        scope: Option<Self::Scope>,
        query: Option<String>,
        limit: Option<u32>,
    ) -> Result<ModelList, GuestError> {
        super::agents::list_models(self, scope, query, limit).await
    }

    async fn composition_context(
        &self,
        scope: Option<Self::Scope>,
    ) -> Result<crate::runtime::types::CompositionContext, GuestError> {
        super::composition::context(self, scope).await
    }

    async fn composition_call(
        &self,
        scope: Option<Self::Scope>,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> Result<String, GuestError> {
        super::composition::call(self, scope, name, arguments, full_outcome).await
    }

    async fn composition_start(
        self: Arc<Self>,
        scope: Option<Self::Scope>,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> Result<crate::runtime::pending::PendingCall, GuestError> {
        super::composition::updates::start_call(self, scope, name, arguments, full_outcome).await
    }

    async fn composition_store(
        &self,
        scope: Option<Self::Scope>,
        set: Vec<(String, String)>,
        delete: Vec<String>,
    ) -> Result<(), GuestError> {
        super::composition::store(self, scope, set, delete).await
    }

    fn current_catalog(&self) -> CatalogUpdate {
        super::tools_catalog::current(self)
    }
}

fn check_decoration_text(what: &str, text: &str, max: usize) -> Result<(), GuestError> {
    if text.is_empty() || text.len() > max {
        return Err(GuestError::InvalidParams(format!(
            "decoration {what} must be 1 to {max} bytes, got {}",
            text.len()
        )));
    }
    if text.chars().any(char::is_control) {
        return Err(GuestError::InvalidParams(format!(
            "decoration {what} contains a control character"
        )));
    }
    Ok(())
}

/// A scope for child requests made outside any request (API 0.1 guests
/// may confirm from anywhere); it is never cancelled.
fn detached_scope() -> RequestState {
    RequestState::detached()
}
