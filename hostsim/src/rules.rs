//! The host's strict decoding of extension-originated params
//! (docs/protocol.md#shim-notifications). Each function returns the rule
//! broken and why, as the checker reports it.

use super::params::ApiVersion;
use super::rule::Rule;
use serde_json::{Map, Value};
use std::collections::BTreeSet;

type Checked = Result<(), (Rule, String)>;

/// `input/request` prompts longer than this are fatal
/// (docs/protocol.md#input-request).
const MAX_INPUT_PROMPT_BYTES: usize = 16 * 1024;
/// Decoration label / detail bounds (docs/services.md#progress-decoration).
const MAX_DECORATION_LABEL_BYTES: usize = 256;
const MAX_DECORATION_DETAIL_BYTES: usize = 4096;

fn invalid(detail: impl Into<String>) -> (Rule, String) {
    (Rule::InvalidParams, detail.into())
}

/// The params object, with every key in `allowed` and `required` present.
fn strict<'a>(
    what: &str,
    params: &'a Value,
    allowed: &[&str],
    required: &[&str],
) -> Result<&'a Map<String, Value>, (Rule, String)> {
    let object = params
        .as_object()
        .ok_or_else(|| invalid(format!("{what} params are not an object")))?;
    if let Some(key) = object.keys().find(|key| !allowed.contains(&key.as_str())) {
        return Err(invalid(format!("{what} params have unknown field `{key}`")));
    }
    if let Some(key) = required.iter().find(|key| !object.contains_key(**key)) {
        return Err(invalid(format!("{what} params lack `{key}`")));
    }
    Ok(object)
}

fn is_string(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::String(_)))
}

fn is_optional(value: Option<&Value>, check: fn(&Value) -> bool) -> bool {
    value.is_none_or(check)
}

fn is_optional_string_or_null(value: Option<&Value>) -> bool {
    is_optional(value, |v| v.is_string() || v.is_null())
}

/// `notification` params: `level?`, `title?`, `message`
/// (docs/protocol.md#notification).
pub(crate) fn notification_params(params: &Value) -> Checked {
    let object = strict(
        "notification",
        params,
        &["level", "title", "message"],
        &["message"],
    )?;
    let level_ok = is_optional(object.get("level"), |v| {
        matches!(v.as_str(), Some("info" | "success" | "warning" | "error"))
    });
    if !level_ok
        || !is_optional_string_or_null(object.get("title"))
        || !is_string(object.get("message"))
    {
        return Err(invalid("notification params have a wrong type or level"));
    }
    Ok(())
}

/// A context contribution: `label`, `content`, `placement?`
/// (docs/protocol.md#context-collect, docs/protocol.md#shim-notifications).
pub(crate) fn context_item(params: &Value) -> Checked {
    let object = strict(
        "context/contribution",
        params,
        &["label", "content", "placement"],
        &["label", "content"],
    )?;
    let placement_ok = is_optional(object.get("placement"), |v| {
        matches!(
            v.as_str(),
            Some("system_prefix" | "system_suffix" | "prompt_prefix" | "prompt_suffix")
        )
    });
    if !is_string(object.get("label")) || !is_string(object.get("content")) || !placement_ok {
        return Err(invalid(
            "context contribution has a wrong type or placement",
        ));
    }
    Ok(())
}

/// `status/contribution`: the surface must be declared
/// (docs/protocol.md#shim-notifications).
pub(crate) fn status_params(params: &Value, declared_ui: &[String]) -> Checked {
    let object = strict(
        "status/contribution",
        params,
        &["surface", "text", "style_role", "priority"],
        &["surface", "text"],
    )?;
    let surface = object["surface"]
        .as_str()
        .ok_or_else(|| invalid("status surface is not a string"))?;
    if !declared_ui.iter().any(|declared| declared == surface) {
        return Err((
            Rule::Undeclared,
            format!("status surface `{surface}` is not in contributes.ui"),
        ));
    }
    let priority_ok = is_optional(object.get("priority"), |v| {
        v.as_i64().is_some_and(|p| i32::try_from(p).is_ok())
    });
    if !is_string(object.get("text"))
        || !is_optional_string_or_null(object.get("style_role"))
        || !priority_ok
    {
        return Err(invalid("status contribution has a wrong type"));
    }
    Ok(())
}

/// `confirmation/request` params (docs/protocol.md#confirmation-request):
/// parent required on 0.2, absent on 0.1.
pub(crate) fn confirmation_params(params: &Value, api: ApiVersion) -> Checked {
    let (allowed, required): (&[&str], &[&str]) = match api {
        ApiVersion::V0_1 => (&["prompt", "detail", "destructive", "default"], &["prompt"]),
        ApiVersion::V0_2 | ApiVersion::V0_4 => (
            &[
                "parent_request_id",
                "prompt",
                "detail",
                "destructive",
                "default",
            ],
            &["parent_request_id", "prompt"],
        ),
    };
    let object = strict("confirmation/request", params, allowed, required)?;
    let is_bool = |v: &Value| v.is_boolean();
    if !is_optional(object.get("parent_request_id"), |v| v.as_u64().is_some())
        || !is_string(object.get("prompt"))
        || !is_optional_string_or_null(object.get("detail"))
        || !is_optional(object.get("destructive"), is_bool)
        || !is_optional(object.get("default"), is_bool)
    {
        return Err(invalid("confirmation/request params have a wrong type"));
    }
    Ok(())
}

/// `input/request` params (docs/protocol.md#input-request): non-blank prompt
/// of at most 16 KiB.
pub(crate) fn input_params(params: &Value) -> Checked {
    let object = strict(
        "input/request",
        params,
        &["parent_request_id", "prompt", "secret"],
        &["parent_request_id", "prompt"],
    )?;
    if object["parent_request_id"].as_u64().is_none()
        || !is_optional(object.get("secret"), Value::is_boolean)
    {
        return Err(invalid("input/request params have a wrong type"));
    }
    let prompt = object["prompt"]
        .as_str()
        .ok_or_else(|| invalid("input/request prompt is not a string"))?;
    if prompt.trim().is_empty() {
        return Err(invalid("input/request prompt is blank"));
    }
    if prompt.len() > MAX_INPUT_PROMPT_BYTES {
        return Err(invalid(format!(
            "input/request prompt is {} bytes (limit 16 KiB)",
            prompt.len()
        )));
    }
    Ok(())
}

/// `$/progress` (docs/protocol.md#progress): needs `request_progress`;
/// strict event shapes.
pub(crate) fn progress_params(params: &Value, features: &BTreeSet<String>) -> Checked {
    if !features.contains("request_progress") {
        return Err((
            Rule::NotNegotiated,
            "$/progress without negotiated request_progress".into(),
        ));
    }
    let object = strict(
        "$/progress",
        params,
        &["request_id", "sequence", "event"],
        &["request_id", "sequence", "event"],
    )?;
    if object["request_id"].as_u64().is_none() || object["sequence"].as_u64().is_none() {
        return Err(invalid("$/progress request_id/sequence are not u64"));
    }
    let event = &object["event"];
    match event.get("type").and_then(Value::as_str) {
        Some("status") => {
            let event = strict(
                "status event",
                event,
                &["type", "message", "current", "total", "unit"],
                &["type", "message"],
            )?;
            let count = |v: &Value| v.is_null() || v.as_u64().is_some();
            if !is_string(event.get("message"))
                || !is_optional(event.get("current"), count)
                || !is_optional(event.get("total"), count)
                || !is_optional_string_or_null(event.get("unit"))
            {
                return Err(invalid("status progress event has a wrong type"));
            }
        }
        Some("output") => {
            let event = strict(
                "output event",
                event,
                &["type", "stream", "encoding", "data"],
                &["type", "stream", "encoding", "data"],
            )?;
            let data = event["data"]
                .as_str()
                .ok_or_else(|| invalid("output data is not a string"))?;
            if !matches!(event["stream"].as_str(), Some("stdout" | "stderr")) {
                return Err(invalid("output stream is not stdout/stderr"));
            }
            match event["encoding"].as_str() {
                Some("utf8") => {}
                Some("base64") if is_base64(data) => {}
                Some("base64") => return Err(invalid("output data is not valid base64")),
                _ => return Err(invalid("output encoding is not utf8/base64")),
            }
        }
        Some("decoration") => {
            if !features.contains("progress_decoration") {
                return Err((
                    Rule::NotNegotiated,
                    "decoration event without negotiated progress_decoration".into(),
                ));
            }
            let event = strict(
                "decoration event",
                event,
                &["type", "label", "detail"],
                &["type", "label"],
            )?;
            let label_ok = event["label"].as_str().is_some_and(|label| {
                (1..=MAX_DECORATION_LABEL_BYTES).contains(&label.len()) && !has_control(label)
            });
            let detail_ok = is_optional(event.get("detail"), |v| {
                v.as_str().is_some_and(|detail| {
                    (1..=MAX_DECORATION_DETAIL_BYTES).contains(&detail.len())
                        && !has_control(detail)
                })
            });
            if !label_ok || !detail_ok {
                return Err(invalid("decoration label/detail out of bounds"));
            }
        }
        _ => return Err(invalid("unknown progress event type")),
    }
    Ok(())
}

/// C0, DEL and C1 control characters (forbidden in decorations).
fn has_control(text: &str) -> bool {
    text.chars().any(char::is_control)
}

/// Standard base64 with padding.
pub(crate) fn is_base64(data: &str) -> bool {
    let bytes = data.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let padding = bytes.iter().rev().take_while(|b| **b == b'=').count();
    padding <= 2
        && bytes[..bytes.len() - padding]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
}
