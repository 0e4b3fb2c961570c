//! The records of a receipts file: one `start`, one `request` per answered
//! request, one `summary` at exit. Each is one JSON line.

use crate::runtime::Fault;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// The `type` of a request record.
pub const REQUEST: &str = "request";
/// The `type` of the record a file starts with.
pub const START: &str = "start";
/// The `type` of the record written at exit.
pub const SUMMARY: &str = "summary";

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with a result.
    Result,
    /// A tool call answered with an `is_error` result (the tool said it
    /// failed; the model reads why).
    ToolError,
    /// Answered with a JSON-RPC error of this code.
    Error(i64),
    /// Cancelled by the host (or by the shim's drain at shutdown or end of
    /// input) before the guest answered.
    Cancelled,
    /// Answered by the shim when its deadline passed.
    Deadline,
    /// The guest faulted (trap, stack overflow, memory or fuel limit, an
    /// instance that could not start); the instance was discarded.
    Trap,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Result => "result",
            Outcome::ToolError => "tool_error",
            Outcome::Error(_) => "error",
            Outcome::Cancelled => "cancelled",
            Outcome::Deadline => "deadline",
            Outcome::Trap => "trap",
        }
    }

    pub fn code(self) -> Option<i64> {
        match self {
            Outcome::Error(code) => Some(code),
            _ => None,
        }
    }
}

/// The kind of a guest fault, as a receipt names it.
pub fn fault_name(fault: &Fault) -> &'static str {
    match fault {
        Fault::Trap { .. } => "trap",
        Fault::StackOverflow { .. } => "stack_overflow",
        Fault::MemoryLimit { .. } => "memory_limit",
        Fault::OutOfFuel { .. } => "out_of_fuel",
        Fault::Start(_) => "start",
    }
}

/// One request's receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: u64,
    pub method: String,
    /// The declared tool of a `tool/call`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// When it was admitted, milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// From admission to the answer written, microseconds.
    pub wall_us: u64,
    /// CPU time of the guest call up to the answer, microseconds.
    pub cpu_us: u64,
    /// Fuel the call used; only when fuel is metered and the call returned.
    #[serde(default)]
    pub fuel: Option<u64>,
    /// The instance's linear memory (its peak) when the request was
    /// answered; `null` when no instance ran it.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// The request frame's JSON text, without its line terminator.
    pub bytes_in: u64,
    /// The answer frame's JSON text, without its line terminator (0 when
    /// it could not be written).
    pub bytes_out: u64,
    /// [`Outcome::name`].
    pub outcome: String,
    /// The JSON-RPC error code, for `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// The fault's kind, for `trap` ([`fault_name`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// The shim answered without running the guest (a refusal, an unknown
    /// method, bad params, a default for what the guest does not handle).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_shim: bool,
}

impl Request {
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The first line of a file.
pub fn start_line(extension: &str, signer: Option<&crate::signing::Publisher>) -> String {
    json!({
        "type": START,
        "extension": extension,
        "signer": signer.map(|key| json!({"fingerprint": key.fingerprint(), "comment": key.comment})),
        "pid": std::process::id(),
        "at_ms": unix_ms(),
        "octet_wasm": env!("CARGO_PKG_VERSION"),
    })
    .to_string()
}

/// What the summary adds up: every request answered, written or dropped.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Totals {
    pub requests: u64,
    pub outcomes: BTreeMap<String, u64>,
    pub cpu_us: u64,
    pub fuel: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub max_memory_bytes: u64,
}

impl Totals {
    pub fn add(&mut self, request: &Request) {
        self.requests += 1;
        *self.outcomes.entry(request.outcome.clone()).or_default() += 1;
        self.cpu_us = self.cpu_us.saturating_add(request.cpu_us);
        self.fuel = self.fuel.saturating_add(request.fuel.unwrap_or(0));
        self.bytes_in = self.bytes_in.saturating_add(request.bytes_in);
        self.bytes_out = self.bytes_out.saturating_add(request.bytes_out);
        self.max_memory_bytes = self.max_memory_bytes.max(request.memory_bytes.unwrap_or(0));
    }
}

/// The last line of a file: the totals of every request of the process,
/// including those whose records were dropped past the file's cap.
pub fn summary_line(
    extension: &str,
    totals: &Totals,
    dropped: u64,
    cap_bytes: u64,
    alive: Duration,
) -> String {
    json!({
        "type": SUMMARY,
        "extension": extension,
        "pid": std::process::id(),
        "at_ms": unix_ms(),
        "alive_ms": u64::try_from(alive.as_millis()).unwrap_or(u64::MAX),
        "requests": totals.requests,
        "records_dropped": dropped,
        "cap_bytes": cap_bytes,
        "outcomes": totals.outcomes,
        "cpu_us": totals.cpu_us,
        "fuel": totals.fuel,
        "bytes_in": totals.bytes_in,
        "bytes_out": totals.bytes_out,
        "max_memory_bytes": totals.max_memory_bytes,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_line_names_the_signer() {
        let signer = crate::signing::Publisher {
            key: [9; 32],
            comment: "alice@example".into(),
        };
        let line: serde_json::Value =
            serde_json::from_str(&start_line("probe", Some(&signer))).unwrap();
        assert_eq!(line["signer"]["fingerprint"], signer.fingerprint());
        assert_eq!(line["signer"]["comment"], "alice@example");
        let unsigned: serde_json::Value = serde_json::from_str(&start_line("probe", None)).unwrap();
        assert_eq!(unsigned["signer"], serde_json::Value::Null);
    }

    fn sample(outcome: Outcome) -> Request {
        Request {
            kind: REQUEST.into(),
            id: 4,
            method: "tool/call".into(),
            tool: Some("echo".into()),
            at_ms: 1,
            wall_us: 1_500,
            cpu_us: 700,
            fuel: None,
            memory_bytes: Some(1 << 20),
            bytes_in: 90,
            bytes_out: 120,
            outcome: outcome.name().into(),
            code: outcome.code(),
            fault: None,
            by_shim: false,
        }
    }

    #[test]
    fn a_record_round_trips_and_omits_what_does_not_apply() {
        let record = sample(Outcome::Result);
        let line = record.to_line();
        assert!(!line.contains("code") && !line.contains("fault"), "{line}");
        assert!(!line.contains("by_shim"), "{line}");
        assert!(line.contains(r#""fuel":null"#), "{line}");
        assert_eq!(serde_json::from_str::<Request>(&line).unwrap(), record);
        let error = sample(Outcome::Error(-32602)).to_line();
        assert!(
            error.contains(r#""outcome":"error","code":-32602"#),
            "{error}"
        );
    }

    #[test]
    fn totals_count_every_outcome() {
        let mut totals = Totals::default();
        for outcome in [Outcome::Result, Outcome::Trap, Outcome::Result] {
            totals.add(&sample(outcome));
        }
        assert_eq!(totals.requests, 3);
        assert_eq!(totals.outcomes["result"], 2);
        assert_eq!(totals.outcomes["trap"], 1);
        assert_eq!((totals.cpu_us, totals.bytes_in), (2_100, 270));
        assert_eq!(totals.max_memory_bytes, 1 << 20);
        let line = summary_line("probe", &totals, 5, 64, Duration::from_millis(9));
        let summary: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(summary["type"], SUMMARY);
        assert_eq!(summary["records_dropped"], 5);
        assert_eq!(summary["outcomes"]["trap"], 1);
    }
}
