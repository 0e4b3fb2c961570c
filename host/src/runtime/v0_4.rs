//! Bindings for `octet:extension@0.4.0`, the newest WIT version, and the
//! host side of its imports.
//!
//! Its generated types stay here: each import converts the guest's values
//! into the shim's own [`types`](super::types) before it reaches the
//! [`Bridge`], and each export call converts the shim's values into this
//! version's and the answer back, as [`super::v0_2`] does for 0.2.0.

use super::bridge::Bridge;
use super::convert::{Convert, cases, records};
use super::store::StoreState;
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

// ----- values: the shapes every version shares, then 0.4.0's own ----

super::shapes::shared_shapes!(types: gt, host: gh, catalog: gk, policy: gp, agents: ga);

records! {
    gt::ToolDefinition => shim::ToolDefinition {
        name, description, parameters, output_schema, prompt_snippet, prompt_guidelines,
    }
    gt::HookResult => shim::HookResult {
        disposition, context, notifications, provider_retry, persistence_metadata,
        post_mutation, cache_warming, compaction_frames, provider_payload, provider_headers,
    }
    gt::HeaderEdit => shim::HeaderEdit { name, values }
}

cases! {
    gt::CacheWarmingAction => shim::CacheWarmingAction { Warm, Stop }
}

records! {
    shim::CompositionContext => gc::CompositionContext { tools, store, limits }
    shim::CompositionLimits => gc::CompositionLimits { timeout_ms, max_calls }
    shim::CompositionUpdate => gc::CompositionUpdate { sequence, result }
}

// ----- the guest's exports -------------------------------------------

super::exports::shared_exports!(types: gt);

// ----- the host side of the imports ----------------------------------

super::imports::shared_imports!(types: gt, host: gh, catalog: gk, policy: gp, agents: ga);

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
