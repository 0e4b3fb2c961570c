//! What the current octet host offers every API 0.2 process: the features
//! it requires and the optional ones, in the host's order. The 0.4 offer
//! ([`super::offer_v04`]) starts from this list; the params builder uses
//! both, so the lists live below them.

/// The features every API 0.2 `initialize` requires
/// (docs/protocol.md#negotiation).
pub const REQUIRED_FEATURES: [&str; 2] = ["request_cancellation", "content_parts"];

/// The optional features the current octet host offers every API 0.2
/// extension (docs/protocol.md#negotiation), in the host's order.
pub const HOST_OPTIONAL_FEATURES: [&str; 21] = [
    "request_progress",
    "progress_decoration",
    "artifacts",
    "lifecycle_events",
    "policy_intents",
    "dynamic_tools",
    "runtime_commands",
    "semantic_ui",
    "editor_handoff",
    "terminal_input",
    "autocomplete",
    "dynamic_tool_renderers",
    "composer",
    "shortcuts",
    "session_entries",
    "message_injection",
    "lifecycle_events_v2",
    "active_tools",
    "terminal_handoff",
    "session_context",
    "model_catalog",
];
