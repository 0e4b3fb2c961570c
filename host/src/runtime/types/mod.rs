//! The shim's own vocabulary for what passes between it and a guest.
//!
//! These are plain Rust types, owned by the project: the protocol layer,
//! the author tools and the `Bridge` speak them, and no
//! generated WIT type leaves its per-version module (`v0_2`, `v0_4`). Each
//! version module converts its bindings into these and back, so a new WIT
//! version adds a converter, not a change across the host.
//!
//! Their shape follows the newest WIT (`wit/0.4.0`), whose documentation
//! says what each field means; strings named JSON in the WIT are JSON text
//! the guest wrote, not yet checked.

mod services;

pub use services::*;

/// A JSON-RPC error the guest returns as is (`error.rpc` in the WIT).
///
/// Distinct from the wire's `RpcError`: its code and text are the guest's
/// and are checked before anything of it reaches the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestRpcError {
    pub code: i32,
    pub message: String,
    pub data: Option<String>,
}

/// How a guest call or a host service failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestError {
    InvalidParams(String),
    Cancelled,
    Failed(String),
    Rpc(GuestRpcError),
}

/// The code of the runtime's own refusals (a service its bridge does not
/// serve): equals the wire's `ErrorCode::ServerError` (-32000), named here
/// because the runtime layer does not know the wire (`protocol::lanes`
/// tests that the two agree).
pub const SERVER_ERROR: i32 = -32000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceOwner {
    pub session_id: String,
    pub extension_instance_id: String,
    pub process_generation: u64,
}

/// What the guest learns of the request it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallContext {
    pub request_id: u64,
    pub workspace: String,
    pub execution_scope: Option<String>,
    pub resource_owner: Option<ResourceOwner>,
    pub host: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotifyLevel {
    Info,
    Success,
    Warning,
    Error,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub level: NotifyLevel,
    pub title: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    SystemPrefix,
    SystemSuffix,
    PromptPrefix,
    PromptSuffix,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextItem {
    pub label: String,
    pub content: String,
    pub placement: Placement,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusItem {
    pub surface: String,
    pub text: String,
    pub style_role: Option<String>,
    pub priority: i32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub text: String,
    pub style_role: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    pub artifact_id: String,
    pub mime_type: String,
    pub alt: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AudioPart {
    pub artifact_id: String,
    pub mime_type: String,
    pub transcript: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentPart {
    Text(String),
    Image(ImagePart),
    Audio(AudioPart),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub content: Vec<ContentPart>,
    pub structured_content: Option<String>,
    pub is_error: bool,
    pub metadata: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub parameters: String,
    pub output_schema: Option<String>,
    pub prompt_snippet: Option<String>,
    pub prompt_guidelines: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandDefinition {
    pub name: String,
    pub description: String,
    pub usage: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LifecycleKind {
    SessionStarted,
    SessionSettled,
    TurnStarted,
    TurnSettled,
    ToolStarted,
    ToolSettled,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LifecycleEvent {
    pub kind: LifecycleKind,
    pub session_id: String,
    pub run_id: Option<String>,
    pub turn_id: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_name: Option<String>,
    pub outcome: Option<String>,
    pub duration_ms: Option<u64>,
    pub reason: Option<String>,
}

/// What a guest says it offers, from its `describe` export. The default
/// offers nothing (and a concurrency of 0, which `initialize` reads as 1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Description {
    pub name: String,
    pub tools: Vec<ToolDefinition>,
    pub commands: Vec<CommandDefinition>,
    pub hooks: Vec<String>,
    pub context: bool,
    pub status_surfaces: Vec<String>,
    pub renderers: Vec<String>,
    pub menu: bool,
    pub lifecycle: Vec<LifecycleKind>,
    pub max_concurrency: u32,
    pub features: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitParams {
    pub api_version: String,
    pub features: Vec<String>,
    pub workspace: String,
    pub initialize: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Disposition {
    #[default]
    Continue,
    Deny(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    Retry,
    Stop,
    Delay(u64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistenceMetadata {
    pub value: String,
    pub public: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheWarmingAction {
    Warm,
    Stop,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderEdit {
    pub name: String,
    pub values: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RescanDecision {
    NoRescan,
    RequestRescan(Vec<String>),
}

/// The default is "continue, with nothing added": what an older WIT
/// version's hook result means for every field it lacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookResult {
    pub disposition: Disposition,
    pub context: Vec<ContextItem>,
    pub notifications: Vec<Notification>,
    pub provider_retry: Option<RetryDecision>,
    pub persistence_metadata: Option<PersistenceMetadata>,
    pub post_mutation: Option<RescanDecision>,
    pub cache_warming: Option<CacheWarmingAction>,
    pub compaction_frames: Vec<Vec<u8>>,
    pub provider_payload: Option<String>,
    pub provider_headers: Vec<HeaderEdit>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandResult {
    pub text: String,
    pub notifications: Vec<Notification>,
    pub context: Vec<ContextItem>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub name: String,
    pub arguments: String,
    pub catalog_revision: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderRequest {
    pub name: String,
    pub arguments: String,
    pub output: Option<String>,
    pub is_error: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgressEvent {
    Status(ProgressStatus),
    Output(ProgressOutput),
    Decoration(ProgressDecoration),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressStatus {
    pub message: String,
    pub current: Option<u64>,
    pub total: Option<u64>,
    pub unit: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressOutput {
    pub stream: OutputStream,
    pub data: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressDecoration {
    pub label: String,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    pub prompt: String,
    pub detail: Option<String>,
    pub destructive: bool,
    pub default: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Debug,
    Info,
    Warning,
    Error,
}
