//! Resource limits: per instance, for the whole process, and the limiter
//! that enforces and records them in each store.
//!
//! The extension's author asks for limits (`run` arguments, the component's
//! metadata section); the user's ceilings (`crate::policy`) have already
//! clamped them by the time they arrive here. Memory has two levels: each
//! instance has its own cap, and every store of the process draws from one
//! [`MemoryBudget`], so a guest cannot multiply its memory by declaring a
//! large pool.

use super::sandbox::FsAccess;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// Memory shared by every store of the process: linear memories and
    /// tables of all instances together (the user's `memory_mib`). Clones
    /// of these limits share it.
    pub process_memory: Arc<MemoryBudget>,
    /// Table elements per table. Default 1,000,000: the interpreter guests
    /// (Python, JavaScript) were measured to use tables of ~100,000
    /// elements; a million bounds host memory at 8 MiB per table.
    pub table_elements: usize,
    /// Core instances per component instance. Default 64, like the pooling
    /// configuration the interpreter guests were measured with.
    pub instances: usize,
    /// Tables per component instance. Default 64 (same source).
    pub tables: usize,
    /// Memories per component instance. Default 8 (same source).
    pub memories: usize,
    /// Fuel (roughly, wasm instructions) per call; `None` disables fuel,
    /// which costs up to 40% on call-heavy code (measured).
    pub fuel: Option<u64>,
    /// Who chose `memory_bytes` and `fuel`, so an error about them tells
    /// the reader who can raise them.
    pub origins: Origins,
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
    /// The most of each capability the user lets any sandbox have; the
    /// manifest's `[capabilities]` are granted up to this.
    pub capabilities: CapabilityLimit,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 256 << 20,
            process_memory: MemoryBudget::new(256 << 20),
            table_elements: 1_000_000,
            instances: 64,
            tables: 64,
            memories: 8,
            fuel: None,
            origins: Origins::default(),
            epoch_tick: Duration::from_millis(10),
            epoch_interruption: true,
            output_bytes: 64 * 1024,
            capabilities: CapabilityLimit::default(),
        }
    }
}

/// Who set a limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SetBy {
    /// The user's ceiling (their policy file, or the built-in one): only
    /// the user can raise it, in the policy file.
    #[default]
    User,
    /// The extension asked for less than the user's ceiling (its `run`
    /// arguments or metadata section).
    Extension,
}

/// Who set each limit an error can name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Origins {
    pub memory: SetBy,
    pub fuel: SetBy,
}

/// The most of each capability a sandbox may be given, whatever the
/// manifest asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapabilityLimit {
    /// The widest filesystem access.
    pub filesystem: FsAccess,
    /// Whether network access may be granted at all.
    pub network: bool,
    /// The environment variables that may reach a guest; `None`: any the
    /// manifest names.
    pub environment: Option<BTreeSet<String>>,
}

impl Default for CapabilityLimit {
    /// Everything the manifest asks: the user consented to it there.
    fn default() -> Self {
        CapabilityLimit {
            filesystem: FsAccess::Unrestricted,
            network: true,
            environment: None,
        }
    }
}

/// Bytes of host memory one table element takes (wasmtime stores a
/// pointer per element).
const TABLE_ELEMENT_BYTES: usize = std::mem::size_of::<usize>();

/// One process-wide pool of guest memory, drawn on by every store's
/// [`Limiter`] and given back when the store is dropped.
///
/// What it counts is what the guests were granted (linear memory sizes and
/// table storage), an upper bound of what they can make resident. wasmtime
/// allocates on demand here (the engine does not use the pooling
/// allocator), so nothing is committed before a store asks for it; the
/// address space each memory reserves is not memory and is not counted.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: usize,
    used: AtomicUsize,
}

impl MemoryBudget {
    pub fn new(limit: usize) -> Arc<MemoryBudget> {
        Arc::new(MemoryBudget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes currently granted to all stores together.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Acquire)
    }

    /// Takes `bytes` from the budget, or nothing when they do not fit.
    fn try_charge(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok()
    }

    fn release(&self, bytes: usize) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(bytes))
            });
    }
}

/// Which limit refused a memory growth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryScope {
    /// The instance's own cap.
    Instance,
    /// The process-wide budget, shared with the other instances.
    Process,
}

/// A memory growth the limiter refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryRefusal {
    pub scope: MemoryScope,
    /// The size the memory would have had, in bytes.
    pub requested: usize,
    /// The limit that refused it, in bytes.
    pub limit: usize,
}

/// Enforces [`Limits`] in a store and remembers what was refused, so a trap
/// that follows a refused growth can be reported as the limit it was.
///
/// Everything it grants is charged to the process budget and given back
/// when the store (and with it this limiter) is dropped: an instance that
/// is replaced after a trap or an abandoned call returns its memory.
#[derive(Debug)]
pub struct Limiter {
    memory_bytes: usize,
    table_elements: usize,
    instances: usize,
    tables: usize,
    memories: usize,
    budget: Arc<MemoryBudget>,
    origin: SetBy,
    /// Linear memory of this store, all memories together.
    store_memory: usize,
    /// `store_memory`, shared with whoever watches it (usage receipts).
    gauge: Arc<AtomicUsize>,
    /// Bytes this store holds in the process budget.
    charged: usize,
    /// The growth the current call was refused first, if any.
    pub memory_refused: Option<MemoryRefusal>,
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
            budget: limits.process_memory.clone(),
            origin: limits.origins.memory,
            store_memory: 0,
            gauge: Arc::new(AtomicUsize::new(0)),
            charged: 0,
            memory_refused: None,
            table_refused: None,
        }
    }

    /// Forgets the refusals of the previous call.
    pub fn clear(&mut self) {
        self.memory_refused = None;
        self.table_refused = None;
    }

    /// Bytes this store holds in the process budget.
    #[cfg(test)]
    fn charged(&self) -> usize {
        self.charged
    }

    /// The store's linear memory in bytes, kept current as it grows (a
    /// wasm memory never shrinks, so this is also its peak).
    pub fn gauge(&self) -> Arc<AtomicUsize> {
        self.gauge.clone()
    }

    fn charge(&mut self, bytes: usize) -> bool {
        if !self.budget.try_charge(bytes) {
            return false;
        }
        self.charged += bytes;
        true
    }

    fn refuse_memory(&mut self, refusal: MemoryRefusal) {
        if self.memory_refused.is_none() {
            // Once per call: a guest retrying in a loop would flood the log;
            // and the guest causes it, so it is charged to the guest budget.
            crate::guest_log!(crate::log::Level::Warning, "guest memory growth refused",
                "limit" => memory_limit_text(&refusal, self.origin),
                "requested_mib" => refusal.requested.div_ceil(1 << 20),
                "process_in_use_mib" => self.budget.used() >> 20,
                "raise_with" => raise_memory_text(refusal.scope, self.origin));
        }
        self.memory_refused.get_or_insert(refusal);
    }
}

impl Drop for Limiter {
    fn drop(&mut self) {
        self.budget.release(self.charged);
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // Past the memory's own declared maximum wasmtime fails the growth
        // after asking us; refusing it here keeps it out of the budget (no
        // hook says whether an approved growth then happened).
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        let added = desired.saturating_sub(current);
        let total = self.store_memory.saturating_add(added);
        if total > self.memory_bytes {
            self.refuse_memory(MemoryRefusal {
                scope: MemoryScope::Instance,
                requested: total,
                limit: self.memory_bytes,
            });
            return Ok(false);
        }
        if !self.charge(added) {
            self.refuse_memory(MemoryRefusal {
                scope: MemoryScope::Process,
                requested: total,
                limit: self.budget.limit(),
            });
            return Ok(false);
        }
        self.store_memory = total;
        self.gauge.store(total, Ordering::Relaxed);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|max| desired > max) {
            return Ok(false);
        }
        if desired > self.table_elements {
            self.table_refused = Some(desired);
            return Ok(false);
        }
        let added = desired.saturating_sub(current);
        if !self.charge(added.saturating_mul(TABLE_ELEMENT_BYTES)) {
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

/// The limit a refusal hit, as a reader wants it.
pub fn memory_limit_text(refusal: &MemoryRefusal, origin: SetBy) -> String {
    let mib = refusal.limit >> 20;
    match (refusal.scope, origin) {
        (MemoryScope::Process, _) => {
            format!("the memory ceiling of {mib} MiB for all of the guest's instances together")
        }
        (MemoryScope::Instance, SetBy::User) => {
            format!("the memory ceiling of {mib} MiB per instance")
        }
        (MemoryScope::Instance, SetBy::Extension) => {
            format!("the memory limit of {mib} MiB per instance that the extension set for itself")
        }
    }
}

/// Who raises a memory limit, and how.
pub fn raise_memory_text(scope: MemoryScope, origin: SetBy) -> String {
    let policy = format!("`memory_mib` in {}", crate::user_dirs::POLICY_FILE);
    match (scope, origin) {
        (MemoryScope::Instance, SetBy::Extension) => format!(
            "the extension raises it with `--memory-mib` or its metadata section, up to the user's ceiling ({policy})"
        ),
        _ => format!("the user raises it with {policy}"),
    }
}

/// Who raises the fuel budget, and how.
pub fn raise_fuel_text(origin: SetBy) -> String {
    let policy = format!("`fuel` in {}", crate::user_dirs::POLICY_FILE);
    match origin {
        SetBy::User => format!("the user raises it with {policy}"),
        SetBy::Extension => format!(
            "the extension raises it with `--fuel` or its metadata section, up to the user's ceiling ({policy})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::ResourceLimiter;

    const MIB: usize = 1 << 20;

    fn limits(instance_mib: usize, process_mib: usize) -> Limits {
        Limits {
            memory_bytes: instance_mib * MIB,
            process_memory: MemoryBudget::new(process_mib * MIB),
            ..Limits::default()
        }
    }

    #[test]
    fn refusals_are_recorded() {
        let mut limiter = Limiter::new(&limits(1, 256));
        assert!(limiter.memory_growing(0, MIB, None).unwrap());
        assert!(!limiter.memory_growing(MIB, 2 * MIB, None).unwrap());
        assert_eq!(
            limiter.memory_refused,
            Some(MemoryRefusal {
                scope: MemoryScope::Instance,
                requested: 2 * MIB,
                limit: MIB
            })
        );
        limiter.clear();
        assert_eq!(limiter.memory_refused, None);
    }

    #[test]
    fn all_memories_of_a_store_count_against_its_cap() {
        let mut limiter = Limiter::new(&limits(3, 256));
        assert!(limiter.memory_growing(0, 2 * MIB, None).unwrap());
        // A second memory of 2 MiB would make 4 MiB in the store.
        assert!(!limiter.memory_growing(0, 2 * MIB, None).unwrap());
        assert!(limiter.memory_growing(0, MIB, None).unwrap());
        assert_eq!(limiter.charged(), 3 * MIB);
        assert_eq!(limiter.gauge().load(Ordering::Relaxed), 3 * MIB);
    }

    #[test]
    fn stores_share_the_process_budget_and_give_it_back_when_dropped() {
        let shared = limits(64, 100);
        let mut first = Limiter::new(&shared);
        let mut second = Limiter::new(&shared);
        assert!(first.memory_growing(0, 60 * MIB, None).unwrap());
        // Within its own cap, but the two together would pass 100 MiB.
        assert!(!second.memory_growing(0, 60 * MIB, None).unwrap());
        assert_eq!(
            second.memory_refused.map(|r| (r.scope, r.limit)),
            Some((MemoryScope::Process, 100 * MIB))
        );
        assert!(second.memory_growing(0, 40 * MIB, None).unwrap());
        assert_eq!(shared.process_memory.used(), 100 * MIB);
        drop(first);
        assert_eq!(shared.process_memory.used(), 40 * MIB);
        assert!(second.memory_growing(40 * MIB, 60 * MIB, None).unwrap());
        drop(second);
        assert_eq!(shared.process_memory.used(), 0);
    }

    #[test]
    fn tables_draw_on_the_budget_too() {
        let shared = limits(256, 1);
        let mut limiter = Limiter::new(&shared);
        let fits = MIB / TABLE_ELEMENT_BYTES;
        assert!(limiter.table_growing(0, fits, None).unwrap());
        assert!(!limiter.table_growing(fits, fits + 1, None).unwrap());
        assert_eq!(limiter.table_refused, Some(fits + 1));
        drop(limiter);
        assert_eq!(shared.process_memory.used(), 0);
    }

    #[test]
    fn growth_past_a_declared_maximum_costs_nothing() {
        let shared = limits(64, 64);
        let mut limiter = Limiter::new(&shared);
        assert!(!limiter.memory_growing(0, 2 * MIB, Some(MIB)).unwrap());
        assert_eq!(limiter.memory_refused, None);
        assert_eq!(shared.process_memory.used(), 0);
    }

    #[test]
    fn messages_name_who_raises_the_limit() {
        let refusal = MemoryRefusal {
            scope: MemoryScope::Process,
            requested: 300 * MIB,
            limit: 256 * MIB,
        };
        assert!(memory_limit_text(&refusal, SetBy::Extension).contains("256 MiB"));
        let user = raise_memory_text(MemoryScope::Process, SetBy::Extension);
        assert!(user.contains("`memory_mib` in ~/.config/octet-wasm/policy.toml"));
        assert!(!user.contains("--memory-mib"), "{user}");
        let own = raise_memory_text(MemoryScope::Instance, SetBy::Extension);
        assert!(own.contains("--memory-mib") && own.contains("memory_mib"));
        assert!(raise_fuel_text(SetBy::User).contains("`fuel` in ~/.config"));
    }
}
