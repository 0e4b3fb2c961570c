//! api04: the test guest for what API 0.4 adds, built against
//! `octet:extension@0.4.0` by the Rust SDK.
//!
//! Tools: `plain` (no prompt metadata), `prompted` (a snippet and two
//! guidelines, with the TAB and LF they may hold), `register_late`
//! (registers the dynamic tool `late`, which carries metadata of its own).
//!
//! Hooks, each answering what its payload's `mode` asks (so one manifest
//! serves every test):
//! - `cache_warming_decision`: `warm`, `stop`, `echo` (the host's own
//!   action), `slow` (sleeps past its deadline), or no opinion;
//! - `compaction_strategy`: `frames` PNG frames of `bytes` bytes each, or
//!   frames that are not PNG (`gif`);
//! - `before_provider_request`: a rewritten payload, a scalar one (refused),
//!   or one past 768 KiB;
//! - `before_provider_headers`: header changes, or a name that is not a
//!   token; `given` sets `header.name` to `header.values` repeated
//!   `header.repeat` times (an attacker's values: many, empty, controls);
//! - `after_provider_response`: observes and continues.
//!
//! Tool composition (`tool_composition_v1`): `compose_context` (answers the
//! context as JSON text), `compose_call {name, arguments, full}` (the value
//! or outcome as JSON text; with `updates: {read?, abandon?, parallel?,
//! delay_ms?}` it
//! asks for partial results and reports them with the value),
//! `compose_store {set, delete}` (`stored`),
//! `compose_store_twice` (two commits), `compose_many {count}` (that many
//! calls of `plain`, stopping at the first refusal); command `compose`
//! (composition from a command, which octet refuses).
//!
//! An attacker's descriptions: when the workspace holds `.api04-mode`
//! (written by the test before `initialize`), `prompted` carries the
//! metadata that file names (`long-snippet`, `seventeen`, `control`).

use octet_guest::hooks::{CacheWarmingRequest, ProviderHeaders, ProviderRequest};
use octet_guest::prelude::*;
use octet_guest::{CacheWarmingAction, composition, tools_catalog};
use serde::Deserialize;

/// The switch file, relative to the workspace (the guest's `.`).
const MODE_FILE: &str = ".api04-mode";

/// The metadata `prompted` carries, per the switch file.
fn prompted() -> Tool {
    let tool = Tool::new("prompted", "A tool with prompt metadata");
    match std::fs::read_to_string(MODE_FILE).as_deref().map(str::trim) {
        Ok("long-snippet") => tool.prompt_snippet("x".repeat(1025)),
        Ok("seventeen") => (0..17).fold(tool, |tool, i| tool.prompt_guideline(format!("rule {i}"))),
        Ok("control") => tool.prompt_snippet("carriage\rreturn"),
        _ => tool
            .prompt_snippet("prompted: shows what prompt metadata looks like")
            .prompt_guideline("Use it for tests only")
            .prompt_guideline("Columns:\tname\nthen value"),
    }
}

/// Every hook payload may carry a `mode` beside what the host sends.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Mode {
    mode: String,
    frames: usize,
    bytes: usize,
    header: GivenHeader,
}

/// The header `before_provider_headers` sets in mode `given`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct GivenHeader {
    name: String,
    values: Vec<String>,
    repeat: usize,
}

/// `bytes` bytes of PNG: the signature, then a counting pattern.
fn png(bytes: usize) -> Vec<u8> {
    let mut data = b"\x89PNG\r\n\x1a\n".to_vec();
    data.extend((0..bytes.saturating_sub(8)).map(|i| i as u8));
    data.truncate(bytes.max(8));
    data
}

#[derive(Deserialize)]
struct Compose {
    name: String,
    arguments: Value,
    #[serde(default)]
    full: bool,
    /// Answer only the value's size (for values larger than a frame).
    #[serde(default)]
    summary: bool,
    /// Ask for partial results and report them with the value.
    #[serde(default)]
    updates: Option<Updates>,
}

/// How `compose_call` reads partial results.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Updates {
    /// Read at most this many before finishing (all when absent).
    read: Option<usize>,
    /// Drop the call after reading instead of finishing it.
    abandon: bool,
    /// Start this many calls at once (the first is read), reporting the
    /// first refusal.
    parallel: Option<usize>,
    /// Wait this long before reading (so updates pile up).
    delay_ms: u64,
}

/// `compose_call` with updates: what it saw, as JSON text
/// (`{updates: [[sequence, result]...], value}`, `value` absent when
/// abandoned, `error` when a call failed).
fn compose_streaming(args: &Compose, how: &Updates) -> Result<String> {
    let start = || {
        if args.full {
            composition::call_outcome_streaming(&args.name, &args.arguments)
        } else {
            composition::call_streaming(&args.name, &args.arguments)
        }
    };
    let mut call = start()?;
    let mut others = Vec::new();
    for _ in 1..how.parallel.unwrap_or(1) {
        match start() {
            Ok(other) => others.push(other),
            Err(error) => {
                return Ok(
                    json!({"started": others.len() + 1, "error": error.to_string()}).to_string(),
                );
            }
        }
    }
    if how.delay_ms > 0 {
        octet_guest::sleep(std::time::Duration::from_millis(how.delay_ms));
    }
    let mut seen = Vec::new();
    for update in call.by_ref().take(how.read.unwrap_or(usize::MAX)) {
        let update = update?;
        seen.push(json!([update.sequence, update.result]));
    }
    if how.abandon {
        drop(call);
        return Ok(json!({"updates": seen}).to_string());
    }
    let outcome = match call.finish() {
        Ok(value) => json!({"updates": seen, "value": value}),
        Err(error) => json!({"updates": seen, "error": error.to_string()}),
    };
    for other in others {
        let _ = other.finish();
    }
    Ok(outcome.to_string())
}

#[derive(Deserialize)]
struct Store {
    #[serde(default)]
    set: serde_json::Map<String, Value>,
    #[serde(default)]
    delete: Vec<String>,
}

#[derive(Deserialize)]
struct Many {
    count: usize,
}

fn register_composition(ext: &mut Extension) {
    ext.uses_composition();
    ext.tool(
        Tool::new("compose_context", "Read the composition context"),
        |_: Value| -> Result<String> {
            let context = composition::context()?;
            Ok(json!({
                "tools": context.tools,
                "store": context.store,
                "timeout_ms": context.timeout_ms,
                "max_calls": context.max_calls,
            })
            .to_string())
        },
    );
    ext.tool(
        Tool::new("compose_call", "Call another tool through octet"),
        |args: Compose| -> Result<String> {
            if let Some(how) = &args.updates {
                return compose_streaming(&args, how);
            }
            let value = if args.full {
                composition::call_outcome(&args.name, &args.arguments)?
            } else {
                composition::call(&args.name, &args.arguments)?
            };
            if args.summary {
                return Ok(format!("bytes={}", value.to_string().len()));
            }
            Ok(value.to_string())
        },
    );
    ext.tool(
        Tool::new("compose_store", "Commit to the composition store"),
        |args: Store| -> Result<String> {
            composition::store(
                args.set.iter().map(|(k, v)| (k.as_str(), v.clone())),
                args.delete.iter().map(String::as_str),
            )?;
            Ok("stored".into())
        },
    );
    ext.tool(
        Tool::new("compose_store_twice", "Commit twice in one tool call"),
        |_: Value| -> Result<String> {
            composition::store([("first", json!(1))], [])?;
            composition::store([("second", json!(2))], [])?;
            Ok("stored twice".into())
        },
    );
    ext.tool(
        Tool::new("compose_many", "Call plain many times"),
        |args: Many| -> Result<String> {
            for done in 0..args.count {
                if let Err(error) = composition::call("plain", json!({})) {
                    return Ok(format!("{done} calls, then: {error}"));
                }
            }
            Ok(format!("{} calls", args.count))
        },
    );
    ext.command(
        Command::new("compose", "Compose from a command"),
        |_: Vec<String>| composition::context().map(|_| "composed".to_owned()),
    );
}

fn setup(ext: &mut Extension) {
    register_composition(ext);
    ext.uses_dynamic_tools();
    ext.tool(
        Tool::new("plain", "A tool without prompt metadata"),
        |_: Value| "plain",
    );
    ext.tool(prompted(), |_: Value| "prompted");
    ext.dynamic_tool(
        Tool::new("late", "Registered at run time")
            .prompt_snippet("late: arrives after initialize"),
        |_: Value| "late",
    );
    ext.tool(
        Tool::new("register_late", "Register the dynamic tool late"),
        |_: Value| -> Result<String> {
            let update = tools_catalog::register_dynamic(&["late"])?;
            Ok(format!("revision {}", update.revision))
        },
    );
    ext.hook(
        "cache_warming_decision",
        |payload: Value| -> Result<HookResult> {
            let request: CacheWarmingRequest = serde_json::from_value(payload.clone())
                .map_err(|e| Error::invalid_params(e.to_string()))?;
            let mode: Mode = serde_json::from_value(payload).unwrap_or_default();
            Ok(match mode.mode.as_str() {
                "warm" => HookResult::proceed().cache_warming(CacheWarmingAction::Warm),
                "stop" => HookResult::proceed().cache_warming(CacheWarmingAction::Stop),
                // `echo`: the host's own action back, from the typed payload.
                "echo" if request.decision.action == "stop" => {
                    HookResult::proceed().cache_warming(CacheWarmingAction::Stop)
                }
                "echo" => HookResult::proceed().cache_warming(CacheWarmingAction::Warm),
                // `slow`: past any deadline unless stopped.
                "slow" => {
                    octet_guest::sleep(std::time::Duration::from_secs(20));
                    HookResult::proceed().cache_warming(CacheWarmingAction::Warm)
                }
                _ => HookResult::proceed(),
            })
        },
    );
    ext.hook("compaction_strategy", |mode: Mode| {
        let frame = |_| match mode.mode.as_str() {
            "gif" => b"GIF89a....".to_vec(),
            _ => png(mode.bytes.max(8)),
        };
        (0..mode.frames)
            .map(frame)
            .fold(HookResult::proceed(), HookResult::compaction_frame)
    });
    ext.hook(
        "before_provider_request",
        |payload: Value| -> Result<HookResult> {
            let mode: Mode = serde_json::from_value(payload.clone()).unwrap_or_default();
            let request: ProviderRequest = serde_json::from_value(payload)
                .map_err(|e| Error::invalid_params(e.to_string()))?;
            Ok(match mode.mode.as_str() {
                "rewrite" => {
                    let mut rewritten = request.payload.clone();
                    rewritten["temperature"] = json!(0);
                    rewritten["model"] = json!(request.model.id);
                    HookResult::proceed().provider_payload(rewritten)
                }
                "scalar" => HookResult::proceed().provider_payload("just text"),
                "huge" => HookResult::proceed().provider_payload(json!(["x".repeat(800 * 1024)])),
                _ => HookResult::proceed(),
            })
        },
    );
    ext.hook(
        "before_provider_headers",
        |payload: Value| -> Result<HookResult> {
            let mode: Mode = serde_json::from_value(payload.clone()).unwrap_or_default();
            let headers: ProviderHeaders = serde_json::from_value(payload)
                .map_err(|e| Error::invalid_params(e.to_string()))?;
            Ok(match mode.mode.as_str() {
                "edit" => HookResult::proceed()
                    .set_header("x-extension", "api04")
                    .set_header_values("x-seen", headers.headers.keys().cloned())
                    .remove_header("x-remove-me"),
                "bad-name" => HookResult::proceed().set_header("bad name", "1"),
                "inject" => HookResult::proceed().set_header("x-a", "1\r\nx-injected: 1"),
                "given" => {
                    let given = mode.header;
                    let values = std::iter::repeat_n(given.values, given.repeat.max(1)).flatten();
                    HookResult::proceed().set_header_values(given.name, values)
                }
                _ => HookResult::proceed(),
            })
        },
    );
    ext.hook("after_provider_response", |_: Value| HookResult::proceed());
}

octet_guest::extension!(setup);
