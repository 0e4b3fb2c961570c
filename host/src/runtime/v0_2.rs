//! Bindings for `octet:extension@0.2.0` (released, never edited), so
//! components built against it keep loading.
//!
//! Nothing here decides anything: each import converts its values into the
//! shim's own [`types`](super::types) and calls the same [`Bridge`] method as
//! `v0_4`, and each export call converts the shim's values into
//! 0.2.0 and the answer back. What 0.2.0 cannot express gets its neutral
//! value (no prompt metadata, no 0.4 hook extras).

use super::bridge::Bridge;
use super::convert::Convert;
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

// ----- values: the shapes every version shares, then what 0.2.0 lacks ----

super::shapes::shared_shapes!(types: ot, host: oh, catalog: oc, policy: op, agents: oa);

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
            ..Default::default()
        }
    }
}

// ----- the guest's exports -------------------------------------------

super::exports::shared_exports!(types: ot);

// ----- the host side of the imports ----------------------------------

super::imports::shared_imports!(types: ot, host: oh, catalog: oc, policy: op, agents: oa);
