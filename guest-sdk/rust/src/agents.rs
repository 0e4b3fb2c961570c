//! Child agent sessions (API 0.2, feature `agent_sessions`; model selection
//! and [`list_models`] also need `agent_model_selection_v1`).
//!
//! ```ignore
//! use octet_guest::agents::{self, AgentTool, Policy, Spawn};
//! let policy = Policy::new([AgentTool::Read, AgentTool::Search]).max_turns(12);
//! let child = agents::spawn(&Spawn::new("audit-deps", "List outdated dependencies.", "audit-deps:1", policy))?;
//! let done = agents::wait(Some(20_000))?;
//! ```
//!
//! Only while serving a tool call or a command: the host derives the owner
//! from that request. Declare the features with
//! [`Extension::uses_agents`](crate::Extension::uses_agents) (or
//! [`Extension::uses_agent_model_selection`](crate::Extension::uses_agent_model_selection));
//! the host offers them only where the child-session service is bound. The
//! shim checks every bound (names, fingerprint, message ≤ 128 KiB,
//! idempotency key, policy ceilings, wait 1..=60,000 ms, model query and
//! limit) before anything reaches the host; a refusal is an [`Error`]
//! naming the bound. The host's refusals arrive as JSON-RPC errors:
//! -32002 (not bound, limits, idempotency conflicts, unknown targets),
//! -32000 (its 8 worker slots are busy), -32800 (the parent settled).

use serde_json::Value;

use crate::bindings::octet::extension::agents as imports;
use crate::error::{Error, Result};

pub use imports::{
    AgentStatus, AgentTool, FollowUpDelivery, FollowedUp, ModelInfo, ModelList, ModelSelection,
    Steered, SteeringDelivery,
};

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// A child's ceilings (`max_depth` is always 1). Unset ceilings inherit
/// the parent's.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    tools: Vec<AgentTool>,
    max_concurrent_children: u32,
    max_turns: Option<u32>,
    max_tokens: Option<u32>,
    max_cost_microdollars: Option<u64>,
    max_output_bytes: u32,
    timeout_ms: Option<u64>,
    model_selection: Option<ModelSelection>,
}

impl Policy {
    /// Grants `tools` (non-empty, no duplicates); one concurrent child and
    /// 4096 bytes of returned summary until changed.
    pub fn new(tools: impl IntoIterator<Item = AgentTool>) -> Self {
        Policy {
            tools: tools.into_iter().collect(),
            max_concurrent_children: 1,
            max_turns: None,
            max_tokens: None,
            max_cost_microdollars: None,
            max_output_bytes: 4096,
            timeout_ms: None,
            model_selection: None,
        }
    }

    /// Active children of this owner, counting the new one (1..=8).
    pub fn max_concurrent_children(mut self, n: u32) -> Self {
        self.max_concurrent_children = n;
        self
    }

    /// Turns (1..=256).
    pub fn max_turns(mut self, n: u32) -> Self {
        self.max_turns = Some(n);
        self
    }

    /// Cumulative session tokens (1000..=64000).
    pub fn max_tokens(mut self, n: u32) -> Self {
        self.max_tokens = Some(n);
        self
    }

    /// Cost in microdollars (1..=50,000,000).
    pub fn max_cost_microdollars(mut self, n: u64) -> Self {
        self.max_cost_microdollars = Some(n);
        self
    }

    /// Bytes of returned summary (512..=16384).
    pub fn max_output_bytes(mut self, n: u32) -> Self {
        self.max_output_bytes = n;
        self
    }

    /// Wall time in ms (5000..=86,400,000).
    pub fn timeout_ms(mut self, ms: u64) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// The child's model (needs `agent_model_selection_v1`); `None`
    /// members inherit.
    pub fn model(mut self, selection: ModelSelection) -> Self {
        self.model_selection = Some(selection);
        self
    }

    fn to_wit(&self) -> imports::SpawnPolicy {
        imports::SpawnPolicy {
            tools: self.tools.clone(),
            max_concurrent_children: self.max_concurrent_children,
            max_turns: self.max_turns,
            max_tokens: self.max_tokens,
            max_cost_microdollars: self.max_cost_microdollars,
            max_output_bytes: self.max_output_bytes,
            timeout_ms: self.timeout_ms,
            model_selection: self.model_selection.clone(),
        }
    }
}

/// What [`spawn`] starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Spawn {
    task_name: String,
    profile: Option<String>,
    fingerprint: Option<String>,
    message: String,
    idempotency_key: String,
    policy: Policy,
}

impl Spawn {
    /// A child named `task_name` (1..=48 of `[a-z0-9_-]`) with the initial
    /// task `message` (≤ 128 KiB). The same `idempotency_key` (1..=256
    /// bytes) with identical input returns the original child, so derive it
    /// from what makes the task unique (e.g. the call and the task name).
    pub fn new(
        task_name: impl Into<String>,
        message: impl Into<String>,
        idempotency_key: impl Into<String>,
        policy: Policy,
    ) -> Self {
        Spawn {
            task_name: task_name.into(),
            profile: None,
            fingerprint: None,
            message: message.into(),
            idempotency_key: idempotency_key.into(),
            policy,
        }
    }

    /// A profile (same rule as the task name).
    pub fn profile(mut self, profile: impl Into<String>) -> Self {
        self.profile = Some(profile.into());
        self
    }

    /// Opaque recovery metadata: exactly 64 lowercase hex characters.
    pub fn fingerprint(mut self, fingerprint: impl Into<String>) -> Self {
        self.fingerprint = Some(fingerprint.into());
        self
    }

    fn to_wit(&self) -> imports::SpawnRequest {
        imports::SpawnRequest {
            task_name: self.task_name.clone(),
            profile: self.profile.clone(),
            fingerprint: self.fingerprint.clone(),
            message: self.message.clone(),
            idempotency_key: self.idempotency_key.clone(),
            policy: self.policy.to_wit(),
        }
    }
}

/// A started child.
#[derive(Debug, Clone, PartialEq)]
pub struct Spawned {
    /// The child's id (either id may be used as a target).
    pub agent_id: String,
    /// The child's path.
    pub agent_path: String,
    /// Its status when spawned.
    pub status: AgentStatus,
    /// The host's complete result (effective policy, timestamps, ...).
    pub details: Value,
}

/// One child in a [`Snapshot`].
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRecord {
    /// The child's id.
    pub agent_id: String,
    /// The child's path, when the host sent it.
    pub agent_path: Option<String>,
    /// Its status.
    pub status: AgentStatus,
    /// The host's complete record (task name, usage, recent tools, ...).
    pub details: Value,
}

/// The children of this extension and owner.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The extension principal (path-free).
    pub principal: String,
    /// The durable owner string (the session id).
    pub resource_owner: String,
    /// A persistence diagnostic, if any.
    pub persistence_error: Option<Value>,
    /// Roots spawned by this extension and owner, and their descendants.
    pub agents: Vec<AgentRecord>,
}

/// What [`wait`] saw.
#[derive(Debug, Clone, PartialEq)]
pub struct Waited {
    /// Whether the deadline passed with children still active.
    pub timed_out: bool,
    /// The children when the wait ended.
    pub snapshot: Snapshot,
}

/// What [`interrupt`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct Interrupted {
    /// The child's id.
    pub agent_id: String,
    /// The child's path.
    pub agent_path: String,
    /// Opaque.
    pub previous_status: Value,
    /// Whether an interrupt was actually requested (not already settled).
    pub interrupt_requested: bool,
}

/// Whether `status` is `pending` or `running` (unknown states count as
/// settled).
pub fn is_active(status: &AgentStatus) -> bool {
    matches!(status.state.as_str(), "pending" | "running")
}

fn snapshot(snapshot: imports::Snapshot) -> Snapshot {
    Snapshot {
        principal: snapshot.principal,
        resource_owner: snapshot.resource_owner,
        persistence_error: snapshot.persistence_error.as_deref().map(json),
        agents: snapshot
            .agents
            .into_iter()
            .map(|agent| AgentRecord {
                agent_id: agent.agent_id,
                agent_path: agent.agent_path,
                status: agent.status,
                details: json(&agent.details),
            })
            .collect(),
    }
}

/// Starts a child session for the tool call or command being served.
pub fn spawn(request: &Spawn) -> Result<Spawned> {
    imports::spawn(&request.to_wit())
        .map(|spawned| Spawned {
            agent_id: spawned.agent_id,
            agent_path: spawned.agent_path,
            status: spawned.status,
            details: json(&spawned.details),
        })
        .map_err(Error::from_wit)
}

/// Steers the running child `target` (an agent id or path) with `message`
/// (non-empty, ≤ 128 KiB).
pub fn send(target: &str, message: &str) -> Result<Steered> {
    imports::send(target, message).map_err(Error::from_wit)
}

/// Queues a follow-up for `target`, or resumes it as a new run when it had
/// settled.
pub fn follow_up(target: &str, message: &str) -> Result<FollowedUp> {
    imports::follow_up(target, message).map_err(Error::from_wit)
}

/// The children of this extension and owner.
pub fn list() -> Result<Snapshot> {
    imports::list_agents()
        .map(snapshot)
        .map_err(Error::from_wit)
}

/// Waits until no child is pending or running, or `timeout_ms` (1..=60,000;
/// `None`: the host's 30,000) passed.
pub fn wait(timeout_ms: Option<u32>) -> Result<Waited> {
    imports::wait(timeout_ms)
        .map(|waited| Waited {
            timed_out: waited.timed_out,
            snapshot: snapshot(waited.snapshot),
        })
        .map_err(Error::from_wit)
}

/// Interrupts `target` and its descendants.
pub fn interrupt(target: &str) -> Result<Interrupted> {
    imports::interrupt(target)
        .map(|done| Interrupted {
            agent_id: done.agent_id,
            agent_path: done.agent_path,
            previous_status: json(&done.previous_status),
            interrupt_requested: done.interrupt_requested,
        })
        .map_err(Error::from_wit)
}

/// The models a child may select (needs `agent_model_selection_v1`):
/// `query` is a case-insensitive substring (≤ 128 bytes), `limit` 1..=100
/// (`None`: 50).
pub fn list_models(query: Option<&str>, limit: Option<u32>) -> Result<ModelList> {
    imports::list_models(query, limit).map_err(Error::from_wit)
}
