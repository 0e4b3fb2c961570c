//! A component loaded once per process: compiled or read from the cache,
//! linked with WASI and the octet imports of its own WIT version, and
//! pre-instantiated so every later instance costs microseconds.

use super::bridge::Bridge;
use super::cache::{self, LoadSource};
use super::component_file::ComponentFile;
use super::instance::{Fault, Instance};
use super::limits::Limits;
use super::sandbox::Sandbox;
use super::versions::{self, WitVersion};
use super::{engine, links, offline, store};
use std::path::Path;
use std::sync::Arc;
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

/// A loaded component, ready to make instances.
pub struct Runtime<B: Bridge> {
    engine: Engine,
    pre: versions::Pre<store::StoreState<B>>,
    limits: Limits,
    /// Keeps the epoch ticker alive exactly as long as the runtime.
    _ticker: engine::EpochTicker,
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
