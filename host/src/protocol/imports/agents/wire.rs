//! The `agents` service's wire (docs/services.md#agents): the bound of
//! every argument, the `agent/spawn` params, and the reading of the host's
//! answers into the guest's records. Pure functions over values; the calls
//! that send them are in the parent module.

use super::super::gate::{bound, refused};
use crate::runtime::types::*;
use crate::wire::error_code::ErrorCode;
use serde_json::{Map, Value, json};
use std::ops::RangeInclusive;

pub const MAX_AGENT_MESSAGE: usize = 128 * 1024;
/// Longest `task_name` / `profile`, in characters of `[a-z0-9_-]`
/// (docs/services.md#agent-spawn).
pub const MAX_TASK_NAME: usize = 48;
/// Longest spawn `idempotency_key` (docs/services.md#agent-spawn).
pub const MAX_IDEMPOTENCY_KEY: usize = 256;
/// `policy.max_concurrent_children` (docs/services.md#agent-spawn).
pub const CONCURRENT_CHILDREN: RangeInclusive<u32> = 1..=8;
/// `policy.max_turns` (docs/services.md#agent-spawn).
pub const TURNS: RangeInclusive<u32> = 1..=256;
/// `policy.max_tokens` (docs/services.md#agent-spawn).
pub const TOKENS: RangeInclusive<u32> = 1_000..=64_000;
/// `policy.max_cost_microdollars` (docs/services.md#agent-spawn).
pub const COST_MICRODOLLARS: RangeInclusive<u64> = 1..=50_000_000;
/// `policy.max_output_bytes` (docs/services.md#agent-spawn).
pub const OUTPUT_BYTES: RangeInclusive<u32> = 512..=16_384;
/// `policy.timeout_ms` (docs/services.md#agent-spawn).
pub const TIMEOUT_MS: RangeInclusive<u64> = 5_000..=86_400_000;
/// `agent/wait` `timeout_ms` (docs/services.md#agent-list; rejected locally
/// like the SDK).
pub const WAIT_MS: RangeInclusive<u32> = 1..=60_000;
/// Longest explicit model-selection member (docs/services.md#agent-spawn).
pub const MAX_MODEL_FIELD: usize = 256;
/// Longest `agent/models` query (docs/services.md#agent-models).
pub const MAX_MODEL_QUERY: usize = 128;
/// `agent/models` `limit` (docs/services.md#agent-models).
pub const MODELS_LIMIT: RangeInclusive<u32> = 1..=100;

pub(super) fn check_name(what: &str, name: &str) -> Result<(), GuestError> {
    let ok = (1..=MAX_TASK_NAME).contains(&name.chars().count())
        && name
            .bytes()
            .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(bound(format!(
            "agent {what} {name:?} must be 1 to {MAX_TASK_NAME} characters of [a-z0-9_-]"
        )))
    }
}

pub(super) fn check_message(what: &str, message: &str) -> Result<(), GuestError> {
    if message.is_empty() {
        return Err(bound(format!("the agent {what} message must not be empty")));
    }
    if message.len() > MAX_AGENT_MESSAGE {
        return Err(bound(format!(
            "the agent {what} message is {} bytes; the limit is {MAX_AGENT_MESSAGE} bytes (128 KiB)",
            message.len()
        )));
    }
    Ok(())
}

pub(super) fn check_target(target: &str) -> Result<(), GuestError> {
    if target.trim().is_empty() {
        return Err(bound(
            "the agent target must be a non-blank agent_id or agent_path",
        ));
    }
    Ok(())
}

pub(super) fn check_range<T>(
    what: &str,
    value: T,
    range: &RangeInclusive<T>,
) -> Result<(), GuestError>
where
    T: PartialOrd + std::fmt::Display,
{
    if range.contains(&value) {
        Ok(())
    } else {
        Err(bound(format!(
            "agent spawn policy {what} is {value}; it must be {} to {}",
            range.start(),
            range.end()
        )))
    }
}

pub(super) fn is_lower_hex_64(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

pub(super) fn tool_name(tool: AgentTool) -> &'static str {
    match tool {
        AgentTool::Read => "read",
        AgentTool::Search => "search",
        AgentTool::Edit => "edit",
        AgentTool::Write => "write",
        AgentTool::Bash => "bash",
    }
}

/// The wire `model_selection` object (docs/services.md#agent-spawn).
pub(super) fn model_selection_json(selection: &ModelSelection) -> Result<Value, GuestError> {
    let mut object = Map::new();
    for (key, member) in [
        ("provider", &selection.provider),
        ("model", &selection.model),
        ("reasoning", &selection.reasoning),
    ] {
        if let Some(text) = member {
            if text.is_empty() || text.len() > MAX_MODEL_FIELD || text.chars().any(char::is_control)
            {
                return Err(bound(format!(
                    "model_selection.{key} must be 1 to {MAX_MODEL_FIELD} bytes without control characters"
                )));
            }
            object.insert(key.into(), json!(text));
        }
    }
    if selection.provider.is_some() && selection.model.is_none() {
        return Err(bound(
            "model_selection.provider needs an explicit model_selection.model",
        ));
    }
    Ok(Value::Object(object))
}

/// The `agent/spawn` params for `request` under `parent`, every bound of
/// docs/services.md#agent-spawn checked. `model_selection` says whether
/// `agent_model_selection_v1` was negotiated.
pub fn spawn_params(
    parent: u64,
    request: &SpawnRequest,
    model_selection: bool,
) -> Result<Value, GuestError> {
    check_name("task_name", &request.task_name)?;
    if let Some(profile) = &request.profile {
        check_name("profile", profile)?;
    }
    if let Some(fingerprint) = &request.fingerprint
        && !is_lower_hex_64(fingerprint)
    {
        return Err(bound(
            "agent fingerprint must be exactly 64 lowercase hex characters",
        ));
    }
    check_message("spawn", &request.message)?;
    let key = &request.idempotency_key;
    if key.trim().is_empty() || key.len() > MAX_IDEMPOTENCY_KEY {
        return Err(bound(format!(
            "agent idempotency_key must be 1 to {MAX_IDEMPOTENCY_KEY} bytes and not blank, got {} bytes",
            key.len()
        )));
    }
    let policy = &request.policy;
    if policy.tools.is_empty() {
        return Err(bound(
            "agent spawn policy tools must name at least one of read, search, edit, write, bash",
        ));
    }
    let mut tools = Vec::with_capacity(policy.tools.len());
    for tool in &policy.tools {
        let name = tool_name(*tool);
        if tools.contains(&name) {
            return Err(bound(format!("agent spawn policy tools name {name} twice")));
        }
        tools.push(name);
    }
    check_range(
        "max_concurrent_children",
        policy.max_concurrent_children,
        &CONCURRENT_CHILDREN,
    )?;
    if let Some(turns) = policy.max_turns {
        check_range("max_turns", turns, &TURNS)?;
    }
    if let Some(tokens) = policy.max_tokens {
        check_range("max_tokens", tokens, &TOKENS)?;
    }
    if let Some(cost) = policy.max_cost_microdollars {
        check_range("max_cost_microdollars", cost, &COST_MICRODOLLARS)?;
    }
    check_range("max_output_bytes", policy.max_output_bytes, &OUTPUT_BYTES)?;
    if let Some(timeout) = policy.timeout_ms {
        check_range("timeout_ms", timeout, &TIMEOUT_MS)?;
    }
    let mut wire_policy = json!({
        "tools": tools,
        "max_depth": 1,
        "max_concurrent_children": policy.max_concurrent_children,
        "max_turns": policy.max_turns,
        "max_tokens": policy.max_tokens,
        "max_cost_microdollars": policy.max_cost_microdollars,
        "max_output_bytes": policy.max_output_bytes,
        "timeout_ms": policy.timeout_ms,
    });
    if let Some(selection) = &policy.model_selection {
        if !model_selection {
            return Err(refused(
                ErrorCode::MethodNotFound,
                "model selection needs the negotiated `agent_model_selection_v1` feature (declare it in the guest's features; the host must offer it)",
            ));
        }
        wire_policy["model_selection"] = model_selection_json(selection)?;
    }
    let mut params = Map::new();
    params.insert("parent_request_id".into(), json!(parent));
    params.insert("task_name".into(), json!(request.task_name));
    if let Some(profile) = &request.profile {
        params.insert("profile".into(), json!(profile));
    }
    if let Some(fingerprint) = &request.fingerprint {
        params.insert("fingerprint".into(), json!(fingerprint));
    }
    params.insert("message".into(), json!(request.message));
    params.insert("idempotency_key".into(), json!(request.idempotency_key));
    params.insert("policy".into(), wire_policy);
    Ok(Value::Object(params))
}

/// Reads the host's answers; anything malformed is a failure naming the
/// method (liberal: unknown fields and states are kept, not rejected).
pub(super) struct Reader<'a> {
    pub(super) method: &'a str,
}

impl Reader<'_> {
    pub(super) fn invalid(&self, why: &str) -> GuestError {
        GuestError::Failed(format!("invalid {} response: {why}", self.method))
    }

    pub(super) fn object<'v>(
        &self,
        value: &'v Value,
        what: &str,
    ) -> Result<&'v Map<String, Value>, GuestError> {
        value
            .as_object()
            .ok_or_else(|| self.invalid(&format!("{what} must be an object")))
    }

    pub(super) fn string(&self, map: &Map<String, Value>, key: &str) -> Result<String, GuestError> {
        match map.get(key) {
            Some(Value::String(text)) => Ok(text.clone()),
            _ => Err(self.invalid(&format!("{key} must be a string"))),
        }
    }

    pub(super) fn optional_string(
        &self,
        map: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<String>, GuestError> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.invalid(&format!("{key} must be a string or null"))),
        }
    }

    pub(super) fn boolean(&self, map: &Map<String, Value>, key: &str) -> Result<bool, GuestError> {
        map.get(key)
            .and_then(Value::as_bool)
            .ok_or_else(|| self.invalid(&format!("{key} must be a boolean")))
    }

    pub(super) fn u64(&self, map: &Map<String, Value>, key: &str) -> Result<u64, GuestError> {
        map.get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.invalid(&format!("{key} must be a non-negative integer")))
    }

    /// A tagged status object (docs/services.md#agent-spawn; unknown states,
    /// docs/choices.md#agent-states). `output` and `error` are kept when
    /// they are strings; other states' fields stay in the record.
    pub(super) fn status(&self, map: &Map<String, Value>) -> Result<AgentStatus, GuestError> {
        let status = self.object(map.get("status").unwrap_or(&Value::Null), "status")?;
        let state = match status.get("state") {
            Some(Value::String(state)) if !state.is_empty() => state.clone(),
            _ => return Err(self.invalid("status.state must be a non-empty string")),
        };
        let text = |key: &str| status.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(AgentStatus {
            state,
            output: text("output"),
            error: text("error"),
        })
    }

    pub(super) fn record(&self, value: &Value) -> Result<AgentRecord, GuestError> {
        let map = self.object(value, "an agent record")?;
        Ok(AgentRecord {
            agent_id: self.string(map, "agent_id")?,
            agent_path: self.optional_string(map, "agent_path")?,
            status: self.status(map)?,
            details: value.to_string(),
        })
    }

    pub(super) fn snapshot(&self, value: &Value) -> Result<AgentSnapshot, GuestError> {
        let map = self.object(value, "the snapshot")?;
        let Some(Value::Array(agents)) = map.get("agents") else {
            return Err(self.invalid("agents must be an array"));
        };
        Ok(AgentSnapshot {
            principal: self.string(map, "principal")?,
            resource_owner: self.string(map, "resource_owner")?,
            persistence_error: match map.get("persistence_error") {
                None | Some(Value::Null) => None,
                Some(other) => Some(other.to_string()),
            },
            agents: agents
                .iter()
                .map(|agent| self.record(agent))
                .collect::<Result<_, _>>()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> SpawnRequest {
        SpawnRequest {
            task_name: "audit-deps".into(),
            profile: None,
            fingerprint: None,
            message: "List outdated dependencies in Cargo.toml.".into(),
            idempotency_key: "31:audit-deps".into(),
            policy: SpawnPolicy {
                tools: vec![AgentTool::Read, AgentTool::Search],
                max_concurrent_children: 2,
                max_turns: Some(12),
                max_tokens: None,
                max_cost_microdollars: None,
                max_output_bytes: 4096,
                timeout_ms: Some(600_000),
                model_selection: None,
            },
        }
    }

    fn message_of(error: GuestError) -> String {
        match error {
            GuestError::InvalidParams(text) => text,
            GuestError::Rpc(error) => format!("{}: {}", error.code, error.message),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn the_spec_example_spawn() {
        let params = spawn_params(31, &request(), false).unwrap();
        assert_eq!(
            params.to_string(),
            r#"{"parent_request_id":31,"task_name":"audit-deps","message":"List outdated dependencies in Cargo.toml.","idempotency_key":"31:audit-deps","policy":{"tools":["read","search"],"max_depth":1,"max_concurrent_children":2,"max_turns":12,"max_tokens":null,"max_cost_microdollars":null,"max_output_bytes":4096,"timeout_ms":600000}}"#
        );
    }

    #[test]
    fn every_bound_at_the_limit_and_one_past() {
        type Edit = fn(&mut SpawnRequest, bool);
        let cases: &[(&str, Edit)] = &[
            ("task_name", |r, past| {
                r.task_name = "a".repeat(MAX_TASK_NAME + usize::from(past))
            }),
            ("task_name", |r, past| {
                r.task_name = if past { "A".into() } else { "a_-9".into() }
            }),
            ("profile", |r, past| {
                r.profile = Some(if past { String::new() } else { "p".into() })
            }),
            ("fingerprint", |r, past| {
                r.fingerprint = Some("a".repeat(64 + usize::from(past)))
            }),
            ("128 KiB", |r, past| {
                r.message = "m".repeat(MAX_AGENT_MESSAGE + usize::from(past))
            }),
            ("message must not be empty", |r, past| {
                r.message = if past { String::new() } else { "m".into() }
            }),
            ("idempotency_key", |r, past| {
                r.idempotency_key = "k".repeat(MAX_IDEMPOTENCY_KEY + usize::from(past))
            }),
            ("idempotency_key", |r, past| {
                r.idempotency_key = if past { " ".into() } else { "k".into() }
            }),
            ("tools", |r, past| {
                r.policy.tools = if past { vec![] } else { vec![AgentTool::Bash] }
            }),
            ("tools", |r, past| {
                r.policy.tools = if past {
                    vec![AgentTool::Edit, AgentTool::Edit]
                } else {
                    vec![
                        AgentTool::Read,
                        AgentTool::Search,
                        AgentTool::Edit,
                        AgentTool::Write,
                        AgentTool::Bash,
                    ]
                }
            }),
            ("max_concurrent_children", |r, past| {
                r.policy.max_concurrent_children = 8 + u32::from(past)
            }),
            ("max_concurrent_children", |r, past| {
                r.policy.max_concurrent_children = u32::from(!past)
            }),
            ("max_turns", |r, past| {
                r.policy.max_turns = Some(256 + u32::from(past))
            }),
            ("max_turns", |r, past| {
                r.policy.max_turns = Some(u32::from(!past))
            }),
            ("max_tokens", |r, past| {
                r.policy.max_tokens = Some(64_000 + u32::from(past))
            }),
            ("max_tokens", |r, past| {
                r.policy.max_tokens = Some(1_000 - u32::from(past))
            }),
            ("max_cost_microdollars", |r, past| {
                r.policy.max_cost_microdollars = Some(50_000_000 + u64::from(past))
            }),
            ("max_cost_microdollars", |r, past| {
                r.policy.max_cost_microdollars = Some(u64::from(!past))
            }),
            ("max_output_bytes", |r, past| {
                r.policy.max_output_bytes = 16_384 + u32::from(past)
            }),
            ("max_output_bytes", |r, past| {
                r.policy.max_output_bytes = 512 - u32::from(past)
            }),
            ("timeout_ms", |r, past| {
                r.policy.timeout_ms = Some(86_400_000 + u64::from(past))
            }),
            ("timeout_ms", |r, past| {
                r.policy.timeout_ms = Some(5_000 - u64::from(past))
            }),
            ("model_selection.model", |r, past| {
                r.policy.model_selection = Some(ModelSelection {
                    provider: None,
                    model: Some("m".repeat(MAX_MODEL_FIELD + usize::from(past))),
                    reasoning: None,
                })
            }),
            ("model_selection.reasoning", |r, past| {
                r.policy.model_selection = Some(ModelSelection {
                    provider: None,
                    model: None,
                    reasoning: Some(if past { "a\u{7}".into() } else { "high".into() }),
                })
            }),
            ("needs an explicit model_selection.model", |r, past| {
                r.policy.model_selection = Some(ModelSelection {
                    provider: Some("p".into()),
                    model: (!past).then(|| "m".into()),
                    reasoning: None,
                })
            }),
        ];
        for (needle, edit) in cases {
            let mut at = request();
            edit(&mut at, false);
            spawn_params(1, &at, true).unwrap_or_else(|e| panic!("{needle}: {e:?}"));
            let mut past = request();
            edit(&mut past, true);
            let text = message_of(spawn_params(1, &past, true).unwrap_err());
            assert!(text.contains(needle), "{needle}: {text}");
        }
    }

    #[test]
    fn model_selection_needs_its_feature() {
        let mut with = request();
        with.policy.model_selection = Some(ModelSelection {
            provider: Some("anthropic".into()),
            model: Some("claude".into()),
            reasoning: None,
        });
        let text = message_of(spawn_params(1, &with, false).unwrap_err());
        assert!(
            text.starts_with("-32601") && text.contains("agent_model_selection_v1"),
            "{text}"
        );
        let params = spawn_params(1, &with, true).unwrap();
        assert_eq!(
            params["policy"]["model_selection"],
            json!({"provider": "anthropic", "model": "claude"})
        );
    }
}
