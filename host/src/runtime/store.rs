//! The data every guest store carries. It sits below both the instance
//! (which creates and drives stores) and the per-version bindings (whose
//! generated host traits are implemented on it), so neither imports the
//! other for it.

use super::bridge::Bridge;
use super::limits::Limiter;
use crate::cancel::CancelToken;
use std::sync::Arc;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Data of one store: the WASI context, limits and the request being served.
pub struct StoreState<B: Bridge> {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limiter: Limiter,
    pub(super) bridge: Arc<B>,
    pub(super) scope: Option<B::Scope>,
    pub(super) cancel: CancelToken,
}

impl<B: Bridge> StoreState<B> {
    pub(super) fn scope(&self) -> Option<B::Scope> {
        self.scope.clone()
    }
}

impl<B: Bridge> WasiView for StoreState<B> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
