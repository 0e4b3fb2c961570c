//! Per-instance resource limits and the limiter that enforces and records
//! them.

use std::time::Duration;

/// Resource limits for every instance. Each default names the fact it
/// comes from.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Linear memory per instance (all memories of the instance together).
    /// Default 256 MiB: room for the protocol's largest single value, a
    /// 20 MiB artifact, several times over, plus an interpreter guest
    /// (componentize-py needs ~20 MiB before user code).
    pub memory_bytes: usize,
    /// Table elements per table. Default 1,000,000: the interpreter guests
    /// (Python, JavaScript) use tables of ~100,000 elements (toolchain.md
    /// §4.2); a million bounds host memory at 8 MiB per table.
    pub table_elements: usize,
    /// Core instances per component instance. Default 64, like the pooling
    /// configuration the interpreter guests were measured with.
    pub instances: usize,
    /// Tables per component instance. Default 64 (same source).
    pub tables: usize,
    /// Memories per component instance. Default 8 (same source).
    pub memories: usize,
    /// Fuel (roughly, wasm instructions) per call; `None` disables fuel,
    /// which costs up to 40% on call-heavy code (toolchain.md §4.4).
    pub fuel: Option<u64>,
    /// How often the epoch advances. 10 ms is a tenth of the shortest
    /// deadline the shim enforces on an ordinary request (render: ~400 ms)
    /// and finer than the 150 ms hook budgets, so deadlines overshoot by at
    /// most one tick.
    pub epoch_tick: Duration,
    /// Epoch interruption (how deadlines and cancellation stop a busy
    /// guest). Always on in the shim; only benchmarks turn it off to
    /// measure what it costs.
    pub epoch_interruption: bool,
    /// Bytes of guest stdout+stderr logged per instance; the rest is
    /// dropped (the guest never blocks or fails on it).
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 256 << 20,
            table_elements: 1_000_000,
            instances: 64,
            tables: 64,
            memories: 8,
            fuel: None,
            epoch_tick: Duration::from_millis(10),
            epoch_interruption: true,
            output_bytes: 64 * 1024,
        }
    }
}

/// Enforces [`Limits`] in a store and remembers what was refused, so a trap
/// that follows a refused growth can be reported as the limit it was.
#[derive(Debug)]
pub struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    instances: usize,
    tables: usize,
    memories: usize,
    /// The largest memory size the guest asked for and was refused.
    pub memory_refused: Option<usize>,
    pub table_refused: Option<usize>,
}

impl Limiter {
    pub fn new(limits: &Limits) -> Self {
        Limiter {
            memory_bytes: limits.memory_bytes,
            table_elements: limits.table_elements,
            instances: limits.instances,
            tables: limits.tables,
            memories: limits.memories,
            memory_refused: None,
            table_refused: None,
        }
    }

    pub fn clear(&mut self) {
        self.memory_refused = None;
        self.table_refused = None;
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.memory_refused = Some(desired);
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.table_elements {
            self.table_refused = Some(desired);
            return Ok(false);
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        self.instances
    }

    fn tables(&self) -> usize {
        self.tables
    }

    fn memories(&self) -> usize {
        self.memories
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::ResourceLimiter;

    #[test]
    fn refusals_are_recorded() {
        let mut limiter = Limiter::new(&Limits {
            memory_bytes: 1 << 20,
            ..Limits::default()
        });
        assert!(limiter.memory_growing(0, 1 << 20, None).unwrap());
        assert!(!limiter.memory_growing(0, 2 << 20, None).unwrap());
        assert_eq!(limiter.memory_refused, Some(2 << 20));
        limiter.clear();
        assert_eq!(limiter.memory_refused, None);
    }
}
