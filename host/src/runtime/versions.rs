//! Which `octet:extension` WIT version a component was built against, and
//! its linked, pre-instantiated form for that version.
//!
//! A component names the version in the guest interface it exports
//! (`octet:extension/guest@0.2.0`); the shim links exactly that version's
//! imports, so a component may never mix versions. Every version's calls
//! take and return the shim's own types ([`super::types`]).

use super::bridge::Bridge;
use super::store::StoreState;
use super::types::*;
use super::{v0_2, v0_4};
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Engine, Store};

/// The WIT versions the shim loads, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitVersion {
    V0_2,
    V0_4,
}

impl WitVersion {
    pub const ALL: [WitVersion; 2] = [WitVersion::V0_2, WitVersion::V0_4];

    pub fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_2 => "0.2.0",
            WitVersion::V0_4 => "0.4.0",
        }
    }

    /// The guest interface a component of this version exports.
    pub fn guest_interface(self) -> String {
        format!("octet:extension/guest@{}", self.as_str())
    }

    /// The version whose guest interface `component` exports.
    pub fn of(engine: &Engine, component: &Component) -> anyhow::Result<WitVersion> {
        let exports: Vec<String> = component
            .component_type()
            .exports(engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        WitVersion::ALL
            .into_iter()
            .rev()
            .find(|version| exports.contains(&version.guest_interface()))
            .ok_or_else(|| {
                let octet: Vec<&str> = exports
                    .iter()
                    .map(String::as_str)
                    .filter(|name| name.starts_with("octet:"))
                    .collect();
                anyhow::anyhow!(
                    "the component exports no octet:extension guest interface octet-wasm knows ({}); it exports {}: rebuild it against wit/ (0.2.0) or wit/0.4.0",
                    WitVersion::ALL.map(WitVersion::guest_interface).join(", "),
                    if octet.is_empty() {
                        "no octet interface at all".to_owned()
                    } else {
                        octet.join(", ")
                    }
                )
            })
    }

    /// Adds this version's octet imports to `linker`.
    pub fn add_to_linker<B: Bridge>(
        self,
        linker: &mut Linker<StoreState<B>>,
    ) -> anyhow::Result<()> {
        match self {
            WitVersion::V0_2 => v0_2::add_to_linker(linker),
            WitVersion::V0_4 => v0_4::add_to_linker(linker),
        }
    }
}

/// A linked component, ready to instantiate.
pub enum Pre<T: 'static> {
    V0_2(v0_2::ExtensionPre<T>),
    V0_4(v0_4::ExtensionPre<T>),
}

impl<B: Bridge> Pre<StoreState<B>> {
    /// Checks that `pre` exports `version`'s guest interface.
    pub fn new(version: WitVersion, pre: InstancePre<StoreState<B>>) -> anyhow::Result<Self> {
        let missing = |err: wasmtime::Error| {
            anyhow::anyhow!(
                "the component does not export {}: {err:#}",
                version.guest_interface()
            )
        };
        Ok(match version {
            WitVersion::V0_2 => Pre::V0_2(v0_2::ExtensionPre::new(pre).map_err(missing)?),
            WitVersion::V0_4 => Pre::V0_4(v0_4::ExtensionPre::new(pre).map_err(missing)?),
        })
    }

    pub fn version(&self) -> WitVersion {
        match self {
            Pre::V0_2(_) => WitVersion::V0_2,
            Pre::V0_4(_) => WitVersion::V0_4,
        }
    }

    pub fn component(&self) -> &Component {
        match self {
            Pre::V0_2(pre) => pre.instance_pre().component(),
            Pre::V0_4(pre) => pre.instance_pre().component(),
        }
    }

    pub async fn instantiate_async(
        &self,
        store: &mut Store<StoreState<B>>,
    ) -> wasmtime::Result<Exports> {
        Ok(match self {
            Pre::V0_2(pre) => Exports::V0_2(v0_2::Exports(pre.instantiate_async(store).await?)),
            Pre::V0_4(pre) => Exports::V0_4(v0_4::Exports(pre.instantiate_async(store).await?)),
        })
    }
}

/// A live guest's exports.
pub enum Exports {
    V0_2(v0_2::Exports),
    V0_4(v0_4::Exports),
}

/// Calls the same export on whichever version the guest is.
macro_rules! forward {
    ($self:ident . $call:ident ($($arg:expr),*)) => {
        match $self {
            Exports::V0_2(guest) => guest.$call($($arg),*).await,
            Exports::V0_4(guest) => guest.$call($($arg),*).await,
        }
    };
}

type Answer<T> = wasmtime::Result<Result<T, GuestError>>;

impl Exports {
    pub async fn describe<T: Send>(&self, store: &mut Store<T>) -> wasmtime::Result<Description> {
        forward!(self.describe(store))
    }

    pub async fn init<T: Send>(&self, store: &mut Store<T>, params: &InitParams) -> Answer<()> {
        forward!(self.init(store, params))
    }

    pub async fn call_tool<T: Send>(
        &self,
        store: &mut Store<T>,
        call: ToolCall,
        cx: CallContext,
    ) -> Answer<ToolResult> {
        forward!(self.call_tool(store, call, cx))
    }

    pub async fn execute_command<T: Send>(
        &self,
        store: &mut Store<T>,
        name: &str,
        arguments: &[String],
        cx: CallContext,
    ) -> Answer<CommandResult> {
        forward!(self.execute_command(store, name, arguments, cx))
    }

    pub async fn run_hook<T: Send>(
        &self,
        store: &mut Store<T>,
        hook: &str,
        payload: String,
        cx: CallContext,
    ) -> Answer<HookResult> {
        forward!(self.run_hook(store, hook, payload, cx))
    }

    pub async fn collect_context<T: Send>(
        &self,
        store: &mut Store<T>,
        prompt: Option<&str>,
        cx: CallContext,
    ) -> Answer<Vec<ContextItem>> {
        forward!(self.collect_context(store, prompt, cx))
    }

    pub async fn collect_status<T: Send>(
        &self,
        store: &mut Store<T>,
        surface: &str,
        cx: CallContext,
    ) -> Answer<Option<StatusItem>> {
        forward!(self.collect_status(store, surface, cx))
    }

    pub async fn render_tool<T: Send>(
        &self,
        store: &mut Store<T>,
        request: RenderRequest,
        cx: CallContext,
    ) -> Answer<Vec<Segment>> {
        forward!(self.render_tool(store, request, cx))
    }

    pub async fn collect_menu<T: Send>(
        &self,
        store: &mut Store<T>,
        cx: CallContext,
    ) -> Answer<Option<String>> {
        forward!(self.collect_menu(store, cx))
    }

    pub async fn on_lifecycle<T: Send>(
        &self,
        store: &mut Store<T>,
        event: LifecycleEvent,
    ) -> wasmtime::Result<()> {
        forward!(self.on_lifecycle(store, event))
    }

    pub async fn on_shutdown<T: Send>(&self, store: &mut Store<T>) -> Answer<()> {
        forward!(self.on_shutdown(store))
    }
}
