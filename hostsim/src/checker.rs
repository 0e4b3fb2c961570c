//! The strict frame checker: octet's fatal rules (docs/protocol.md#fatal)
//! applied to every line the extension writes on stdout.
//!
//! The checker is a plain state machine fed with lines (without their LF) and
//! told what the simulated host sent. It derives the manifest facts from the
//! `initialize` params it sees go out and the negotiated features from the
//! `initialize` result, so a [`Session`](super::Session) needs no extra setup;
//! tests of the checker itself can set both directly.

use super::frame::{ChildId, Frame, FrameKind, decode_error};
use super::handshake;
use super::params::ApiVersion;
use super::rule::Rule;
use super::rules;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

/// A line that reaches this many bytes before its LF is fatal
/// (docs/protocol.md#frame-size): an extension frame is at most 1,048,575
/// bytes plus LF.
pub const MAX_LINE_BYTES: usize = 1_048_576;
/// Outstanding child requests beyond this are fatal
/// (docs/protocol.md#child-ids).
pub const MAX_OUTSTANDING_CHILD_REQUESTS: usize = 128;
/// Distinct child request ids per generation beyond this are fatal
/// (docs/protocol.md#child-ids).
pub const MAX_DISTINCT_CHILD_IDS: usize = 65_536;
/// A string child request id longer than this is fatal
/// (docs/protocol.md#child-ids).
pub const MAX_CHILD_ID_BYTES: usize = 256;
/// Confirmation/input requests under a model `tool/call` the host services
/// with a worker; more at once is fatal (docs/services.md#worker-slots).
pub const MAX_SERVICED_CHILD_OPERATIONS: usize = 8;

/// One broken rule with the offending line.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    pub rule: Rule,
    pub detail: String,
    /// The offending line (lossy UTF-8, without LF; long lines shortened).
    pub line: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fatal stdout frame ({:?}): {}\n  line: {}",
            self.rule, self.detail, self.line
        )
    }
}

impl std::error::Error for Violation {}

/// What the manifest declares that gates extension-originated messages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ManifestFacts {
    pub api_version: ApiVersion,
    pub tools: Vec<String>,
    pub commands: Vec<String>,
    /// Declared UI surfaces (`contributes.ui`).
    pub ui: Vec<String>,
    pub context: bool,
    pub notifications: bool,
    pub confirmations: bool,
}

impl ManifestFacts {
    /// Reads the facts from `initialize` params (their `api_version` and
    /// `contributes`), which the host serializes from the manifest.
    pub fn from_initialize_params(params: &Value) -> ManifestFacts {
        let contributes = &params["contributes"];
        let names = |key: &str| -> Vec<String> {
            contributes[key]
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        ManifestFacts {
            api_version: ApiVersion::parse(params["api_version"].as_str().unwrap_or("0.1"))
                .unwrap_or_default(),
            tools: names("tools"),
            commands: names("commands"),
            ui: names("ui"),
            context: contributes["context"] == Value::Bool(true),
            notifications: contributes["notifications"] == Value::Bool(true),
            confirmations: contributes["confirmations"] == Value::Bool(true),
        }
    }
}

/// A child request the host has not answered yet.
#[derive(Clone, Debug)]
struct OutstandingChild {
    /// Counted against the 8 serviced operations
    /// (docs/services.md#worker-slots).
    serviced: bool,
}

/// Applies octet's rules to the extension's stdout, one line at a time.
#[derive(Debug, Default)]
pub struct FrameChecker {
    facts: ManifestFacts,
    features: BTreeSet<String>,
    initialized: bool,
    /// `initialize` requests sent and not yet answered, with their params.
    pending_initialize: HashMap<u64, Value>,
    /// Host request id → (method, frames sent with that id not yet answered).
    host_requests: HashMap<u64, (String, u32)>,
    outstanding_children: HashMap<ChildId, OutstandingChild>,
    seen_children: HashSet<ChildId>,
}

impl FrameChecker {
    /// A checker for a fresh generation: nothing may arrive before the
    /// initialize response.
    pub fn new() -> FrameChecker {
        FrameChecker::default()
    }

    /// Skips the handshake: the manifest facts and negotiated features are
    /// given directly and the generation counts as initialized.
    pub fn initialized_with(facts: ManifestFacts, features: &[&str]) -> FrameChecker {
        let mut checker = FrameChecker::new();
        checker.set_manifest(facts);
        checker.set_features(features.iter().copied());
        checker.initialized = true;
        checker
    }

    /// Replaces the manifest facts.
    pub fn set_manifest(&mut self, facts: ManifestFacts) {
        self.facts = facts;
    }

    /// Replaces the negotiated feature set.
    pub fn set_features<'a>(&mut self, features: impl IntoIterator<Item = &'a str>) {
        self.features = features.into_iter().map(str::to_owned).collect();
    }

    /// The features negotiated by the initialize exchange (empty on 0.1).
    pub fn features(&self) -> &BTreeSet<String> {
        &self.features
    }

    /// Whether a successful initialize response has been seen.
    pub fn is_initialized(&self) -> bool {
        self.initialized
    }

    /// The manifest facts in force.
    pub fn manifest(&self) -> &ManifestFacts {
        &self.facts
    }

    /// Records that the host wrote request `id` (so one response is due).
    pub fn host_sent_request(&mut self, id: u64, method: &str, params: &Value) {
        let entry = self
            .host_requests
            .entry(id)
            .or_insert_with(|| (method.to_owned(), 0));
        entry.0 = method.to_owned();
        entry.1 += 1;
        if method == "initialize" && !self.initialized {
            self.pending_initialize.insert(id, params.clone());
        }
    }

    /// Records that the host answered (or cancelled) child request `id`.
    pub fn host_settled_child(&mut self, id: &ChildId) {
        self.outstanding_children.remove(id);
    }

    /// Checks one line (without its LF; a trailing CR is accepted and
    /// stripped as the host does). `Ok(None)` for a blank line.
    pub fn check_line(&mut self, line: &[u8]) -> Result<Option<Frame>, Violation> {
        let fail = |rule, detail: String| Err(violation(rule, detail, line));
        if line.len() >= MAX_LINE_BYTES {
            return fail(
                Rule::LineTooLong,
                format!(
                    "{} bytes before LF (limit {})",
                    line.len(),
                    MAX_LINE_BYTES - 1
                ),
            );
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return Ok(None);
        }
        let Ok(text) = std::str::from_utf8(line) else {
            return fail(Rule::NotUtf8, "line is not valid UTF-8".into());
        };
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(error) => return fail(Rule::NotJson, format!("not JSON: {error}")),
        };
        let Some(object) = value.as_object() else {
            return fail(Rule::NotObject, "JSON value is not an object".into());
        };
        if object.get("jsonrpc") != Some(&Value::from("2.0")) {
            return fail(Rule::BadJsonrpc, "jsonrpc is not \"2.0\"".into());
        }
        let kind = match object.get("method") {
            None => self.check_response(&value),
            Some(Value::String(method)) => {
                if !self.initialized {
                    Err((
                        Rule::BeforeInitialize,
                        format!("`{method}` before the initialize response"),
                    ))
                } else if object.contains_key("id") {
                    self.check_request(&value, method)
                } else {
                    self.check_notification(&value, method)
                }
            }
            Some(_) => Err((Rule::BadMethod, "method is not a string".to_owned())),
        };
        match kind {
            Ok(kind) => Ok(Some(Frame {
                raw: text.to_owned(),
                value,
                kind,
            })),
            Err((rule, detail)) => fail(rule, detail),
        }
    }

    /// Checks the end of stdout: bytes after the last LF are fatal.
    pub fn check_eof(&self, partial: &[u8]) -> Result<(), Violation> {
        if partial.is_empty() {
            Ok(())
        } else {
            Err(violation(
                Rule::Unterminated,
                format!("stdout closed after {} bytes without LF", partial.len()),
                partial,
            ))
        }
    }

    fn check_response(&mut self, value: &Value) -> Result<FrameKind, (Rule, String)> {
        let Some(id) = value.get("id").and_then(Value::as_u64) else {
            return Err((
                Rule::BadResponseId,
                format!("response id {} is not a u64", value["id"]),
            ));
        };
        let outcome = match (value.get("result"), value.get("error")) {
            (Some(result), None) => Ok(result.clone()),
            (None, Some(error)) => Err(decode_error(error).ok_or_else(|| {
                (
                    Rule::BadResponseBody,
                    "error is not {code: integer, message: string}".to_owned(),
                )
            })?),
            (Some(_), Some(_)) => {
                return Err((
                    Rule::BadResponseBody,
                    "response has both result and error".into(),
                ));
            }
            (None, None) => {
                return Err((
                    Rule::BadResponseBody,
                    "response has neither result nor error".into(),
                ));
            }
        };
        match self.host_requests.get_mut(&id) {
            Some((_, unanswered)) if *unanswered > 0 => *unanswered -= 1,
            _ => {
                return Err((
                    Rule::UnexpectedResponse,
                    format!("no unanswered host request with id {id}"),
                ));
            }
        }
        if let Some(params) = self.pending_initialize.remove(&id)
            && let Ok(result) = &outcome
            && !self.initialized
        {
            let facts = ManifestFacts::from_initialize_params(&params);
            let features = handshake::validate_initialize_result(&params, result)
                .map_err(|problem| (Rule::InvalidInitializeResult, problem))?;
            self.facts = facts;
            self.features = features;
            self.initialized = true;
        }
        Ok(FrameKind::Response { id, outcome })
    }

    fn check_notification(
        &mut self,
        value: &Value,
        method: &str,
    ) -> Result<FrameKind, (Rule, String)> {
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        match method {
            "notification" => {
                if !self.facts.notifications {
                    return Err(undeclared("notification", "contributes.notifications"));
                }
                rules::notification_params(&params)
            }
            "context/contribution" => {
                if !self.facts.context {
                    return Err(undeclared("context/contribution", "contributes.context"));
                }
                rules::context_item(&params)
            }
            "status/contribution" => rules::status_params(&params, &self.facts.ui),
            "$/progress" => rules::progress_params(&params, &self.features),
            "$/cancelRequest" => {
                let id = params
                    .get("id")
                    .and_then(ChildId::from_json)
                    .ok_or_else(|| {
                        (
                            Rule::InvalidParams,
                            "$/cancelRequest needs params.id (u64 or string)".to_owned(),
                        )
                    })?;
                self.outstanding_children.remove(&id);
                Ok(())
            }
            "confirmation/request" | "input/request" => Err((
                Rule::WrongMessageType,
                format!("`{method}` is a request but has no id"),
            )),
            // Unknown notifications are ignored by the host with a diagnostic.
            _ => Ok(()),
        }?;
        Ok(FrameKind::Notification {
            method: method.to_owned(),
            params,
        })
    }

    fn check_request(&mut self, value: &Value, method: &str) -> Result<FrameKind, (Rule, String)> {
        let raw_id = &value["id"];
        let id = match ChildId::from_json(raw_id) {
            Some(ChildId::Text(text)) if text.len() > MAX_CHILD_ID_BYTES => {
                return Err((
                    Rule::BadChildId,
                    format!("string id of {} bytes (limit 256)", text.len()),
                ));
            }
            Some(id) => id,
            None => {
                return Err((
                    Rule::BadChildId,
                    format!("child id {raw_id} is neither u64 nor string"),
                ));
            }
        };
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        let api = self.facts.api_version;
        let serviced = match method {
            "confirmation/request" => {
                if !self.facts.confirmations {
                    return Err(undeclared(method, "contributes.confirmations"));
                }
                rules::confirmation_params(&params, api)?;
                self.parent_is_tool_call(&params)
            }
            "input/request" => {
                if api == ApiVersion::V0_1 {
                    return Err((
                        Rule::NotNegotiated,
                        "input/request does not exist on API 0.1".into(),
                    ));
                }
                rules::input_params(&params)?;
                self.parent_is_tool_call(&params)
            }
            "notification"
            | "context/contribution"
            | "status/contribution"
            | "$/progress"
            | "$/cancelRequest" => {
                return Err((
                    Rule::WrongMessageType,
                    format!("`{method}` is a notification but has an id"),
                ));
            }
            // Host services (docs/services.md#gates): calling one whose
            // feature was not negotiated is fatal; artifact/publish holds a
            // worker slot like a tool-parented confirmation.
            "artifact/publish"
            | "tools/register"
            | "tools/unregister"
            | "secret/get"
            | "policy/evaluate"
            | "composition/context"
            | "composition/call"
            | "composition/store" => {
                let feature = match method {
                    "artifact/publish" => "artifacts",
                    "secret/get" => "secrets",
                    "policy/evaluate" => "policy_intents",
                    m if m.starts_with("composition/") => "tool_composition_v1",
                    _ => "dynamic_tools",
                };
                if !self.features.contains(feature) {
                    return Err((
                        Rule::NotNegotiated,
                        format!("`{method}` without the negotiated `{feature}` feature"),
                    ));
                }
                method == "artifact/publish" && self.parent_is_tool_call(&params)
            }
            // Child agent sessions (docs/services.md#agent-common): without
            // `agent_sessions` fatal, except `agent/models` (answered
            // -32602). Over the worker slots they are answered -32000, not
            // fatal, so they are not counted.
            "agent/spawn" | "agent/message" | "agent/follow_up" | "agent/list" | "agent/wait"
            | "agent/interrupt" => {
                if !self.features.contains("agent_sessions") {
                    return Err((
                        Rule::NotNegotiated,
                        format!("`{method}` without the negotiated `agent_sessions` feature"),
                    ));
                }
                false
            }
            // Unknown requests are answered -32601 by the host.
            _ => false,
        };
        if !self.seen_children.insert(id.clone()) {
            return Err((
                Rule::ChildIdReused,
                format!("child id {id} was already used"),
            ));
        }
        if self.seen_children.len() > MAX_DISTINCT_CHILD_IDS {
            return Err((
                Rule::TooManyChildRequests,
                "more than 65,536 distinct child ids".into(),
            ));
        }
        self.outstanding_children
            .insert(id.clone(), OutstandingChild { serviced });
        if self.outstanding_children.len() > MAX_OUTSTANDING_CHILD_REQUESTS {
            return Err((
                Rule::TooManyChildRequests,
                "more than 128 outstanding child requests".into(),
            ));
        }
        let busy = self
            .outstanding_children
            .values()
            .filter(|child| child.serviced)
            .count();
        if busy > MAX_SERVICED_CHILD_OPERATIONS {
            return Err((
                Rule::TooManyServicedOperations,
                "more than 8 confirmation/input requests under tool calls".into(),
            ));
        }
        Ok(FrameKind::Request {
            id,
            method: method.to_owned(),
            params,
        })
    }

    /// Whether an operation's parent (API 0.2 `parent_request_id`) is a model
    /// tool call; on API 0.1 every confirmation comes from a tool or command
    /// the host does not name, so none is counted.
    fn parent_is_tool_call(&self, params: &Value) -> bool {
        params
            .get("parent_request_id")
            .and_then(Value::as_u64)
            .and_then(|parent| self.host_requests.get(&parent))
            .is_some_and(|(method, _)| method == "tool/call")
    }
}

fn undeclared(method: &str, declaration: &str) -> (Rule, String) {
    (
        Rule::Undeclared,
        format!("`{method}` without manifest {declaration}"),
    )
}

/// Longest line text kept in a violation (the rest is elided).
const SHOWN_LINE_BYTES: usize = 2_000;

fn violation(rule: Rule, detail: String, line: &[u8]) -> Violation {
    let shown = &line[..line.len().min(SHOWN_LINE_BYTES)];
    let mut text = String::from_utf8_lossy(shown).into_owned();
    if shown.len() < line.len() {
        text.push_str(&format!("… ({} bytes in all)", line.len()));
    }
    Violation {
        rule,
        detail,
        line: text,
    }
}

#[cfg(test)]
#[path = "checker_tests.rs"]
mod tests;
