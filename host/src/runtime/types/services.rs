//! The services' own records: tool catalogs, policy, sub-agents and tool
//! composition (`wit/0.4.0/services.wit`).

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogUpdate {
    pub revision: u64,
    pub tools: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent {
    pub kind: String,
    pub operation: String,
    pub target: String,
    pub data_classes: Vec<String>,
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    pub approval_token: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentTool {
    Read,
    Search,
    Edit,
    Write,
    Bash,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSelection {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub reasoning: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnPolicy {
    pub tools: Vec<AgentTool>,
    pub max_concurrent_children: u32,
    pub max_turns: Option<u32>,
    pub max_tokens: Option<u32>,
    pub max_cost_microdollars: Option<u64>,
    pub max_output_bytes: u32,
    pub timeout_ms: Option<u64>,
    pub model_selection: Option<ModelSelection>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnRequest {
    pub task_name: String,
    pub profile: Option<String>,
    pub fingerprint: Option<String>,
    pub message: String,
    pub idempotency_key: String,
    pub policy: SpawnPolicy,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentStatus {
    pub state: String,
    pub output: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawned {
    pub agent_id: String,
    pub agent_path: String,
    pub status: AgentStatus,
    pub details: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteeringDelivery {
    Steering,
    Queued,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steered {
    pub delivered_to: String,
    pub delivery: SteeringDelivery,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowUpDelivery {
    FollowUp,
    NewRun,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowedUp {
    pub agent_id: String,
    pub agent_path: String,
    pub delivery: FollowUpDelivery,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRecord {
    pub agent_id: String,
    pub agent_path: Option<String>,
    pub status: AgentStatus,
    pub details: String,
}

/// The agents a principal owns (`agents.snapshot` in the WIT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSnapshot {
    pub principal: String,
    pub resource_owner: String,
    pub persistence_error: Option<String>,
    pub agents: Vec<AgentRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waited {
    pub timed_out: bool,
    pub snapshot: AgentSnapshot,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted {
    pub agent_id: String,
    pub agent_path: String,
    pub previous_status: String,
    pub interrupt_requested: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub model: String,
    pub provider: String,
    pub display_name: Option<String>,
    pub reasoning: Vec<String>,
    pub context_window: u64,
    pub max_output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelList {
    pub models: Vec<ModelInfo>,
    pub truncated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompositionLimits {
    pub timeout_ms: u64,
    pub max_calls: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompositionContext {
    pub tools: String,
    pub store: String,
    pub limits: CompositionLimits,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompositionUpdate {
    pub sequence: u64,
    pub result: String,
}
