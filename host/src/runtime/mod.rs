//! The WebAssembly side: engine, compiled-component cache, store limits,
//! instances and the WASI sandbox.
//!
//! This layer knows nothing of JSON-RPC. It loads a component built against
//! our WIT, makes sandboxed instances of it and calls their exports; what a
//! guest asks of the host goes through the [`Bridge`] trait, which the
//! protocol layer implements.

pub mod cache;
pub mod component_file;
use component_file::ComponentFile;
mod convert;
pub mod engine;
pub(crate) mod exports;
pub(crate) mod imports;
pub(crate) mod instance;
pub(crate) mod limits;
pub(crate) mod links;
pub mod offline;
pub(crate) mod output;
pub(crate) mod pending;
mod procfs;
pub(crate) mod sandbox;
pub(crate) mod shapes;
pub(crate) mod store;
pub mod types;
pub(crate) mod v0_2;
pub(crate) mod v0_4;
pub(crate) mod versions;

pub use instance::{Fault, Instance};
pub use limits::Limits;
pub use sandbox::{FsAccess, Sandbox};
pub use versions::WitVersion;

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

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

/// A loaded component, ready to make instances.
pub struct Runtime<B: Bridge> {
    engine: Engine,
    pre: versions::Pre<store::StoreState<B>>,
    limits: Limits,
    /// Keeps the epoch ticker alive exactly as long as the runtime.
    _ticker: engine::EpochTicker,
}

/// Where a component came from, for logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadSource {
    /// Loaded from our compiled-component cache.
    Cache,
    /// Compiled now (and stored in the cache when one is configured).
    Compiled,
}

impl LoadSource {
    pub fn as_str(self) -> &'static str {
        match self {
            LoadSource::Cache => "cache",
            LoadSource::Compiled => "compiled",
        }
    }
}

impl<B: Bridge> Runtime<B> {
    /// Loads `component` (compiling it or reading the cache), links the
    /// imports and pre-instantiates it, so making an instance later costs
    /// microseconds.
    pub fn load(
        file: &ComponentFile,
        origin: &Path,
        limits: Limits,
        cache: Option<&cache::Cache>,
    ) -> anyhow::Result<(Self, LoadSource)> {
        let engine = engine::build(&limits)?;
        let (component, source) =
            cache::load_or_compile(&engine, &file.bytes, &file.digest, origin, cache)?;
        let pre = link(&engine, &component)?;
        let ticker = engine::EpochTicker::start(&engine, limits.epoch_tick);
        Ok((
            Runtime {
                engine,
                pre,
                limits,
                _ticker: ticker,
            },
            source,
        ))
    }

    /// Makes a fresh sandboxed instance.
    pub async fn instantiate(
        &self,
        bridge: Arc<B>,
        sandbox: &Sandbox,
    ) -> Result<Instance<B>, Fault> {
        Instance::new(&self.engine, &self.pre, bridge, sandbox, &self.limits).await
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The engine and compiled component, for reading the component's
    /// import and export names (author tools).
    pub fn component(&self) -> (&Engine, &Component) {
        (&self.engine, self.pre.component())
    }

    /// The WIT version the component was built against.
    pub fn wit_version(&self) -> WitVersion {
        self.pre.version()
    }
}

/// Links `component` with WASI and the octet imports of the WIT version
/// its guest export names, never another version's: a component that
/// imports a different version than it exports does not link.
fn link<B: Bridge>(
    engine: &Engine,
    component: &Component,
) -> anyhow::Result<versions::Pre<store::StoreState<B>>> {
    let version = WitVersion::of(engine, component)?;
    let mut linker: Linker<store::StoreState<B>> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)
        .map_err(|err| anyhow::anyhow!("cannot link WASI: {err}"))?;
    links::refuse_links(&mut linker)
        .map_err(|err| anyhow::anyhow!("cannot replace the WASI link calls: {err}"))?;
    version.add_to_linker(&mut linker)?;
    let pre = linker.instantiate_pre(component).map_err(|err| {
        anyhow::anyhow!(
            "the component does not fit octet:extension@{} (world `extension`) or imports something the shim does not provide: {err:#}",
            version.as_str()
        )
    })?;
    versions::Pre::new(version, pre)
}

/// Compiles `bytes` into `cache` for the engine `limits` imply (what `run`
/// with the same limits will look up), unless a valid entry is there
/// already. Returns the cache entry.
pub fn precompile(
    file: &ComponentFile,
    origin: &Path,
    limits: &Limits,
    cache: &cache::Cache,
) -> anyhow::Result<std::path::PathBuf> {
    let engine = engine::build(limits)?;
    if cache.holds(&engine, &file.digest) {
        return Ok(cache.entry(&engine, &file.digest));
    }
    let component = Component::new(&engine, &file.bytes).map_err(|err| {
        anyhow::anyhow!(
            "{} is not a valid WebAssembly component: {err:#}",
            origin.display()
        )
    })?;
    // Check it links before caching it, so `compile` reports a component
    // `run` could never start.
    link::<offline::Offline>(&engine, &component)?;
    cache.store(&engine, &file.digest, &component)
}
