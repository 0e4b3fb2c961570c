//! Host requests turned into guest work (or into an immediate answer).
//!
//! The checks and error texts are the SDK's (docs/protocol.md#requests);
//! requests the guest has no handler for get the SDK's default answer
//! without entering the guest at all.

use super::session::Setup;
use super::tool_call_text;
use crate::protocol::deadlines::Kind;
use crate::protocol::handshake::hook::Hook;
use crate::protocol::imports::tools_catalog::definitions::Catalog;
use crate::protocol::results::encode;
use crate::runtime::types::*;
use crate::wire::message::{Params, RpcError};
use serde_json::{Value, json};

/// One unit of guest work.
#[derive(Debug, Clone)]
pub enum Work {
    Tool {
        call: ToolCall,
        cx: CallContext,
    },
    Command {
        name: String,
        arguments: Vec<String>,
        cx: CallContext,
    },
    Hook {
        hook: String,
        payload: String,
        cx: CallContext,
    },
    Context {
        prompt: Option<String>,
        cx: CallContext,
    },
    Status {
        surface: String,
        cx: CallContext,
    },
    Render {
        request: RenderRequest,
        cx: CallContext,
    },
    Menu {
        cx: CallContext,
    },
}

impl Work {
    /// The execution context of the request.
    pub fn context(&self) -> &CallContext {
        match self {
            Work::Tool { cx, .. }
            | Work::Command { cx, .. }
            | Work::Hook { cx, .. }
            | Work::Context { cx, .. }
            | Work::Status { cx, .. }
            | Work::Render { cx, .. }
            | Work::Menu { cx } => cx,
        }
    }
}

/// What to do with a host request.
pub enum Plan {
    Run {
        work: Work,
        kind: Kind,
        active_parent: bool,
    },
    Answer(Result<Value, RpcError>),
}

/// The guest's declared handlers and catalog.
pub struct Guest {
    pub description: Description,
    pub catalog: Catalog,
    /// The revisioned catalogs of `dynamic_tools` (shared with the session).
    pub dynamic: std::sync::Arc<crate::protocol::imports::tools_catalog::snapshots::ToolCatalogs>,
}

/// The SDK's answer to a method it does not dispatch (`menu/collect`
/// included when the guest serves no menu).
pub fn unknown_method(method: &str) -> RpcError {
    RpcError::method_not_found(format!("unknown method: {method}"))
}

/// Plans `method`; `None` for a method the shim does not know (answered
/// with [`unknown_method`]).
pub fn plan(id: u64, method: &str, params: &Params, guest: &Guest, setup: &Setup) -> Option<Plan> {
    // The hot path: a plain `tool/call` read in place from the host's text.
    if method == "tool/call"
        && let Some(call) = params
            .text()
            .and_then(|text| tool_call_text::read(id, text))
    {
        return Some(
            checked_tool_call(call, guest, setup).unwrap_or_else(|error| Plan::Answer(Err(error))),
        );
    }
    let params = params.value();
    let params = params.as_ref();
    let plan = match method {
        "tool/call" => tool_call(id, params, guest, setup),
        "command/execute" => command(id, params, guest),
        "hook/run" => hook(id, params, guest, setup),
        "context/collect" => context(id, params, guest, setup),
        "status/collect" => status(id, params, guest, setup),
        "tool/render" => render(id, params, guest, setup),
        "menu/collect" if setup.api.negotiates() && guest.description.menu => {
            menu(id, params, setup)
        }
        _ => return None,
    };
    Some(plan.unwrap_or_else(|error| Plan::Answer(Err(error))))
}

fn object<'v>(
    params: &'v Value,
    method: &str,
) -> Result<&'v serde_json::Map<String, Value>, RpcError> {
    params
        .as_object()
        .ok_or_else(|| RpcError::invalid_params(format!("{method} params must be an object")))
}

/// The execution context (docs/protocol.md#execution-context) in WIT form.
pub fn call_context(id: u64, params: &Value) -> CallContext {
    // Read in place: cloning the whole context (every string and map of
    // it) cost more than the rest of planning a call.
    let context = params.get("context");
    let field = |key: &str| context.and_then(|context| context.get(key));
    let text = |key: &str| field(key).and_then(Value::as_str).map(str::to_owned);
    let resource_owner = field("resource_owner").and_then(|owner| {
        Some(ResourceOwner {
            session_id: owner.get("session_id")?.as_str()?.to_owned(),
            extension_instance_id: owner.get("extension_instance_id")?.as_str()?.to_owned(),
            process_generation: owner.get("process_generation")?.as_u64()?,
        })
    });
    CallContext {
        request_id: id,
        workspace: text("workspace").unwrap_or_default(),
        execution_scope: text("execution_scope"),
        resource_owner,
        host: field("host")
            .map(Value::to_string)
            .unwrap_or_else(|| "{}".into()),
    }
}

/// A member's JSON text for the guest, `{}` when absent (encoded from the
/// parsed value without copying it first).
fn json_text(member: Option<&Value>) -> String {
    member.map_or_else(|| "{}".to_owned(), Value::to_string)
}

fn tool_call(id: u64, params: &Value, guest: &Guest, setup: &Setup) -> Result<Plan, RpcError> {
    let map = object(params, "tool/call")?;
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("tool name must be a string"))?;
    let catalog_revision = match map.get("catalog_revision") {
        None => None,
        Some(_) if !setup.has(crate::protocol::handshake::feature::Feature::DynamicTools) => {
            return Err(RpcError::invalid_params(
                "tool/call catalog_revision requires negotiated dynamic_tools",
            ));
        }
        Some(value) => Some(value.as_u64().ok_or_else(|| {
            RpcError::invalid_params(
                "tool/call catalog_revision must be an unsigned 64-bit integer",
            )
        })?),
    };
    let call = ToolCall {
        name: name.to_owned(),
        arguments: json_text(map.get("arguments")),
        catalog_revision,
    };
    checked_tool_call((call, call_context(id, params)), guest, setup)
}

/// A read `tool/call` checked against the catalog it names (the negotiated
/// one, or with `dynamic_tools` the revision it is pinned to).
fn checked_tool_call(
    (call, cx): (ToolCall, CallContext),
    guest: &Guest,
    setup: &Setup,
) -> Result<Plan, RpcError> {
    let name = call.name.as_str();
    if setup.has(crate::protocol::handshake::feature::Feature::DynamicTools) {
        match guest.dynamic.resolve(call.catalog_revision, name) {
            Ok(_) => {}
            Err(crate::protocol::imports::tools_catalog::snapshots::Unresolved::Revision(
                revision,
            )) => {
                return Err(RpcError::invalid_params(format!(
                    "unknown or retired tool catalog revision: {revision}"
                )));
            }
            Err(crate::protocol::imports::tools_catalog::snapshots::Unresolved::Tool) => {
                return Err(RpcError::method_not_found(format!("unknown tool: {name}")));
            }
        }
    } else if !guest.catalog.tools.contains_key(name) {
        return Err(RpcError::method_not_found(format!("unknown tool: {name}")));
    }
    Ok(Plan::Run {
        work: Work::Tool { call, cx },
        kind: Kind::Tool,
        active_parent: true,
    })
}

fn command(id: u64, params: &Value, guest: &Guest) -> Result<Plan, RpcError> {
    let map = object(params, "command/execute")?;
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("command name must be a string"))?;
    if !guest.catalog.commands.contains(name) {
        return Err(RpcError::method_not_found(format!(
            "unknown command: {name}"
        )));
    }
    let arguments = match map.get("arguments") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                RpcError::invalid_params("command arguments must be an array of strings")
            })?,
        Some(_) => {
            return Err(RpcError::invalid_params(
                "command arguments must be an array",
            ));
        }
    };
    Ok(Plan::Run {
        work: Work::Command {
            name: name.to_owned(),
            arguments,
            cx: call_context(id, params),
        },
        kind: Kind::Command,
        active_parent: true,
    })
}

fn hook(id: u64, params: &Value, guest: &Guest, setup: &Setup) -> Result<Plan, RpcError> {
    let map = object(params, "hook/run")?;
    let hook = map
        .get("hook")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("hook must be a string"))?;
    if !setup.contributes.declares_hook(hook) {
        return Err(RpcError::method_not_found(format!(
            "{hook} is not a declared hook"
        )));
    }
    if !guest.description.hooks.iter().any(|h| h == hook) {
        return Ok(Plan::Answer(Ok(encode::default_hook_result())));
    }
    let payload = json_text(map.get("payload"));
    let kind = hook_kind(Hook::parse(hook));
    Ok(Plan::Run {
        work: Work::Hook {
            hook: hook.to_owned(),
            payload,
            cx: call_context(id, params),
        },
        kind,
        active_parent: false,
    })
}

/// The deadline a hook runs under: the hooks with a deadline of their own
/// (docs/protocol.md#deadlines) get it, every other hook, known or not, the
/// common hook deadline.
fn hook_kind(hook: Option<Hook>) -> Kind {
    match hook {
        Some(Hook::BeforePrompt) => Kind::BeforePrompt,
        Some(Hook::AfterResponse) => Kind::AfterResponse,
        Some(Hook::BeforePersistence) => Kind::BeforePersistence,
        Some(Hook::PostMutation) => Kind::PostMutation,
        Some(Hook::CacheWarmingDecision) => Kind::CacheWarming,
        _ => Kind::Hook,
    }
}

fn context(id: u64, params: &Value, guest: &Guest, setup: &Setup) -> Result<Plan, RpcError> {
    object(params, "context/collect")?;
    if !setup.contributes.context {
        return Err(RpcError::method_not_found(
            "context contributions are not declared",
        ));
    }
    if !guest.description.context {
        return Ok(Plan::Answer(Ok(json!([]))));
    }
    let prompt = params
        .get("prompt")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Plan::Run {
        work: Work::Context {
            prompt,
            cx: call_context(id, params),
        },
        kind: Kind::Context,
        active_parent: false,
    })
}

fn status(id: u64, params: &Value, guest: &Guest, setup: &Setup) -> Result<Plan, RpcError> {
    let map = object(params, "status/collect")?;
    let surface = map
        .get("surface")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("status surface must be a string"))?;
    if !setup.contributes.declares_surface(surface) {
        return Err(RpcError::method_not_found(format!(
            "{surface} is not a declared ui"
        )));
    }
    if !guest
        .description
        .status_surfaces
        .iter()
        .any(|s| s == surface)
    {
        return Ok(Plan::Answer(Ok(Value::Null)));
    }
    Ok(Plan::Run {
        work: Work::Status {
            surface: surface.to_owned(),
            cx: call_context(id, params),
        },
        kind: Kind::Status,
        active_parent: false,
    })
}

fn render(id: u64, params: &Value, guest: &Guest, setup: &Setup) -> Result<Plan, RpcError> {
    let map = object(params, "tool/render")?;
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("renderer name must be a string"))?;
    if !setup.contributes.declares_renderer(name) {
        return Err(RpcError::method_not_found(format!(
            "{name} is not a declared tool_renderer"
        )));
    }
    if !guest.description.renderers.iter().any(|r| r == name) {
        return Ok(Plan::Answer(Ok(json!({ "segments": [] }))));
    }
    Ok(Plan::Run {
        work: Work::Render {
            request: RenderRequest {
                name: name.to_owned(),
                arguments: json_text(map.get("arguments")),
                output: map.get("output").and_then(Value::as_str).map(str::to_owned),
                is_error: map
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            },
            cx: call_context(id, params),
        },
        kind: Kind::Render,
        active_parent: false,
    })
}

fn menu(id: u64, params: &Value, setup: &Setup) -> Result<Plan, RpcError> {
    object(params, "menu/collect")?;
    if !setup.contributes.menu {
        return Err(RpcError::method_not_found(
            "menu/collect is not served by this extension",
        ));
    }
    Ok(Plan::Run {
        work: Work::Menu {
            cx: call_context(id, params),
        },
        kind: Kind::Menu,
        active_parent: false,
    })
}

/// The lifecycle notification `method` with `params` in WIT form; `None`
/// for a method that is not a lifecycle event or params that do not decode.
pub fn lifecycle_event(method: &str, params: &Value) -> Option<LifecycleEvent> {
    let kind = match method {
        "session/started" => LifecycleKind::SessionStarted,
        "session/settled" => LifecycleKind::SessionSettled,
        "turn/started" => LifecycleKind::TurnStarted,
        "turn/settled" => LifecycleKind::TurnSettled,
        "tool/started" => LifecycleKind::ToolStarted,
        "tool/settled" => LifecycleKind::ToolSettled,
        _ => return None,
    };
    let text = |key: &str| params.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(LifecycleEvent {
        kind,
        session_id: text("session_id")?,
        run_id: text("run_id"),
        turn_id: text("turn_id"),
        tool_call_id: text("tool_call_id"),
        tool_name: text("tool_name"),
        outcome: text("outcome"),
        duration_ms: params.get("duration_ms").and_then(Value::as_u64),
        reason: text("reason"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_with_their_own_deadline_get_it() {
        assert_eq!(hook_kind(Some(Hook::BeforePrompt)), Kind::BeforePrompt);
        assert_eq!(hook_kind(Some(Hook::AfterResponse)), Kind::AfterResponse);
        assert_eq!(
            hook_kind(Some(Hook::BeforePersistence)),
            Kind::BeforePersistence
        );
        assert_eq!(hook_kind(Some(Hook::PostMutation)), Kind::PostMutation);
        assert_eq!(
            hook_kind(Some(Hook::CacheWarmingDecision)),
            Kind::CacheWarming
        );
        assert_eq!(hook_kind(Some(Hook::BeforeToolCall)), Kind::Hook);
        assert_eq!(hook_kind(Some(Hook::CompactionStrategy)), Kind::Hook);
        assert_eq!(hook_kind(None), Kind::Hook);
    }
}
