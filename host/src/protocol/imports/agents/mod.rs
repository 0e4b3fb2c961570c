//! Child agent sessions behind the guest's `agents` import (API 0.2,
//! feature `agent_sessions`; `agent/models` and model selection also need
//! `agent_model_selection_v1`; docs/services.md#agents).
//!
//! Like every service: the feature and the active parent are checked, then
//! every bound of each `agent/*` call, before a frame is written; a refusal
//! names the feature or the bound. The host derives the owner from the
//! parent, so no `resource_owner` is ever sent (on API 0.2 that is a typed
//! refusal). What the host answers (-32002, -32000, -32800, -32602, ...)
//! reaches the guest unchanged; a malformed answer is a failure naming the
//! method.

pub(crate) mod wire;

use super::gate::{self, active_parent, bound};
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::runtime::types::*;
use serde_json::{Value, json};
use std::sync::Arc;
use wire::*;

/// Gate, parent and child request shared by every `agent/*` call.
async fn agent_call(
    session: &Session,
    parent: &RequestState,
    method: &str,
    params: Value,
) -> Result<Value, GuestError> {
    session
        .child_requests
        .call(session.writer(), true, method, params, &parent.cancel)
        .await
        .map_err(|error| gate::child_error(method, error))
}

fn agents_gate(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    what: &str,
) -> Result<Arc<RequestState>, GuestError> {
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::AgentSessions,
        what,
    )?;
    active_parent(scope, what)
}

fn has_model_selection(session: &Session) -> bool {
    session
        .setup()
        .is_some_and(|s| s.has(crate::protocol::handshake::feature::Feature::AgentModelSelection))
}

/// `agents.spawn` (docs/services.md#agent-spawn).
pub async fn spawn(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    request: SpawnRequest,
) -> Result<Spawned, GuestError> {
    let parent = agents_gate(session, scope, "agents.spawn")?;
    let params = spawn_params(parent.id, &request, has_model_selection(session))?;
    let reply = agent_call(session, &parent, "agent/spawn", params).await?;
    let read = Reader {
        method: "agent/spawn",
    };
    let map = read.object(&reply, "the result")?;
    Ok(Spawned {
        agent_id: read.string(map, "agent_id")?,
        agent_path: read.string(map, "agent_path")?,
        status: read.status(map)?,
        details: reply.to_string(),
    })
}

/// `agents.send` (`agent/message`, docs/services.md#agent-steer).
pub async fn steer(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    target: String,
    message: String,
) -> Result<Steered, GuestError> {
    let parent = agents_gate(session, scope, "agents.send")?;
    check_target(&target)?;
    check_message("steering", &message)?;
    let params = json!({ "parent_request_id": parent.id, "target": target, "message": message });
    let reply = agent_call(session, &parent, "agent/message", params).await?;
    let read = Reader {
        method: "agent/message",
    };
    let map = read.object(&reply, "the result")?;
    let delivery = match map.get("delivery").and_then(Value::as_str) {
        Some("steering") => SteeringDelivery::Steering,
        Some("queued") => SteeringDelivery::Queued,
        _ => return Err(read.invalid("delivery must be steering or queued")),
    };
    Ok(Steered {
        delivered_to: read.string(map, "delivered_to")?,
        delivery,
    })
}

/// `agents.follow-up` (`agent/follow_up`, docs/services.md#agent-steer).
pub async fn follow_up(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    target: String,
    message: String,
) -> Result<FollowedUp, GuestError> {
    let parent = agents_gate(session, scope, "agents.follow-up")?;
    check_target(&target)?;
    check_message("follow-up", &message)?;
    let params = json!({ "parent_request_id": parent.id, "target": target, "message": message });
    let reply = agent_call(session, &parent, "agent/follow_up", params).await?;
    let read = Reader {
        method: "agent/follow_up",
    };
    let map = read.object(&reply, "the result")?;
    let delivery = match map.get("delivery").and_then(Value::as_str) {
        Some("follow_up") => FollowUpDelivery::FollowUp,
        Some("new_run") => FollowUpDelivery::NewRun,
        _ => return Err(read.invalid("delivery must be follow_up or new_run")),
    };
    Ok(FollowedUp {
        agent_id: read.string(map, "agent_id")?,
        agent_path: read.string(map, "agent_path")?,
        delivery,
    })
}

/// `agents.list-agents` (`agent/list`, docs/services.md#agent-list).
pub async fn list(
    session: &Session,
    scope: Option<Arc<RequestState>>,
) -> Result<AgentSnapshot, GuestError> {
    let parent = agents_gate(session, scope, "agents.list-agents")?;
    let params = json!({ "parent_request_id": parent.id });
    let reply = agent_call(session, &parent, "agent/list", params).await?;
    Reader {
        method: "agent/list",
    }
    .snapshot(&reply)
}

/// `agents.wait` (`agent/wait`, docs/services.md#agent-list).
pub async fn wait(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    timeout_ms: Option<u32>,
) -> Result<Waited, GuestError> {
    let parent = agents_gate(session, scope, "agents.wait")?;
    let mut params = json!({ "parent_request_id": parent.id });
    if let Some(timeout) = timeout_ms {
        if !WAIT_MS.contains(&timeout) {
            return Err(bound(format!(
                "agent wait timeout_ms is {timeout}; it must be {} to {} ms",
                WAIT_MS.start(),
                WAIT_MS.end()
            )));
        }
        params["timeout_ms"] = json!(timeout);
    }
    let reply = agent_call(session, &parent, "agent/wait", params).await?;
    let read = Reader {
        method: "agent/wait",
    };
    let map = read.object(&reply, "the result")?;
    Ok(Waited {
        timed_out: read.boolean(map, "timed_out")?,
        snapshot: read.snapshot(map.get("snapshot").unwrap_or(&Value::Null))?,
    })
}

/// `agents.interrupt` (`agent/interrupt`, docs/services.md#agent-list).
pub async fn interrupt(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    target: String,
) -> Result<Interrupted, GuestError> {
    let parent = agents_gate(session, scope, "agents.interrupt")?;
    check_target(&target)?;
    let params = json!({ "parent_request_id": parent.id, "target": target });
    let reply = agent_call(session, &parent, "agent/interrupt", params).await?;
    let read = Reader {
        method: "agent/interrupt",
    };
    let map = read.object(&reply, "the result")?;
    Ok(Interrupted {
        agent_id: read.string(map, "agent_id")?,
        agent_path: read.string(map, "agent_path")?,
        previous_status: map
            .get("previous_status")
            .unwrap_or(&Value::Null)
            .to_string(),
        interrupt_requested: read.boolean(map, "interrupt_requested")?,
    })
}

/// `agents.list-models` (`agent/models`, docs/services.md#agent-models).
pub async fn list_models(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    query: Option<String>,
    limit: Option<u32>,
) -> Result<ModelList, GuestError> {
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::AgentSessions,
        "agents.list-models",
    )?;
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::AgentModelSelection,
        "agents.list-models",
    )?;
    let parent = active_parent(scope, "agents.list-models")?;
    let mut params = json!({ "parent_request_id": parent.id });
    if let Some(query) = query {
        if query.len() > MAX_MODEL_QUERY || query.chars().any(char::is_control) {
            return Err(bound(format!(
                "the model query must be at most {MAX_MODEL_QUERY} bytes without control characters, got {} bytes",
                query.len()
            )));
        }
        params["query"] = json!(query);
    }
    if let Some(limit) = limit {
        if !MODELS_LIMIT.contains(&limit) {
            return Err(bound(format!(
                "the model limit is {limit}; it must be {} to {}",
                MODELS_LIMIT.start(),
                MODELS_LIMIT.end()
            )));
        }
        params["limit"] = json!(limit);
    }
    let reply = agent_call(session, &parent, "agent/models", params).await?;
    let read = Reader {
        method: "agent/models",
    };
    let map = read.object(&reply, "the result")?;
    let Some(Value::Array(models)) = map.get("models") else {
        return Err(read.invalid("models must be an array"));
    };
    let mut list = Vec::with_capacity(models.len());
    for model in models {
        let entry = read.object(model, "a model")?;
        let reasoning = match entry.get("reasoning") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(labels)) => labels
                .iter()
                .map(|label| {
                    label
                        .as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| read.invalid("reasoning labels must be strings"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(read.invalid("reasoning must be an array")),
        };
        list.push(ModelInfo {
            model: read.string(entry, "model")?,
            provider: read.string(entry, "provider")?,
            display_name: read.optional_string(entry, "display_name")?,
            reasoning,
            context_window: read.u64(entry, "context_window")?,
            max_output_tokens: read.u64(entry, "max_output_tokens")?,
        });
    }
    Ok(ModelList {
        models: list,
        truncated: read.boolean(map, "truncated")?,
    })
}
