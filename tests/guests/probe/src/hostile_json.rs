//! JSON nested as deep as a test asks, in every place a guest hands the
//! shim JSON (issue 17, hole 3: frames the host cannot parse).
//!
//! Only when the workspace holds `.probe-hostile-json` (written by the test
//! before `initialize`); every other test, and `inspect`, which has no
//! filesystem, sees none of this. The file's content, when it is a number
//! N, also adds `deep_schema`, a tool whose parameter schema nests N levels
//! (so `describe` itself carries the deep JSON).
//!
//! The content `fail-init` makes the guest's `init` fail instead (for the
//! wording of that error).
//!
//! Depth is counted in containers: depth N is N objects
//! `{"n":{"n":...{"n":0}}}` around a 0.
//!
//! - `hostile_json {place, depth, text?}`, `place` one of:
//!   - `metadata`: a result whose metadata nests `depth` levels;
//!   - `error_data`: error -32000 `deep data` with data nested `depth`;
//!   - `policy`: evaluates an intent whose target nests `depth`; text
//!     `decision: ...`;
//!   - `presentation`: publishes a snapshot nesting `depth` (never a
//!     valid one); text `presented`;
//!   - `register`: registers dynamic tool `deep_dyn` whose parameter
//!     schema nests `depth`; text `registered N`;
//!   - `log`: one log record `probe deep fields <depth>` whose fields nest
//!     `depth`; text `logged`;
//!   - `big_notification`: a notification of `bytes` bytes (past the
//!     frame limit: the refusal's wording);
//!   - `raw_policy`, `raw_snapshot`: `text`, as it is, as the policy
//!     intent's target or as a snapshot (through the raw imports, so JSON
//!     no serde_json would write: `1e400`, lone surrogates);
//! - `hostile_structured {depth}` → structured content nesting `depth`
//!   (its output schema is `{"type": "object"}`);
//! - hook `before_persistence`: persistence metadata nesting
//!   `payload.probe_depth` levels;
//! - the menu: nests `context.host.probe_menu_depth` levels.
//!
//! A refusal from the shim comes back as the tool's error (`is_error`).

use octet_guest::policy::{self, Intent};
use octet_guest::prelude::*;
use octet_guest::{LogLevel, presentation, tools_catalog};
use serde::Deserialize;

use crate::object_schema;

use octet_guest::bindings::octet::extension as raw;

/// The switch file, relative to the workspace (the guest's `.`).
const SWITCH_FILE: &str = ".probe-hostile-json";

#[derive(Deserialize)]
struct Place {
    place: String,
    #[serde(default)]
    depth: usize,
    #[serde(default)]
    text: String,
    #[serde(default)]
    bytes: usize,
}

#[derive(Deserialize)]
struct Depth {
    depth: usize,
}

fn decision(decision: policy::Decision) -> &'static str {
    match decision {
        policy::Decision::Allow => "allow",
        policy::Decision::Ask => "ask",
        policy::Decision::Deny => "deny",
    }
}

/// An error from a raw import as the SDK's.
fn sdk_error(error: raw::types::Error) -> Error {
    match error {
        raw::types::Error::InvalidParams(message) => Error::invalid_params(message),
        raw::types::Error::Cancelled => Error::cancelled(),
        raw::types::Error::Failed(message) => Error::failed(message),
        raw::types::Error::Rpc(rpc) => Error::rpc(rpc.code, rpc.message, None),
    }
}

/// `depth` objects around a 0.
fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(0), |inner, _| json!({ "n": inner }))
}

/// The depth in `value[key]`, 0 when absent.
fn depth_in(value: &Value, key: &str) -> usize {
    value
        .get(key)
        .and_then(Value::as_u64)
        .map_or(0, |depth| depth as usize)
}

pub fn register(ext: &mut Extension) {
    let Ok(switch) = std::fs::read_to_string(SWITCH_FILE) else {
        return;
    };
    if switch.trim() == "fail-init" {
        // Replaces `start`'s init handler; that one has nothing to do
        // without its own mode file.
        ext.on_init(|| -> Result<()> { Err(Error::failed("probe init refused")) });
    }
    if let Ok(depth) = switch.trim().parse::<usize>() {
        // The innermost level is itself a schema, so `depth` levels in all.
        let schema = (1..depth).fold(json!({}), |inner, _| json!({ "items": inner }));
        ext.tool(
            Tool::new(
                "deep_schema",
                "A tool with a deeply nested parameter schema",
            )
            .parameters(schema),
            |_: Value| "deep_schema",
        );
    }
    ext.uses_policy();
    ext.tool(
        Tool::new("hostile_json", "Return or send JSON nested that deep").parameters(json!({
            "type": "object",
            "properties": {
                "place": {"type": "string"},
                "depth": {"type": "integer", "minimum": 0},
                "text": {"type": "string"},
                "bytes": {"type": "integer", "minimum": 0},
            },
            "required": ["place"],
        })),
        |args: Place| -> Result<ToolResult> {
            let deep = nested(args.depth);
            let text = match args.place.as_str() {
                "metadata" => {
                    return Ok(ToolResult::text(format!("metadata {}", args.depth)).metadata(deep));
                }
                "error_data" => return Err(Error::rpc(-32000, "deep data", Some(deep))),
                "policy" => {
                    let verdict =
                        policy::evaluate(&Intent::new("probe", "probe.deep", deep), None)?;
                    format!("decision: {}", decision(verdict.decision))
                }
                "presentation" => {
                    presentation::update(&deep)?;
                    "presented".to_owned()
                }
                "raw_policy" => {
                    let intent = raw::policy::Intent {
                        kind: "probe".into(),
                        operation: "probe.raw".into(),
                        target: args.text,
                        data_classes: Vec::new(),
                        read_only: None,
                        destructive: None,
                    };
                    let verdict = raw::policy::evaluate(&intent, None).map_err(sdk_error)?;
                    format!("decision: {}", decision(verdict.decision))
                }
                "big_notification" => {
                    octet_guest::notify(NotifyLevel::Info, "x".repeat(args.bytes))?;
                    "notified".to_owned()
                }
                "raw_snapshot" => {
                    raw::presentation::update(&args.text, None).map_err(sdk_error)?;
                    "presented".to_owned()
                }
                "register" => {
                    let tool = Tool::new("deep_dyn", "Deep dynamic tool").parameters(deep);
                    let update = tools_catalog::register(&[tool])?;
                    format!("registered {}", update.revision)
                }
                "log" => {
                    octet_guest::log(
                        LogLevel::Info,
                        &format!("probe deep fields {}", args.depth),
                        deep,
                    );
                    "logged".to_owned()
                }
                other => return Err(Error::invalid_params(format!("unknown place {other}"))),
            };
            Ok(ToolResult::text(text))
        },
    );
    ext.tool(
        Tool::new(
            "hostile_structured",
            "Return structured content nested that deep",
        )
        .parameters(object_schema(
            json!({"depth": {"type": "integer", "minimum": 0}}),
        ))
        .output_schema(json!({"type": "object"})),
        |args: Depth| {
            ToolResult::text(format!("structured {}", args.depth)).structured(nested(args.depth))
        },
    );
    ext.hook("before_persistence", |payload: Value| {
        HookResult::proceed().persistence_metadata(nested(depth_in(&payload, "probe_depth")), false)
    });
    ext.menu(|call: &Call| nested(depth_in(call.host(), "probe_menu_depth")));
}
