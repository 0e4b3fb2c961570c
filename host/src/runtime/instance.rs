//! One sandboxed instance of the guest: its store, its limits and typed
//! calls into its exports.
//!
//! Results have two levels: the outer `Result` is a [`Fault`] (the guest
//! trapped or could not be entered, and the instance must be dropped); the
//! inner one is the guest's own answer, including its own errors.

use super::bridge::Bridge;
use super::limits::Limits;
use super::limits::{self, Limiter, MemoryRefusal, SetBy};
use super::sandbox::Sandbox;
use super::store::StoreState;
use super::types::*;
use super::versions::{Exports, Pre};
use crate::cancel::CancelToken;
use std::sync::Arc;
use wasmtime::component::ResourceTable;
use wasmtime::{Engine, Store};

pub mod overflow;

/// Why a guest call did not produce an answer. The instance is unusable
/// afterwards.
#[derive(Debug, Clone)]
pub enum Fault {
    /// The guest trapped: panic, `unreachable`, out-of-bounds access, ...
    Trap {
        message: String,
        /// Guest frames, innermost first, with function names where the
        /// component kept its name section.
        backtrace: Vec<String>,
    },
    /// The guest ran out of stack, either of them (see [`overflow`]).
    StackOverflow {
        stack: overflow::Stack,
        /// wasmtime's own name for the trap (for the log: the evidence is
        /// inferred, see [`overflow`]).
        trap: String,
        /// As for [`Fault::Trap`].
        backtrace: Vec<String>,
    },
    /// The guest tried to grow its memory past a limit, then trapped.
    MemoryLimit {
        refusal: MemoryRefusal,
        /// Who set the per-instance cap.
        origin: SetBy,
    },
    /// The call used up its fuel.
    OutOfFuel { fuel: u64, origin: SetBy },
    /// The instance could not be created or its `init` failed.
    Start(String),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Trap { message, .. } => write!(f, "the guest trapped: {message}"),
            Fault::StackOverflow { stack, .. } => f.write_str(&overflow::message(*stack)),
            Fault::MemoryLimit { refusal, origin } => write!(
                f,
                "the guest ran out of memory: it needed {} MiB, past {}; {}",
                refusal.requested.div_ceil(1 << 20),
                limits::memory_limit_text(refusal, *origin),
                limits::raise_memory_text(refusal.scope, *origin)
            ),
            Fault::OutOfFuel { fuel, origin } => write!(
                f,
                "the guest used up its fuel budget of {fuel} per call; {}",
                limits::raise_fuel_text(*origin)
            ),
            Fault::Start(message) => write!(f, "the guest instance could not start: {message}"),
        }
    }
}

/// A live instance of the guest.
pub struct Instance<B: Bridge> {
    store: Store<StoreState<B>>,
    guest: Exports,
    fuel: Option<u64>,
    origins: limits::Origins,
}

/// The guest's own result of a call.
pub type Answer<T> = Result<T, GuestError>;

impl<B: Bridge> Instance<B> {
    pub(super) async fn new(
        engine: &Engine,
        pre: &Pre<StoreState<B>>,
        bridge: Arc<B>,
        sandbox: &Sandbox,
        limits: &Limits,
    ) -> Result<Self, Fault> {
        let wasi = sandbox
            .build()
            .map_err(|err| Fault::Start(format!("{err:#}")))?;
        let state = StoreState {
            wasi,
            table: ResourceTable::new(),
            limiter: Limiter::new(limits),
            bridge,
            scope: None,
            cancel: CancelToken::new(),
        };
        let mut store = Store::new(engine, state);
        store.limiter(|state| &mut state.limiter);
        // Yield to the runtime at every tick: the caller's timers and
        // cancellation can then drop a busy call
        // (docs/choices.md#runtime-safeguards).
        if limits.epoch_interruption {
            store.set_epoch_deadline(1);
            store.epoch_deadline_async_yield_and_update(1);
        }
        if let Some(fuel) = limits.fuel {
            store
                .set_fuel(fuel)
                .map_err(|err| Fault::Start(format!("cannot set fuel: {err}")))?;
        }
        let guest = pre
            .instantiate_async(&mut store)
            .await
            .map_err(|err| classify_start(&store, err, limits.origins.memory))?;
        Ok(Instance {
            store,
            guest,
            fuel: limits.fuel,
            origins: limits.origins,
        })
    }

    /// The instance's linear memory in bytes, kept current by its limiter
    /// (usage receipts read it even while a call runs).
    pub fn memory_gauge(&self) -> Arc<std::sync::atomic::AtomicUsize> {
        self.store.data().limiter.gauge()
    }

    /// Fuel the last call used, when calls are metered.
    pub fn fuel_used(&self) -> Option<u64> {
        let budget = self.fuel?;
        let left = self.store.get_fuel().ok()?;
        Some(budget.saturating_sub(left))
    }

    fn enter(&mut self, scope: Option<B::Scope>, cancel: CancelToken) -> Result<(), Fault> {
        let state = self.store.data_mut();
        state.scope = scope;
        state.cancel = cancel;
        state.limiter.clear();
        if let Some(fuel) = self.fuel {
            self.store
                .set_fuel(fuel)
                .map_err(|err| Fault::Start(format!("cannot set fuel: {err}")))?;
        }
        Ok(())
    }

    fn leave<T>(&mut self, result: wasmtime::Result<T>) -> Result<T, Fault> {
        let state = self.store.data_mut();
        state.scope = None;
        state.cancel = CancelToken::new();
        result.map_err(|err| self.classify(err))
    }

    fn classify(&self, err: wasmtime::Error) -> Fault {
        let limiter = &self.store.data().limiter;
        if let Some(refusal) = limiter.memory_refused {
            return Fault::MemoryLimit {
                refusal,
                origin: self.origins.memory,
            };
        }
        classify_trap(err, self.fuel, self.origins.fuel)
    }

    pub async fn describe(&mut self) -> Result<Description, Fault> {
        self.enter(None, CancelToken::new())?;
        let result = self.guest.describe(&mut self.store).await;
        self.leave(result)
    }

    pub async fn init(&mut self, params: &InitParams) -> Result<Answer<()>, Fault> {
        self.enter(None, CancelToken::new())?;
        let result = self.guest.init(&mut self.store, params).await;
        self.leave(result)
    }

    pub async fn call_tool(
        &mut self,
        scope: B::Scope,
        cancel: CancelToken,
        call: ToolCall,
        cx: CallContext,
    ) -> Result<Answer<ToolResult>, Fault> {
        self.enter(Some(scope), cancel)?;
        let result = self.guest.call_tool(&mut self.store, call, cx).await;
        self.leave(result)
    }

    pub async fn execute_command(
        &mut self,
        scope: B::Scope,
        cancel: CancelToken,
        name: &str,
        arguments: &[String],
        cx: CallContext,
    ) -> Result<Answer<CommandResult>, Fault> {
        self.enter(Some(scope), cancel)?;
        let result = self
            .guest
            .execute_command(&mut self.store, name, arguments, cx)
            .await;
        self.leave(result)
    }

    pub async fn run_hook(
        &mut self,
        scope: B::Scope,
        cancel: CancelToken,
        hook: &str,
        payload: String,
        cx: CallContext,
    ) -> Result<Answer<HookResult>, Fault> {
        self.enter(Some(scope), cancel)?;
        let result = self
            .guest
            .run_hook(&mut self.store, hook, payload, cx)
            .await;
        self.leave(result)
    }

    pub async fn collect_context(
        &mut self,
        scope: B::Scope,
        cancel: CancelToken,
        prompt: Option<&str>,
        cx: CallContext,
    ) -> Result<Answer<Vec<ContextItem>>, Fault> {
        self.enter(Some(scope), cancel)?;
        let result = self
            .guest
            .collect_context(&mut self.store, prompt, cx)
            .await;
        self.leave(result)
    }

    pub async fn collect_status(
        &mut self,
        scope: B::Scope,
        cancel: CancelToken,
        surface: &str,
        cx: CallContext,
    ) -> Result<Answer<Option<StatusItem>>, Fault> {
        self.enter(Some(scope), cancel)?;
        let result = self
            .guest
            .collect_status(&mut self.store, surface, cx)
            .await;
        self.leave(result)
    }

    pub async fn render_tool(
        &mut self,
        scope: B::Scope,
        cancel: CancelToken,
        request: RenderRequest,
        cx: CallContext,
    ) -> Result<Answer<Vec<Segment>>, Fault> {
        self.enter(Some(scope), cancel)?;
        let result = self.guest.render_tool(&mut self.store, request, cx).await;
        self.leave(result)
    }

    pub async fn collect_menu(
        &mut self,
        scope: B::Scope,
        cancel: CancelToken,
        cx: CallContext,
    ) -> Result<Answer<Option<String>>, Fault> {
        self.enter(Some(scope), cancel)?;
        let result = self.guest.collect_menu(&mut self.store, cx).await;
        self.leave(result)
    }

    pub async fn on_lifecycle(
        &mut self,
        cancel: CancelToken,
        event: LifecycleEvent,
    ) -> Result<(), Fault> {
        self.enter(None, cancel)?;
        let result = self.guest.on_lifecycle(&mut self.store, event).await;
        self.leave(result)
    }

    pub async fn on_shutdown(&mut self, cancel: CancelToken) -> Result<Answer<()>, Fault> {
        self.enter(None, cancel)?;
        let result = self.guest.on_shutdown(&mut self.store).await;
        self.leave(result)
    }
}

fn classify_start<B: Bridge>(
    store: &Store<StoreState<B>>,
    err: wasmtime::Error,
    origin: SetBy,
) -> Fault {
    if let Some(refusal) = store.data().limiter.memory_refused {
        return Fault::Start(format!(
            "a new instance needs {} MiB of memory, past {}; {}",
            refusal.requested.div_ceil(1 << 20),
            limits::memory_limit_text(&refusal, origin),
            limits::raise_memory_text(refusal.scope, origin)
        ));
    }
    Fault::Start(format!("{err:#}"))
}

/// A guest function name as a reader wants it: Rust symbols demangled
/// without their hash (`octet_guest::registry::Extension::tool::{{closure}}`),
/// anything else (C, component export names) unchanged.
fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

/// Turns a wasmtime error from a guest call into a [`Fault`], keeping the
/// guest backtrace for the log.
pub fn classify_trap(err: wasmtime::Error, fuel: Option<u64>, fuel_origin: SetBy) -> Fault {
    let backtrace = err
        .downcast_ref::<wasmtime::WasmBacktrace>()
        .map(|trace| {
            trace
                .frames()
                .iter()
                .map(|frame| {
                    let module = frame.module().name().unwrap_or("?");
                    match frame.func_name() {
                        Some(name) => format!("{module}!{}", demangle(name)),
                        None => format!("{module}!<func {}>", frame.func_index()),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    match err.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::OutOfFuel) => Fault::OutOfFuel {
            fuel: fuel.unwrap_or_default(),
            origin: fuel_origin,
        },
        Some(&trap) => match overflow::overflowed(&err, trap) {
            Some(stack) => Fault::StackOverflow {
                stack,
                trap: trap.to_string(),
                backtrace,
            },
            None => Fault::Trap {
                message: trap.to_string(),
                backtrace,
            },
        },
        None => Fault::Trap {
            message: format!("{err:#}"),
            backtrace,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::demangle;

    /// The e2e `trap_records_name_the_guest_functions` found mangled names
    /// in trap records: the name section keeps Rust's mangled symbols.
    #[test]
    fn guest_function_names_are_demangled() {
        assert_eq!(
            demangle(
                "_ZN11octet_guest8registry9Extension4tool28_$u7b$$u7b$closure$u7d$$u7d$17h54d6fc07e82f2303E"
            ),
            "octet_guest::registry::Extension::tool::{{closure}}"
        );
        assert_eq!(
            demangle("octet:extension/guest@0.2.0#call-tool"),
            "octet:extension/guest@0.2.0#call-tool"
        );
        assert_eq!(demangle("__main_void"), "__main_void");
    }
}
