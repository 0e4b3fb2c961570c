//! Bindings for `octet:extension@0.4.0`, the newest WIT version, and the
//! host side of its imports.
//!
//! Its generated types are the vocabulary the rest of the shim speaks
//! (re-exported as [`types`]); the modules of older versions convert into
//! them, so a change to the WIT touches this file and the converters only.

use super::Bridge;
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

/// The WIT types under short names.
pub mod types {
    pub use super::exports::octet::extension::guest::Guest;
    pub use super::octet::extension::agents::{
        AgentRecord, AgentStatus, AgentTool, FollowUpDelivery, FollowedUp, Interrupted, ModelInfo,
        ModelList, ModelSelection, Snapshot as AgentSnapshot, SpawnPolicy, SpawnRequest, Spawned,
        Steered, SteeringDelivery, Waited,
    };
    pub use super::octet::extension::cancellation;
    pub use super::octet::extension::composition::{
        CompositionContext, CompositionLimits, CompositionUpdate,
    };
    pub use super::octet::extension::host::LogLevel;
    pub use super::octet::extension::policy::{Decision, Intent, Verdict};
    pub use super::octet::extension::tools_catalog::CatalogUpdate;
    pub use super::octet::extension::types::{
        AudioPart, CacheWarmingAction, CallContext, CommandDefinition, CommandResult, Confirmation,
        ContentPart, ContextItem, Description, Disposition, Error as GuestError, HeaderEdit,
        HookResult, ImagePart, InitParams, LifecycleEvent, LifecycleKind, Notification,
        NotifyLevel, OutputStream, PersistenceMetadata, Placement, ProgressDecoration,
        ProgressEvent, ProgressOutput, ProgressStatus, RenderRequest, RescanDecision,
        ResourceOwner, RetryDecision, RpcError, Segment, StatusItem, ToolCall, ToolDefinition,
        ToolResult,
    };

    /// The code of the runtime's own refusals (a service its bridge does
    /// not serve): equals the wire's `ErrorCode::ServerError` (-32000),
    /// named here because the runtime layer does not know the wire
    /// (`protocol::lanes` tests that the two agree).
    pub const SERVER_ERROR: i32 = -32000;
}

use super::pending::PendingCall;
use types::*;

/// Adds the 0.4.0 imports to `linker`.
pub fn add_to_linker<B: Bridge>(linker: &mut Linker<StoreState<B>>) -> anyhow::Result<()> {
    Extension::add_to_linker::<StoreState<B>, HasSelf<StoreState<B>>>(linker, |state| state)
        .map_err(|err| anyhow::anyhow!("cannot link the octet:extension@0.4.0 imports: {err}"))
}

/// The guest's answer.
type Answer<T> = wasmtime::Result<Result<T, GuestError>>;

/// Calls of a 0.4.0 guest's exports: the shim's types are this version's.
pub struct Exports(pub(super) Extension);

impl Exports {
    fn guest(&self) -> &exports::octet::extension::guest::Guest {
        self.0.octet_extension_guest()
    }

    pub async fn describe<T: Send>(&self, store: &mut Store<T>) -> wasmtime::Result<Description> {
        self.guest().call_describe(store).await
    }

    pub async fn init<T: Send>(&self, store: &mut Store<T>, params: &InitParams) -> Answer<()> {
        self.guest().call_init(store, params).await
    }

    pub async fn call_tool<T: Send>(
        &self,
        store: &mut Store<T>,
        call: &ToolCall,
        cx: &CallContext,
    ) -> Answer<ToolResult> {
        self.guest().call_call_tool(store, call, cx).await
    }

    pub async fn execute_command<T: Send>(
        &self,
        store: &mut Store<T>,
        name: &str,
        arguments: &[String],
        cx: &CallContext,
    ) -> Answer<CommandResult> {
        self.guest()
            .call_execute_command(store, name, arguments, cx)
            .await
    }

    pub async fn run_hook<T: Send>(
        &self,
        store: &mut Store<T>,
        hook: &str,
        payload: &str,
        cx: &CallContext,
    ) -> Answer<HookResult> {
        self.guest()
            .call_run_hook(store, hook, &payload.to_owned(), cx)
            .await
    }

    pub async fn collect_context<T: Send>(
        &self,
        store: &mut Store<T>,
        prompt: Option<&str>,
        cx: &CallContext,
    ) -> Answer<Vec<ContextItem>> {
        self.guest().call_collect_context(store, prompt, cx).await
    }

    pub async fn collect_status<T: Send>(
        &self,
        store: &mut Store<T>,
        surface: &str,
        cx: &CallContext,
    ) -> Answer<Option<StatusItem>> {
        self.guest().call_collect_status(store, surface, cx).await
    }

    pub async fn render_tool<T: Send>(
        &self,
        store: &mut Store<T>,
        request: &RenderRequest,
        cx: &CallContext,
    ) -> Answer<Vec<Segment>> {
        self.guest().call_render_tool(store, request, cx).await
    }

    pub async fn collect_menu<T: Send>(
        &self,
        store: &mut Store<T>,
        cx: &CallContext,
    ) -> Answer<Option<String>> {
        self.guest().call_collect_menu(store, cx).await
    }

    pub async fn on_lifecycle<T: Send>(
        &self,
        store: &mut Store<T>,
        event: &LifecycleEvent,
    ) -> wasmtime::Result<()> {
        self.guest().call_on_lifecycle(store, event).await
    }

    pub async fn on_shutdown<T: Send>(&self, store: &mut Store<T>) -> Answer<()> {
        self.guest().call_on_shutdown(store).await
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

impl<B: Bridge> octet::extension::types::Host for StoreState<B> {}

impl<B: Bridge> octet::extension::host::Host for StoreState<B> {
    async fn log(&mut self, level: LogLevel, message: String, fields: Option<String>) {
        self.bridge.log(level, message, fields);
    }

    async fn notify(&mut self, notification: Notification) -> Result<(), GuestError> {
        let bridge = self.bridge.clone();
        bridge.notify(self.scope(), notification).await
    }

    async fn confirm(&mut self, request: Confirmation) -> Result<bool, GuestError> {
        let bridge = self.bridge.clone();
        bridge.confirm(self.scope(), request).await
    }

    async fn request_input(
        &mut self,
        prompt: String,
        secret: bool,
    ) -> Result<Option<String>, GuestError> {
        let bridge = self.bridge.clone();
        bridge.request_input(self.scope(), prompt, secret).await
    }

    async fn progress(&mut self, event: ProgressEvent) -> Result<(), GuestError> {
        let bridge = self.bridge.clone();
        bridge.progress(self.scope(), event).await
    }

    async fn contribute_context(&mut self, item: ContextItem) -> Result<(), GuestError> {
        let bridge = self.bridge.clone();
        bridge.contribute_context(item).await
    }

    async fn contribute_status(&mut self, item: StatusItem) -> Result<(), GuestError> {
        let bridge = self.bridge.clone();
        bridge.contribute_status(item).await
    }
}

impl<B: Bridge> octet::extension::artifacts::Host for StoreState<B> {
    async fn publish(&mut self, mime_type: String, data: Vec<u8>) -> Result<String, GuestError> {
        let bridge = self.bridge.clone();
        bridge.publish_artifact(self.scope(), mime_type, data).await
    }
}

impl<B: Bridge> octet::extension::tools_catalog::Host for StoreState<B> {
    async fn register(&mut self, tools: Vec<ToolDefinition>) -> Result<CatalogUpdate, GuestError> {
        let bridge = self.bridge.clone();
        bridge.register_tools(tools).await
    }

    async fn unregister(&mut self, names: Vec<String>) -> Result<CatalogUpdate, GuestError> {
        let bridge = self.bridge.clone();
        bridge.unregister_tools(names).await
    }

    async fn current(&mut self) -> CatalogUpdate {
        self.bridge.current_catalog()
    }
}

impl<B: Bridge> octet::extension::secrets::Host for StoreState<B> {
    async fn get(&mut self, name: String) -> Result<String, GuestError> {
        let bridge = self.bridge.clone();
        bridge.get_secret(self.scope(), name).await
    }
}

impl<B: Bridge> octet::extension::policy::Host for StoreState<B> {
    async fn evaluate(
        &mut self,
        intent: Intent,
        approval_token: Option<String>,
    ) -> Result<Verdict, GuestError> {
        let bridge = self.bridge.clone();
        bridge
            .evaluate_policy(self.scope(), intent, approval_token)
            .await
    }
}

impl<B: Bridge> octet::extension::presentation::Host for StoreState<B> {
    async fn update(
        &mut self,
        snapshot: String,
        owner: Option<ResourceOwner>,
    ) -> Result<(), GuestError> {
        let bridge = self.bridge.clone();
        bridge
            .update_presentation(self.scope(), snapshot, owner)
            .await
    }
}

impl<B: Bridge> octet::extension::agents::Host for StoreState<B> {
    async fn spawn(&mut self, request: SpawnRequest) -> Result<Spawned, GuestError> {
        let bridge = self.bridge.clone();
        bridge.spawn_agent(self.scope(), request).await
    }

    async fn send(&mut self, target: String, message: String) -> Result<Steered, GuestError> {
        let bridge = self.bridge.clone();
        bridge.steer_agent(self.scope(), target, message).await
    }

    async fn follow_up(
        &mut self,
        target: String,
        message: String,
    ) -> Result<FollowedUp, GuestError> {
        let bridge = self.bridge.clone();
        bridge.follow_up_agent(self.scope(), target, message).await
    }

    async fn list_agents(&mut self) -> Result<AgentSnapshot, GuestError> {
        let bridge = self.bridge.clone();
        bridge.list_agents(self.scope()).await
    }

    async fn wait(&mut self, timeout_ms: Option<u32>) -> Result<Waited, GuestError> {
        let bridge = self.bridge.clone();
        bridge.wait_agents(self.scope(), timeout_ms).await
    }

    async fn interrupt(&mut self, target: String) -> Result<Interrupted, GuestError> {
        let bridge = self.bridge.clone();
        bridge.interrupt_agent(self.scope(), target).await
    }

    async fn list_models(
        &mut self,
        query: Option<String>,
        limit: Option<u32>,
    ) -> Result<ModelList, GuestError> {
        let bridge = self.bridge.clone();
        bridge.list_agent_models(self.scope(), query, limit).await
    }
}

impl<B: Bridge> octet::extension::composition::Host for StoreState<B> {
    async fn context(&mut self) -> Result<CompositionContext, GuestError> {
        let bridge = self.bridge.clone();
        bridge.composition_context(self.scope()).await
    }

    async fn call(
        &mut self,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> Result<String, GuestError> {
        let bridge = self.bridge.clone();
        bridge
            .composition_call(self.scope(), name, arguments, full_outcome)
            .await
    }

    async fn store(
        &mut self,
        set: Vec<(String, String)>,
        delete: Vec<String>,
    ) -> Result<(), GuestError> {
        let bridge = self.bridge.clone();
        bridge.composition_store(self.scope(), set, delete).await
    }

    async fn start_call(
        &mut self,
        name: String,
        arguments: String,
        full_outcome: bool,
    ) -> Result<Resource<PendingCall>, GuestError> {
        let bridge = self.bridge.clone();
        let call = bridge
            .composition_start(self.scope(), name, arguments, full_outcome)
            .await?;
        // The call is abandoned (dropped) if the table refuses it.
        self.table
            .push(call)
            .map_err(|err| GuestError::Failed(format!("cannot keep the composition call: {err}")))
    }
}

/// `composition.pending-call`. wasmtime checks the guest's handles before
/// these run; every wait ends when the call's queue closes (its reply, the
/// end of its tool call, or the handle dropped).
impl<B: Bridge> octet::extension::composition::HostPendingCall for StoreState<B> {
    async fn next_update(&mut self, call: Resource<PendingCall>) -> Option<CompositionUpdate> {
        let updates = self.table.get(&call).ok()?.updates();
        updates.next().await
    }

    async fn finish(&mut self, call: Resource<PendingCall>) -> Result<String, GuestError> {
        let call = self
            .table
            .get_mut(&call)
            .map_err(|err| GuestError::Failed(format!("unknown composition call: {err}")))?;
        let (outcome, updates) = (call.take_outcome(), call.updates());
        super::pending::finish(outcome, &updates).await
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
