//! Bindings for `octet:extension@0.2.0` and the host side of its imports.
//!
//! The generated types of the newest WIT version are the types the rest of
//! the shim uses (re-exported as [`types`]). When the WIT changes
//! incompatibly, the new version gets its own module and this one converts
//! into it, so components built against older versions keep loading.

use super::Bridge;
use super::instance::StoreState;
use wasmtime::component::{HasSelf, Linker};

wasmtime::component::bindgen!({
    path: "../wit",
    world: "extension",
    imports: { default: async },
    exports: { default: async },
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
    pub use super::octet::extension::host::LogLevel;
    pub use super::octet::extension::policy::{Decision, Intent, Verdict};
    pub use super::octet::extension::tools_catalog::CatalogUpdate;
    pub use super::octet::extension::types::{
        AudioPart, CallContext, CommandDefinition, CommandResult, Confirmation, ContentPart,
        ContextItem, Description, Disposition, Error as GuestError, HookResult, ImagePart,
        InitParams, LifecycleEvent, LifecycleKind, Notification, NotifyLevel, OutputStream,
        PersistenceMetadata, Placement, ProgressDecoration, ProgressEvent, ProgressOutput,
        ProgressStatus, RenderRequest, RescanDecision, ResourceOwner, RetryDecision, RpcError,
        Segment, StatusItem, ToolCall, ToolDefinition, ToolResult,
    };
}

use types::*;

/// Adds the extension's imports to `linker`.
pub fn add_to_linker<B: Bridge>(linker: &mut Linker<StoreState<B>>) -> anyhow::Result<()> {
    Extension::add_to_linker::<StoreState<B>, HasSelf<StoreState<B>>>(linker, |state| state)
        .map_err(|err| anyhow::anyhow!("cannot link the octet imports: {err}"))
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

impl<B: Bridge> octet::extension::cancellation::Host for StoreState<B> {
    async fn is_cancelled(&mut self) -> bool {
        self.cancel.is_cancelled()
    }

    async fn reason(&mut self) -> Option<String> {
        self.cancel.reason()
    }

    async fn sleep(&mut self, ms: u64) -> bool {
        let cancel = self.cancel.clone();
        tokio::select! {
            () = cancel.cancelled() => true,
            () = tokio::time::sleep(std::time::Duration::from_millis(ms)) => cancel.is_cancelled(),
        }
    }
}
