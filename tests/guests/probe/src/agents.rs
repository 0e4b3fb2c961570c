//! Tools that call the `agents` import (child agent sessions). Each answers
//! with a JSON text of what the guest received, so tests can compare it.

use octet_guest::agents::{
    self, AgentStatus, AgentTool, FollowUpDelivery, ModelSelection, Policy, Snapshot, Spawn,
    SteeringDelivery,
};
use octet_guest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct SpawnArgs {
    task_name: String,
    #[serde(default)]
    profile: Option<String>,
    #[serde(default)]
    fingerprint: Option<String>,
    message: String,
    idempotency_key: String,
    policy: PolicyArgs,
}

#[derive(Deserialize)]
struct PolicyArgs {
    tools: Vec<String>,
    max_concurrent_children: u32,
    #[serde(default)]
    max_turns: Option<u32>,
    #[serde(default)]
    max_tokens: Option<u32>,
    #[serde(default)]
    max_cost_microdollars: Option<u64>,
    max_output_bytes: u32,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    model_selection: Option<SelectionArgs>,
}

#[derive(Deserialize)]
struct SelectionArgs {
    #[serde(default)]
    provider: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
}

#[derive(Deserialize)]
struct Steer {
    target: String,
    message: String,
}

#[derive(Deserialize)]
struct Target {
    target: String,
}

#[derive(Deserialize)]
struct Wait {
    #[serde(default)]
    timeout_ms: Option<u32>,
}

#[derive(Deserialize)]
struct Models {
    #[serde(default)]
    query: Option<String>,
    #[serde(default)]
    limit: Option<u32>,
}

fn tool(name: &str) -> Result<AgentTool> {
    Ok(match name {
        "read" => AgentTool::Read,
        "search" => AgentTool::Search,
        "edit" => AgentTool::Edit,
        "write" => AgentTool::Write,
        "bash" => AgentTool::Bash,
        other => return Err(Error::invalid_params(format!("unknown agent tool {other}"))),
    })
}

fn status(status: &AgentStatus) -> Value {
    json!({"state": status.state, "output": status.output, "error": status.error})
}

fn snapshot(snapshot: &Snapshot) -> Value {
    json!({
        "principal": snapshot.principal,
        "resource_owner": snapshot.resource_owner,
        "persistence_error": snapshot.persistence_error,
        "agents": snapshot.agents.iter().map(|agent| json!({
            "agent_id": agent.agent_id,
            "agent_path": agent.agent_path,
            "status": status(&agent.status),
            "active": agents::is_active(&agent.status),
            "details": agent.details,
        })).collect::<Vec<_>>(),
    })
}

fn any() -> Value {
    json!({"type": "object"})
}

pub fn register(ext: &mut Extension) {
    ext.uses_agent_model_selection();
    // agent_spawn {task_name, profile?, fingerprint?, message,
    // idempotency_key, policy{...}} → {agent_id, agent_path, status, details}
    ext.tool(
        Tool::new("agent_spawn", "Spawn a child agent").parameters(any()),
        |args: SpawnArgs| -> Result<String> {
            let tools = args
                .policy
                .tools
                .iter()
                .map(|t| tool(t))
                .collect::<Result<Vec<_>>>()?;
            let p = &args.policy;
            let mut policy = Policy::new(tools)
                .max_concurrent_children(p.max_concurrent_children)
                .max_output_bytes(p.max_output_bytes);
            if let Some(n) = p.max_turns {
                policy = policy.max_turns(n);
            }
            if let Some(n) = p.max_tokens {
                policy = policy.max_tokens(n);
            }
            if let Some(n) = p.max_cost_microdollars {
                policy = policy.max_cost_microdollars(n);
            }
            if let Some(ms) = p.timeout_ms {
                policy = policy.timeout_ms(ms);
            }
            if let Some(selection) = &p.model_selection {
                policy = policy.model(ModelSelection {
                    provider: selection.provider.clone(),
                    model: selection.model.clone(),
                    reasoning: selection.reasoning.clone(),
                });
            }
            let mut request =
                Spawn::new(args.task_name, args.message, args.idempotency_key, policy);
            if let Some(profile) = args.profile {
                request = request.profile(profile);
            }
            if let Some(fingerprint) = args.fingerprint {
                request = request.fingerprint(fingerprint);
            }
            let spawned = agents::spawn(&request)?;
            Ok(json!({
                "agent_id": spawned.agent_id,
                "agent_path": spawned.agent_path,
                "status": status(&spawned.status),
                "details": spawned.details,
            })
            .to_string())
        },
    );
    // agent_send {target, message} → {delivered_to, delivery}
    ext.tool(
        Tool::new("agent_send", "Steer a child agent").parameters(any()),
        |args: Steer| -> Result<String> {
            let steered = agents::send(&args.target, &args.message)?;
            Ok(json!({
                "delivered_to": steered.delivered_to,
                "delivery": match steered.delivery {
                    SteeringDelivery::Steering => "steering",
                    SteeringDelivery::Queued => "queued",
                },
            })
            .to_string())
        },
    );
    // agent_follow_up {target, message} → {agent_id, agent_path, delivery}
    ext.tool(
        Tool::new("agent_follow_up", "Follow up with a child agent").parameters(any()),
        |args: Steer| -> Result<String> {
            let done = agents::follow_up(&args.target, &args.message)?;
            Ok(json!({
                "agent_id": done.agent_id,
                "agent_path": done.agent_path,
                "delivery": match done.delivery {
                    FollowUpDelivery::FollowUp => "follow_up",
                    FollowUpDelivery::NewRun => "new_run",
                },
            })
            .to_string())
        },
    );
    // agent_list {} → the snapshot
    ext.tool(
        Tool::new("agent_list", "List child agents"),
        |_: Value| -> Result<String> { Ok(snapshot(&agents::list()?).to_string()) },
    );
    // agent_wait {timeout_ms?} → {timed_out, snapshot}
    ext.tool(
        Tool::new("agent_wait", "Wait for child agents").parameters(any()),
        |args: Wait| -> Result<String> {
            let waited = agents::wait(args.timeout_ms)?;
            Ok(
                json!({"timed_out": waited.timed_out, "snapshot": snapshot(&waited.snapshot)})
                    .to_string(),
            )
        },
    );
    // agent_interrupt {target} → {agent_id, agent_path, previous_status,
    // interrupt_requested}
    ext.tool(
        Tool::new("agent_interrupt", "Interrupt a child agent").parameters(any()),
        |args: Target| -> Result<String> {
            let done = agents::interrupt(&args.target)?;
            Ok(json!({
                "agent_id": done.agent_id,
                "agent_path": done.agent_path,
                "previous_status": done.previous_status,
                "interrupt_requested": done.interrupt_requested,
            })
            .to_string())
        },
    );
    // agent_models {query?, limit?} → {models: [...], truncated}
    ext.tool(
        Tool::new("agent_models", "List models for child agents").parameters(any()),
        |args: Models| -> Result<String> {
            let list = agents::list_models(args.query.as_deref(), args.limit)?;
            Ok(json!({
                "models": list.models.iter().map(|m| json!({
                    "model": m.model, "provider": m.provider, "display_name": m.display_name,
                    "reasoning": m.reasoning, "context_window": m.context_window,
                    "max_output_tokens": m.max_output_tokens,
                })).collect::<Vec<_>>(),
                "truncated": list.truncated,
            })
            .to_string())
        },
    );
}
