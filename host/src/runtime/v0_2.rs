//! Bindings for `octet:extension@0.2.0` (released, never edited), so
//! components built against it keep loading.
//!
//! Nothing here decides anything: each import converts its values into the
//! shim's own [`types`](super::types) and calls the same [`Bridge`] method as
//! [`super::v0_4`], and each export call converts the shim's values into
//! 0.2.0 and the answer back. What 0.2.0 cannot express gets its neutral
//! value (no prompt metadata, no 0.4 hook extras).

use super::Bridge;
use super::convert::{Convert, cases, records};
use super::store::StoreState;
use super::types as shim;
use wasmtime::Store;
use wasmtime::component::{HasSelf, Linker};

wasmtime::component::bindgen!({
    path: "../wit",
    world: "extension",
    imports: { default: async },
    exports: { default: async },
});

use octet::extension::{agents as oa, host as oh, policy as op, tools_catalog as oc, types as ot};

/// Adds the 0.2.0 imports to `linker`.
pub fn add_to_linker<B: Bridge>(linker: &mut Linker<StoreState<B>>) -> anyhow::Result<()> {
    Extension::add_to_linker::<StoreState<B>, HasSelf<StoreState<B>>>(linker, |state| state)
        .map_err(|err| anyhow::anyhow!("cannot link the octet:extension@0.2.0 imports: {err}"))
}

// ----- values the guest hands the shim (0.2.0 -> newest) ---------------

records! {
    ot::Description => shim::Description {
        name, tools, commands, hooks, context, status_surfaces, renderers, menu, lifecycle,
        max_concurrency, features,
    }
    ot::CommandDefinition => shim::CommandDefinition { name, description, usage }
    ot::RpcError => shim::GuestRpcError { code, message, data }
    ot::ToolResult => shim::ToolResult { content, structured_content, is_error, metadata }
    ot::ImagePart => shim::ImagePart { artifact_id, mime_type, alt }
    ot::AudioPart => shim::AudioPart { artifact_id, mime_type, transcript }
    ot::CommandResult => shim::CommandResult { text, notifications, context }
    ot::Notification => shim::Notification { level, title, message }
    ot::ContextItem => shim::ContextItem { label, content, placement }
    ot::PersistenceMetadata => shim::PersistenceMetadata { value, public }
    ot::StatusItem => shim::StatusItem { surface, text, style_role, priority }
    ot::Segment => shim::Segment { text, style_role }
    ot::Confirmation => shim::Confirmation { prompt, detail, destructive, default }
    ot::ProgressStatus => shim::ProgressStatus { message, current, total, unit }
    ot::ProgressOutput => shim::ProgressOutput { stream, data }
    ot::ProgressDecoration => shim::ProgressDecoration { label, detail }
    ot::ResourceOwner => shim::ResourceOwner { session_id, extension_instance_id, process_generation }
    op::Intent => shim::Intent { kind, operation, target, data_classes, read_only, destructive }
    oa::SpawnRequest => shim::SpawnRequest {
        task_name, profile, fingerprint, message, idempotency_key, policy,
    }
    oa::SpawnPolicy => shim::SpawnPolicy {
        tools, max_concurrent_children, max_turns, max_tokens, max_cost_microdollars,
        max_output_bytes, timeout_ms, model_selection,
    }
    oa::ModelSelection => shim::ModelSelection { provider, model, reasoning }
}

cases! {
    ot::LifecycleKind => shim::LifecycleKind {
        SessionStarted, SessionSettled, TurnStarted, TurnSettled, ToolStarted, ToolSettled,
    }
    ot::Error => shim::GuestError { InvalidParams(text), Cancelled, Failed(text), Rpc(error) }
    ot::ContentPart => shim::ContentPart { Text(text), Image(image), Audio(audio) }
    ot::NotifyLevel => shim::NotifyLevel { Info, Success, Warning, Error }
    ot::Placement => shim::Placement { SystemPrefix, SystemSuffix, PromptPrefix, PromptSuffix }
    ot::Disposition => shim::Disposition { Continue, Deny(reason) }
    ot::RetryDecision => shim::RetryDecision { Retry, Stop, Delay(ms) }
    ot::RescanDecision => shim::RescanDecision { NoRescan, RequestRescan(ids) }
    ot::ProgressEvent => shim::ProgressEvent { Status(s), Output(o), Decoration(d) }
    ot::OutputStream => shim::OutputStream { Stdout, Stderr }
    oh::LogLevel => shim::LogLevel { Debug, Info, Warning, Error }
    oa::AgentTool => shim::AgentTool { Read, Search, Edit, Write, Bash }
}

/// 0.2.0 tools carry no prompt metadata.
impl Convert<shim::ToolDefinition> for ot::ToolDefinition {
    fn convert(self) -> shim::ToolDefinition {
        shim::ToolDefinition {
            name: self.name,
            description: self.description,
            parameters: self.parameters,
            output_schema: self.output_schema,
            prompt_snippet: None,
            prompt_guidelines: Vec::new(),
        }
    }
}

/// 0.2.0 hook results have none of the 0.4 hooks' extras.
impl Convert<shim::HookResult> for ot::HookResult {
    fn convert(self) -> shim::HookResult {
        shim::HookResult {
            disposition: self.disposition.convert(),
            context: self.context.convert(),
            notifications: self.notifications.convert(),
            provider_retry: self.provider_retry.convert(),
            persistence_metadata: self.persistence_metadata.convert(),
            post_mutation: self.post_mutation.convert(),
            cache_warming: None,
            compaction_frames: Vec::new(),
            provider_payload: None,
            provider_headers: Vec::new(),
        }
    }
}

// ----- values the shim hands the guest (newest -> 0.2.0) ---------------

records! {
    shim::InitParams => ot::InitParams { api_version, features, workspace, initialize }
    shim::ToolCall => ot::ToolCall { name, arguments, catalog_revision }
    shim::CallContext => ot::CallContext {
        request_id, workspace, execution_scope, resource_owner, host,
    }
    shim::ResourceOwner => ot::ResourceOwner { session_id, extension_instance_id, process_generation }
    shim::RenderRequest => ot::RenderRequest { name, arguments, output, is_error }
    shim::LifecycleEvent => ot::LifecycleEvent {
        kind, session_id, run_id, turn_id, tool_call_id, tool_name, outcome, duration_ms, reason,
    }
    shim::GuestRpcError => ot::RpcError { code, message, data }
    shim::CatalogUpdate => oc::CatalogUpdate { revision, tools }
    shim::Verdict => op::Verdict { decision, approval_token }
    shim::Spawned => oa::Spawned { agent_id, agent_path, status, details }
    shim::AgentStatus => oa::AgentStatus { state, output, error }
    shim::Steered => oa::Steered { delivered_to, delivery }
    shim::FollowedUp => oa::FollowedUp { agent_id, agent_path, delivery }
    shim::AgentSnapshot => oa::Snapshot { principal, resource_owner, persistence_error, agents }
    shim::AgentRecord => oa::AgentRecord { agent_id, agent_path, status, details }
    shim::Waited => oa::Waited { timed_out, snapshot }
    shim::Interrupted => oa::Interrupted { agent_id, agent_path, previous_status, interrupt_requested }
    shim::ModelList => oa::ModelList { models, truncated }
    shim::ModelInfo => oa::ModelInfo {
        model, provider, display_name, reasoning, context_window, max_output_tokens,
    }
}

cases! {
    shim::LifecycleKind => ot::LifecycleKind {
        SessionStarted, SessionSettled, TurnStarted, TurnSettled, ToolStarted, ToolSettled,
    }
    shim::GuestError => ot::Error { InvalidParams(text), Cancelled, Failed(text), Rpc(error) }
    shim::Decision => op::Decision { Allow, Ask, Deny }
    shim::SteeringDelivery => oa::SteeringDelivery { Steering, Queued }
    shim::FollowUpDelivery => oa::FollowUpDelivery { FollowUp, NewRun }
}

// ----- the guest's exports -------------------------------------------

/// The guest's answer in the shim's types.
type Answer<T> = wasmtime::Result<Result<T, shim::GuestError>>;

/// Calls of a 0.2.0 guest's exports, with the shim's types on both sides.
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
        let params: ot::InitParams = params.clone().convert();
        Ok(self.guest().call_init(store, &params).await?.convert())
    }

    pub async fn call_tool<T: Send>(
        &self,
        store: &mut Store<T>,
        call: shim::ToolCall,
        cx: shim::CallContext,
    ) -> Answer<shim::ToolResult> {
        let (call, cx): (ot::ToolCall, ot::CallContext) = (call.convert(), cx.convert());
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
        let cx: ot::CallContext = cx.convert();
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
        let cx: ot::CallContext = cx.convert();
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
        let cx: ot::CallContext = cx.convert();
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
        let cx: ot::CallContext = cx.convert();
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
        let (request, cx): (ot::RenderRequest, ot::CallContext) = (request.convert(), cx.convert());
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
        let cx: ot::CallContext = cx.convert();
        Ok(self.guest().call_collect_menu(store, &cx).await?.convert())
    }

    pub async fn on_lifecycle<T: Send>(
        &self,
        store: &mut Store<T>,
        event: shim::LifecycleEvent,
    ) -> wasmtime::Result<()> {
        let event: ot::LifecycleEvent = event.convert();
        self.guest().call_on_lifecycle(store, &event).await
    }

    pub async fn on_shutdown<T: Send>(&self, store: &mut Store<T>) -> Answer<()> {
        Ok(self.guest().call_on_shutdown(store).await?.convert())
    }
}

// ----- the host side of the imports ----------------------------------

impl<B: Bridge> ot::Host for StoreState<B> {}

impl<B: Bridge> oh::Host for StoreState<B> {
    async fn log(&mut self, level: oh::LogLevel, message: String, fields: Option<String>) {
        self.bridge.log(level.convert(), message, fields);
    }

    async fn notify(&mut self, notification: ot::Notification) -> Result<(), ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .notify(self.scope(), notification.convert())
            .await
            .convert()
    }

    async fn confirm(&mut self, request: ot::Confirmation) -> Result<bool, ot::Error> {
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
    ) -> Result<Option<String>, ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .request_input(self.scope(), prompt, secret)
            .await
            .convert()
    }

    async fn progress(&mut self, event: ot::ProgressEvent) -> Result<(), ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .progress(self.scope(), event.convert())
            .await
            .convert()
    }

    async fn contribute_context(&mut self, item: ot::ContextItem) -> Result<(), ot::Error> {
        let bridge = self.bridge.clone();
        bridge.contribute_context(item.convert()).await.convert()
    }

    async fn contribute_status(&mut self, item: ot::StatusItem) -> Result<(), ot::Error> {
        let bridge = self.bridge.clone();
        bridge.contribute_status(item.convert()).await.convert()
    }
}

impl<B: Bridge> octet::extension::artifacts::Host for StoreState<B> {
    async fn publish(&mut self, mime_type: String, data: Vec<u8>) -> Result<String, ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .publish_artifact(self.scope(), mime_type, data)
            .await
            .convert()
    }
}

impl<B: Bridge> oc::Host for StoreState<B> {
    async fn register(
        &mut self,
        tools: Vec<ot::ToolDefinition>,
    ) -> Result<oc::CatalogUpdate, ot::Error> {
        let bridge = self.bridge.clone();
        bridge.register_tools(tools.convert()).await.convert()
    }

    async fn unregister(&mut self, names: Vec<String>) -> Result<oc::CatalogUpdate, ot::Error> {
        let bridge = self.bridge.clone();
        bridge.unregister_tools(names).await.convert()
    }

    async fn current(&mut self) -> oc::CatalogUpdate {
        self.bridge.current_catalog().convert()
    }
}

impl<B: Bridge> octet::extension::secrets::Host for StoreState<B> {
    async fn get(&mut self, name: String) -> Result<String, ot::Error> {
        let bridge = self.bridge.clone();
        bridge.get_secret(self.scope(), name).await.convert()
    }
}

impl<B: Bridge> op::Host for StoreState<B> {
    async fn evaluate(
        &mut self,
        intent: op::Intent,
        approval_token: Option<String>,
    ) -> Result<op::Verdict, ot::Error> {
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
        owner: Option<ot::ResourceOwner>,
    ) -> Result<(), ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .update_presentation(self.scope(), snapshot, owner.convert())
            .await
            .convert()
    }
}

impl<B: Bridge> oa::Host for StoreState<B> {
    async fn spawn(&mut self, request: oa::SpawnRequest) -> Result<oa::Spawned, ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .spawn_agent(self.scope(), request.convert())
            .await
            .convert()
    }

    async fn send(&mut self, target: String, message: String) -> Result<oa::Steered, ot::Error> {
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
    ) -> Result<oa::FollowedUp, ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .follow_up_agent(self.scope(), target, message)
            .await
            .convert()
    }

    async fn list_agents(&mut self) -> Result<oa::Snapshot, ot::Error> {
        let bridge = self.bridge.clone();
        bridge.list_agents(self.scope()).await.convert()
    }

    async fn wait(&mut self, timeout_ms: Option<u32>) -> Result<oa::Waited, ot::Error> {
        let bridge = self.bridge.clone();
        bridge.wait_agents(self.scope(), timeout_ms).await.convert()
    }

    async fn interrupt(&mut self, target: String) -> Result<oa::Interrupted, ot::Error> {
        let bridge = self.bridge.clone();
        bridge.interrupt_agent(self.scope(), target).await.convert()
    }

    async fn list_models(
        &mut self,
        query: Option<String>,
        limit: Option<u32>,
    ) -> Result<oa::ModelList, ot::Error> {
        let bridge = self.bridge.clone();
        bridge
            .list_agent_models(self.scope(), query, limit)
            .await
            .convert()
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
        super::v0_4::sleep(&self.cancel, ms).await
    }
}
