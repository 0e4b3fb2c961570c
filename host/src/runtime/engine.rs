//! The wasmtime engine, built once per process, and its epoch ticker.

use super::limits::Limits;
use std::time::Duration;
use wasmtime::{Config, Engine, InstanceAllocationStrategy};

/// Builds the engine. Fuel changes generated code, so it is part of the
/// engine settings (and therefore of the compiled-cache key).
pub fn build(limits: &Limits) -> anyhow::Result<Engine> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        // Every store yields at each epoch tick, so a busy guest never
        // holds a runtime thread and its call can be abandoned at a
        // deadline or cancellation (docs/choices.md#runtime-safeguards).
        .epoch_interruption(limits.epoch_interruption)
        .consume_fuel(limits.fuel.is_some())
        // Memory is allocated when a store asks for it, which is when the
        // process-wide budget (`limits::MemoryBudget`) is charged. The
        // pooling allocator would instead reserve slots for its maximum
        // instance count up front, outside any store's limiter.
        .allocation_strategy(InstanceAllocationStrategy::OnDemand)
        .parallel_compilation(true);
    Engine::new(&config).map_err(|err| anyhow::anyhow!("cannot create the wasmtime engine: {err}"))
}

/// Advances the engine's epoch on a fixed tick until dropped.
///
/// One ticker serves every store; each store has its own deadline, so
/// interrupting one call never disturbs another
/// (docs/choices.md#runtime-safeguards).
pub struct EpochTicker {
    stop: Option<std::sync::mpsc::Sender<()>>,
}

impl EpochTicker {
    pub fn start(engine: &Engine, tick: Duration) -> EpochTicker {
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let weak = engine.weak();
        let spawned = std::thread::Builder::new()
            .name("octet-wasm-epoch".into())
            .spawn(move || {
                // `recv_timeout` doubles as the sleep: a drop of the sender
                // ends the thread at once instead of after a tick.
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(tick)
                {
                    match weak.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => return,
                    }
                }
            });
        match spawned {
            Ok(_) => EpochTicker { stop: Some(stop) },
            Err(err) => {
                crate::log!(crate::log::Level::Error, "cannot start the epoch ticker; deadlines will not interrupt busy guests", "error" => err.to_string());
                EpochTicker { stop: None }
            }
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.take();
    }
}
