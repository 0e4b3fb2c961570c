//! probe: the one multi-mode adversarial guest octet-wasm's integration
//! tests drive. API-version agnostic; every tool does one thing, named by
//! its tool name, so a test reads as `call("spin", {})`.
//!
//! Declares: `max_concurrency` 4, features `request_progress` and
//! `progress_decoration`, lifecycle handlers for all six events (so also
//! `lifecycle_events`), command `stats`, hooks `before_prompt`,
//! `after_response`, `before_tool_call` (denies tool name `forbidden`) and
//! `after_tool_call`, context, status for `status`, renderers for `echo`
//! and `spin` (the latter never returns).
//!
//! Tools, by area:
//! - outcomes ([`outcomes`]): `echo`, `fail`, `invalid`, `panic`,
//!   `unreachable`, `exit`, `counter`;
//! - time ([`time`]): `spin`, `spin_polite`, `sleep`, `sleep_then_echo`,
//!   `recurse`;
//! - sizes ([`sizes`]): `alloc`, `grow_forever`, `big_result`, `many_parts`,
//!   `nested`, `structured`;
//! - host services ([`services`]): `progress`, `progress_then_fail`,
//!   `decorate`, `notify`, `confirm`, `input`;
//! - API 0.2 service imports ([`catalog_services`], features `artifacts`,
//!   `dynamic_tools`, `secrets`, `policy_intents`, `approvals`):
//!   `artifact`, `dyn_register`, `dyn_unregister`, `dyn_many`,
//!   `dyn_current`, `secret`, `policy`, `present`, plus the dynamic tools `lint` and
//!   `counted` (not in the initial catalog);
//! - child agent sessions ([`agents`], features `agent_sessions` and
//!   `agent_model_selection_v1`): `agent_spawn`, `agent_send`,
//!   `agent_follow_up`, `agent_list`, `agent_wait`, `agent_interrupt`,
//!   `agent_models`;
//! - the sandbox ([`sandbox`]): `read_file`, `list_dir`, `write_file`, `env`,
//!   `connect`, `stdout_flood`, `stderr_flood`;
//! - observation ([`observe`]): `lifecycle_count`, plus the non-tool
//!   surfaces.

use std::cell::Cell;
use std::rc::Rc;

use octet_guest::prelude::*;

mod agents;
mod catalog_services;
mod hostile_json;
mod hostile_output;
mod links;
mod observe;
mod outcomes;
mod sandbox;
mod services;
mod sizes;
mod start;
mod time;

/// Per-instance counters: they reset when the shim replaces the instance,
/// which is how tests see a replacement.
#[derive(Default)]
pub struct Counters {
    /// `counter` calls served by this instance.
    calls: Cell<u64>,
    /// Lifecycle events this instance has seen.
    lifecycle: Cell<u64>,
}

/// An object schema with the given properties, all of them required.
fn object_schema(properties: Value) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map_or(Vec::new(), |p| p.keys().collect());
    json!({"type": "object", "properties": properties, "required": required})
}

fn setup(ext: &mut Extension) {
    start::register(ext);
    let counters = Rc::new(Counters::default());
    ext.max_concurrency(4).uses_progress_decoration();
    outcomes::register(ext, &counters);
    time::register(ext);
    sizes::register(ext);
    services::register(ext);
    sandbox::register(ext);
    links::register(ext);
    observe::register(ext, &counters);
    catalog_services::register(ext);
    agents::register(ext);
    hostile_json::register(ext);
    hostile_output::register(ext);
}

octet_guest::extension!(setup);
