//! Bindings for `octet:extension@0.4.0`, the newest WIT version, and the
//! host side of its imports.
//!
//! Its generated types stay here: each import converts the guest's values
//! into the shim's own [`types`](super::types) before it reaches the
//! [`Bridge`], and each export call converts the shim's values into this
//! version's and the answer back, as [`super::v0_2`] does for 0.2.0.

use super::Bridge;
use super::convert::{Convert, cases, records};
use super::store::StoreState;
use crate::cancel::CancelToken;
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker, Resource};

wasmtime::component::bindgen!({
    path: "../wit/0.4.0",
    world: "extension",
    imports: { default: async },
    exports: { default: async },
    with: {
        "octet:extension/composition.pending-call": super::pending::PendingCall,
    },
});

use super::pending::PendingCall;
use super::types as shim;
use octet::extension::{
    agents as ga, composition as gc, host as gh, policy as gp, tools_catalog as gk, types as gt,
};

/// Adds the 0.4.0 imports to `linker`.
pub fn add_to_linker<B: Bridge>(linker: &mut Linker<StoreState<B>>) -> anyhow::Result<()> {
    Extension::add_to_linker::<StoreState<B>, HasSelf<StoreState<B>>>(linker, |state| state)
        .map_err(|err| anyhow::anyhow!("cannot link the octet:extension@0.4.0 imports: {err}"))
}

// ----- values the guest hands the shim ---------------------------------

records! {
    gt::Description => shim::Description {
        name, tools, commands, hooks, context, status_surfaces, renderers, menu, lifecycle,
        max_concurrency, features,
    }
    gt::ToolDefinition => shim::ToolDefinition {
        name, description, parameters, output_schema, prompt_snippet, prompt_guidelines,
    }
    gt::CommandDefinition => shim::CommandDefinition { name, description, usage }
    gt::RpcError => shim::GuestRpcError { code, message, data }
    gt::ToolResult => shim::ToolResult { content, structured_content, is_error, metadata }
    gt::ImagePart => shim::ImagePart { artifact_id, mime_type, alt }
    gt::AudioPart => shim::AudioPart { artifact_id, mime_type, transcript }
    gt::CommandResult => shim::CommandResult { text, notifications, context }
    gt::Notification => shim::Notification { level, title, message }
    gt::ContextItem => shim::ContextItem { label, content, placement }
    gt::PersistenceMetadata => shim::PersistenceMetadata { value, public }
    gt::StatusItem => shim::StatusItem { surface, text, style_role, priority }
    gt::Segment => shim::Segment { text, style_role }
    gt::Confirmation => shim::Confirmation { prompt, detail, destructive, default }
    gt::ProgressStatus => shim::ProgressStatus { message, current, total, unit }
    gt::ProgressOutput => shim::ProgressOutput { stream, data }
    gt::ProgressDecoration => shim::ProgressDecoration { label, detail }
    gt::ResourceOwner => shim::ResourceOwner {
        session_id, extension_instance_id, process_generation,
    }
    gt::HookResult => shim::HookResult {
        disposition, context, notifications, provider_retry, persistence_metadata,
        post_mutation, cache_warming, compaction_frames, provider_payload, provider_headers,
    }
    gt::HeaderEdit => shim::HeaderEdit { name, values }
    gp::Intent => shim::Intent { kind, operation, target, data_classes, read_only, destructive }
    ga::SpawnRequest => shim::SpawnRequest {
        task_name, profile, fingerprint, message, idempotency_key, policy,
    }
    ga::SpawnPolicy => shim::SpawnPolicy {
        tools, max_concurrent_children, max_turns, max_tokens, max_cost_microdollars,
        max_output_bytes, timeout_ms, model_selection,
    }
    ga::ModelSelection => shim::ModelSelection { provider, model, reasoning }
}

cases! {
    gt::LifecycleKind => shim::LifecycleKind {
        SessionStarted, SessionSettled, TurnStarted, TurnSettled, ToolStarted, ToolSettled,
    }
    gt::Error => shim::GuestError { InvalidParams(text), Cancelled, Failed(text), Rpc(error) }
    gt::ContentPart => shim::ContentPart { Text(text), Image(image), Audio(audio) }
    gt::NotifyLevel => shim::NotifyLevel { Info, Success, Warning, Error }
    gt::Placement => shim::Placement { SystemPrefix, SystemSuffix, PromptPrefix, PromptSuffix }
    gt::Disposition => shim::Disposition { Continue, Deny(reason) }
    gt::RetryDecision => shim::RetryDecision { Retry, Stop, Delay(ms) }
    gt::RescanDecision => shim::RescanDecision { NoRescan, RequestRescan(ids) }
    gt::CacheWarmingAction => shim::CacheWarmingAction { Warm, Stop }
    gt::ProgressEvent => shim::ProgressEvent { Status(s), Output(o), Decoration(d) }
    gt::OutputStream => shim::OutputStream { Stdout, Stderr }
    gh::LogLevel => shim::LogLevel { Debug, Info, Warning, Error }
    ga::AgentTool => shim::AgentTool { Read, Search, Edit, Write, Bash }
}

// ----- values the shim hands the guest ---------------------------------

records! {
    shim::InitParams => gt::InitParams { api_version, features, workspace, initialize }
    shim::ToolCall => gt::ToolCall { name, arguments, catalog_revision }
    shim::CallContext => gt::CallContext {
        request_id, workspace, execution_scope, resource_owner, host,
    }
    shim::ResourceOwner => gt::ResourceOwner {
        session_id, extension_instance_id, process_generation,
    }
    shim::RenderRequest => gt::RenderRequest { name, arguments, output, is_error }
    shim::LifecycleEvent => gt::LifecycleEvent {
        kind, session_id, run_id, turn_id, tool_call_id, tool_name, outcome, duration_ms, reason,
    }
    shim::GuestRpcError => gt::RpcError { code, message, data }
    shim::CatalogUpdate => gk::CatalogUpdate { revision, tools }
    shim::Verdict => gp::Verdict { decision, approval_token }
    shim::Spawned => ga::Spawned { agent_id, agent_path, status, details }
    shim::AgentStatus => ga::AgentStatus { state, output, error }
    shim::Steered => ga::Steered { delivered_to, delivery }
    shim::FollowedUp => ga::FollowedUp { agent_id, agent_path, delivery }
    shim::AgentSnapshot => ga::Snapshot { principal, resource_owner, persistence_error, agents }
    shim::AgentRecord => ga::AgentRecord { agent_id, agent_path, status, details }
    shim::Waited => ga::Waited { timed_out, snapshot }
    shim::Interrupted => ga::Interrupted {
        agent_id, agent_path, previous_status, interrupt_requested,
    }
    shim::ModelList => ga::ModelList { models, truncated }
    shim::ModelInfo => ga::ModelInfo {
        model, provider, display_name, reasoning, context_window, max_output_tokens,
    }
    shim::CompositionContext => gc::CompositionContext { tools, store, limits }
    shim::CompositionLimits => gc::CompositionLimits { timeout_ms, max_calls }
    shim::CompositionUpdate => gc::CompositionUpdate { sequence, result }
}

cases! {
    shim::LifecycleKind => gt::LifecycleKind {
        SessionStarted, SessionSettled, TurnStarted, TurnSettled, ToolStarted, ToolSettled,
    }
    shim::GuestError => gt::Error { InvalidParams(text), Cancelled, Failed(text), Rpc(error) }
    shim::Decision => gp::Decision { Allow, Ask, Deny }
    shim::SteeringDelivery => ga::SteeringDelivery { Steering, Queued }
    shim::FollowUpDelivery => ga::FollowUpDelivery { FollowUp, NewRun }
}

// ----- the guest's exports -------------------------------------------

/// The guest's answer in the shim's types.
type Answer<T> = wasmtime::Result<Result<T, shim::GuestError>>;

/// Calls of a 0.4.0 guest's exports, with the shim's types on both sides.
pub struct Exports(pub(super) Extension);

impl Exports {
    fn guest(&self) -> &exports::octet::extension::guest::Guest {
        self.0.octet_extension_guest()
    }

    pub async fn describe<T: Send>(
        &self,
        store: &mut Store<T>,
    ) -> wasmtime::Result<shim::Description> {
        Ok(self.guest().call_describe(store).await?.convert())
    }

    pub async fn init<T: Send>(
        &self,
        store: &mut Store<T>,
        params: &shim::InitParams,
    ) -> Answer<()> {
        let params: gt::InitParams = params.clone().convert();
        Ok(self.guest().call_init(store, &params).await?.convert())
    }

    pub async fn call_tool<T: Send>(
        &self,
        store: &mut Store<T>,
        call: shim::ToolCall,
        cx: shim::CallContext,
    ) -> Answer<shim::ToolResult> {
        let (call, cx): (gt::ToolCall, gt::CallContext) = (call.convert(), cx.convert());
        Ok(self
            .guest()
            .call_call_tool(store, &call, &cx)
            .await?
            .convert())
    }

    pub async fn execute_command<T: Send>(
        &self,
        store: &mut Store<T>,
        name: &str,
        arguments: &[String],
        cx: shim::CallContext,
    ) -> Answer<shim::CommandResult> {
        let cx: gt::CallContext = cx.convert();
        Ok(self
            .guest()
            .call_execute_command(store, name, arguments, &cx)
            .await?
            .convert())
    }

    pub async fn run_hook<T: Send>(
        &self,
        store: &mut Store<T>,
        hook: &str,
        payload: String,
        cx: shim::CallContext,
    ) -> Answer<shim::HookResult> {
        let cx: gt::CallContext = cx.convert();
        Ok(self
            .guest()
            .call_run_hook(store, hook, &payload, &cx)
            .await?
            .convert())
    }

    pub async fn collect_context<T: Send>(
        &self,
        store: &mut Store<T>,
        prompt: Option<&str>,
        cx: shim::CallContext,
    ) -> Answer<Vec<shim::ContextItem>> {
        let cx: gt::CallContext = cx.convert();
        Ok(self
            .guest()
            .call_collect_context(store, prompt, &cx)
            .await?
            .convert())
    }

    pub async fn collect_status<T: Send>(
        &self,
        store: &mut Store<T>,
        surface: &str,
        cx: shim::CallContext,
    ) -> Answer<Option<shim::StatusItem>> {
        let cx: gt::CallContext = cx.convert();
        Ok(self
            .guest()
            .call_collect_status(store, surface, &cx)
            .await?
            .convert())
    }

    pub async fn render_tool<T: Send>(
        &self,
        store: &mut Store<T>,
        request: shim::RenderRequest,
        cx: shim::CallContext,
    ) -> Answer<Vec<shim::Segment>> {
        let (request, cx): (gt::RenderRequest, gt::CallContext) = (request.convert(), cx.convert());
        Ok(self
            .guest()
            .call_render_tool(store, &request, &cx)
            .await?
            .convert())
    }

    pub async fn collect_menu<T: Send>(
        &self,
        store: &mut Store<T>,
        cx: shim::CallContext,
    ) -> Answer<Option<String>> {
        let cx: gt::CallContext = cx.convert();
        Ok(self.guest().call_collect_menu(store, &cx).await?.convert())
    }

    pub async fn on_lifecycle<T: Send>(
        &self,
        store: &mut Store<T>,
        event: shim::LifecycleEvent,
    ) -> wasmtime::Result<()> {
        let event: gt::LifecycleEvent = event.convert();
        self.guest().call_on_lifecycle(store, &event).await
    }

    pub async fn on_shutdown<T: Send>(&self, store: &mut Store<T>) -> Answer<()> {
        Ok(self.guest().call_on_shutdown(store).await?.convert())
    }
}

/// `cancellation.sleep`, shared by every version: `true` as soon as the
/// request is cancelled, `false` when the time ran out.
pub(super) async fn sleep(cancel: &CancelToken, ms: u64) -> bool {
    tokio::select! {
        () = cancel.cancelled() => true,
        () = tokio::time::sleep(std::time::Duration::from_millis(ms)) => cancel.is_cancelled(),
    }
}

// ----- the host side of the imports ----------------------------------

impl<B: Bridge> gt::Host for StoreState<B> {}

impl<B: Bridge> gh::Host for StoreState<B> {
    async fn log(&mut self, level: gh::LogLevel, message: String, fields: Option<String>) {
        self.bridge.log(level.convert(), message, fields);
    }

    async fn notify(&mut self, notification: gt::Notification) -> Result<(), gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .notify(self.scope(), notification.convert())
            .await
            .convert()
    }

    async fn confirm(&mut self, request: gt::Confirmation) -> Result<bool, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .confirm(self.scope(), request.convert())
            .await
            .convert()
    }

    async fn request_input(
        &mut self,
        prompt: String,
        secret: bool,
    ) -> Result<Option<String>, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .request_input(self.scope(), prompt, secret)
            .await
            .convert()
    }

    async fn progress(&mut self, event: gt::ProgressEvent) -> Result<(), gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .progress(self.scope(), event.convert())
            .await
            .convert()
    }

    async fn contribute_context(&mut self, item: gt::ContextItem) -> Result<(), gt::Error> {
        let bridge = self.bridge.clone();
        bridge.contribute_context(item.convert()).await.convert()
    }

    async fn contribute_status(&mut self, item: gt::StatusItem) -> Result<(), gt::Error> {
        let bridge = self.bridge.clone();
        bridge.contribute_status(item.convert()).await.convert()
    }
}

impl<B: Bridge> octet::extension::artifacts::Host for StoreState<B> {
    async fn publish(&mut self, mime_type: String, data: Vec<u8>) -> Result<String, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .publish_artifact(self.scope(), mime_type, data)
            .await
            .convert()
    }
}

impl<B: Bridge> gk::Host for StoreState<B> {
    async fn register(
        &mut self,
        tools: Vec<gt::ToolDefinition>,
    ) -> Result<gk::CatalogUpdate, gt::Error> {
        let bridge = self.bridge.clone();
        bridge.register_tools(tools.convert()).await.convert()
    }

    async fn unregister(&mut self, names: Vec<String>) -> Result<gk::CatalogUpdate, gt::Error> {
        let bridge = self.bridge.clone();
        bridge.unregister_tools(names).await.convert()
    }

    async fn current(&mut self) -> gk::CatalogUpdate {
        self.bridge.current_catalog().convert()
    }
}

impl<B: Bridge> octet::extension::secrets::Host for StoreState<B> {
    async fn get(&mut self, name: String) -> Result<String, gt::Error> {
        let bridge = self.bridge.clone();
        bridge.get_secret(self.scope(), name).await.convert()
    }
}

impl<B: Bridge> gp::Host for StoreState<B> {
    async fn evaluate(
        &mut self,
        intent: gp::Intent,
        approval_token: Option<String>,
    ) -> Result<gp::Verdict, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .evaluate_policy(self.scope(), intent.convert(), approval_token)
            .await
            .convert()
    }
}

impl<B: Bridge> octet::extension::presentation::Host for StoreState<B> {
    async fn update(
        &mut self,
        snapshot: String,
        owner: Option<gt::ResourceOwner>,
    ) -> Result<(), gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .update_presentation(self.scope(), snapshot, owner.convert())
            .await
            .convert()
    }
}

impl<B: Bridge> ga::Host for StoreState<B> {
    async fn spawn(&mut self, request: ga::SpawnRequest) -> Result<ga::Spawned, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .spawn_agent(self.scope(), request.convert())
            .await
            .convert()
    }

    async fn send(&mut self, target: String, message: String) -> Result<ga::Steered, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .steer_agent(self.scope(), target, message)
            .await
            .convert()
    }

    async fn follow_up(
        &mut self,
        target: String,
        message: String,
    ) -> Result<ga::FollowedUp, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .follow_up_agent(self.scope(), target, message)
            .await
            .convert()
    }

    async fn list_agents(&mut self) -> Result<ga::Snapshot, gt::Error> {
        let bridge = self.bridge.clone();
        bridge.list_agents(self.scope()).await.convert()
    }

    async fn wait(&mut self, timeout_ms: Option<u32>) -> Result<ga::Waited, gt::Error> {
        let bridge = self.bridge.clone();
        bridge.wait_agents(self.scope(), timeout_ms).await.convert()
    }

    async fn interrupt(&mut self, target: String) -> Result<ga::Interrupted, gt::Error> {
        let bridge = self.bridge.clone();
        bridge.interrupt_agent(self.scope(), target).await.convert()
    }

    async fn list_models(
        &mut self,
        query: Option<String>,
        limit: Option<u32>,
    ) -> Result<ga::ModelList, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .list_agent_models(self.scope(), query, limit)
            .await
            .convert()
    }
}

impl<B: Bridge> gc::Host for StoreState<B> {
    async fn context(&mut self) -> Result<gc::CompositionContext, gt::Error> {
        let bridge = self.bridge.clone();
        bridge.composition_context(self.scope()).await.convert()
    }

    async fn call(
        &mut self,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> Result<String, gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .composition_call(self.scope(), name, arguments, full_outcome)
            .await
            .convert()
    }

    async fn store(
        &mut self,
        set: Vec<(String, String)>,
        delete: Vec<String>,
    ) -> Result<(), gt::Error> {
        let bridge = self.bridge.clone();
        bridge
            .composition_store(self.scope(), set, delete)
            .await
            .convert()
    }

    async fn start_call(
        &mut self,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> Result<Resource<PendingCall>, gt::Error> {
        let bridge = self.bridge.clone();
        let call = bridge
            .composition_start(self.scope(), name, arguments, full_outcome)
            .await
            .map_err(Convert::convert)?;
        // The call is abandoned (dropped) if the table refuses it.
        self.table
            .push(call)
            .map_err(|err| gt::Error::Failed(format!("cannot keep the composition call: {err}")))
    }
}

/// `composition.pending-call`. wasmtime checks the guest's handles before
/// these run; every wait ends when the call's queue closes (its reply, the
/// end of its tool call, or the handle dropped).
impl<B: Bridge> gc::HostPendingCall for StoreState<B> {
    async fn next_update(&mut self, call: Resource<PendingCall>) -> Option<gc::CompositionUpdate> {
        let updates = self.table.get(&call).ok()?.updates();
        updates.next().await.convert()
    }

    async fn finish(&mut self, call: Resource<PendingCall>) -> Result<String, gt::Error> {
        let call = self
            .table
            .get_mut(&call)
            .map_err(|err| gt::Error::Failed(format!("unknown composition call: {err}")))?;
        let (outcome, updates) = (call.take_outcome(), call.updates());
        super::pending::finish(outcome, &updates).await.convert()
    }

    async fn drop(&mut self, call: Resource<PendingCall>) -> wasmtime::Result<()> {
        self.table.delete(call)?;
        Ok(())
    }
}

impl<B: Bridge> octet::extension::cancellation::Host for StoreState<B> {
    async fn is_cancelled(&mut self) -> bool {
        self.cancel.is_cancelled()
    }

    async fn reason(&mut self) -> Option<String> {
        self.cancel.reason()
    }

    async fn sleep(&mut self, ms: u64) -> bool {
        let cancel = self.cancel.clone();
        sleep(&cancel, ms).await
    }
}
