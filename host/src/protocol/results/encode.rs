//! Guest answers turned into wire results, with every bound of
//! docs/protocol.md#result-bounds checked before anything is written. A
//! violation is a [`ResultError`] naming the bound; the server answers it as
//! -32603 (the SDK's "invalid handler result"), never as a frame the host
//! would reject.

use super::error::{ResultError, fail};
use crate::protocol::bounds::{JsonBounds, check_json};
use crate::protocol::guest_json;
use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::handshake::hook::Hook;
use crate::runtime::types::*;
use serde_json::{Map, Value, json};

/// Most content parts in one result (docs/protocol.md#tool-results).
pub const MAX_PARTS: usize = 256;
/// Bounds of `structured_content` (docs/protocol.md#result-bounds).
pub const STRUCTURED: JsonBounds = JsonBounds {
    name: "structured_content",
    max_bytes: 256 * 1024,
    max_depth: 32,
    max_nodes: 16_384,
    max_key_bytes: None,
};
/// Bounds of `metadata` (docs/protocol.md#result-bounds).
pub const METADATA: JsonBounds = JsonBounds {
    name: "metadata",
    max_bytes: 64 * 1024,
    max_depth: 32,
    max_nodes: 16_384,
    max_key_bytes: Some(256),
};
/// Renderer bounds (docs/protocol.md#tool-render).
pub const MAX_SEGMENTS: usize = 128;
pub const MAX_SEGMENT_TEXT: usize = 8 * 1024;
pub const MAX_STYLE_ROLE: usize = 128;

/// What the shim knows of the tool being answered.
pub struct ToolShape<'a> {
    pub name: &'a str,
    /// The tool's compiled output schema, when it declared one (API 0.2).
    pub output_schema: Option<&'a jsonschema::Validator>,
    pub artifacts: bool,
}

/// A tool result for the wire (docs/protocol.md#tool-results). API 0.1 joins
/// the text parts into the legacy string.
pub fn tool_result(
    api: ApiVersion,
    shape: &ToolShape<'_>,
    result: ToolResult,
) -> Result<Value, ResultError> {
    if result.content.is_empty() {
        return fail("tool result content is empty (at least one text part is required)");
    }
    if result.content.len() > MAX_PARTS {
        return fail(format!(
            "tool result has {} content parts; the limit is {MAX_PARTS}",
            result.content.len()
        ));
    }
    if !result
        .content
        .iter()
        .any(|p| matches!(p, ContentPart::Text(_)))
    {
        return fail("tool result has no text part (at least one is required)");
    }
    let metadata = match &result.metadata {
        None => json!({}),
        Some(text) => {
            let value = parse_bounded(text, &METADATA)?;
            if !value.is_object() {
                return fail("tool result metadata must be a JSON object");
            }
            check_json(&value, &METADATA).map_err(ResultError)?;
            value
        }
    };
    match api {
        ApiVersion::V0_1 => legacy_tool_result(result, metadata),
        ApiVersion::V0_2 | ApiVersion::V0_4 => typed_tool_result(shape, result, metadata),
    }
}

fn legacy_tool_result(result: ToolResult, metadata: Value) -> Result<Value, ResultError> {
    let mut texts = Vec::with_capacity(result.content.len());
    for part in result.content {
        match part {
            ContentPart::Text(text) => texts.push(text),
            _ => {
                return fail(
                    "image and audio parts need API 0.2 with artifacts; API 0.1 results are text only",
                );
            }
        }
    }
    if result.structured_content.is_some() {
        return fail("structured_content is not allowed on API 0.1");
    }
    Ok(json!({ "content": texts.join("\n"), "is_error": result.is_error, "metadata": metadata }))
}

fn typed_tool_result(
    shape: &ToolShape<'_>,
    result: ToolResult,
    metadata: Value,
) -> Result<Value, ResultError> {
    let mut parts = Vec::with_capacity(result.content.len());
    for part in result.content {
        parts.push(match part {
            ContentPart::Text(text) => json!({ "type": "text", "text": text }),
            ContentPart::Image(image) => {
                if !shape.artifacts {
                    return fail("image parts need the negotiated `artifacts` feature");
                }
                let mut object = json!({ "type": "image", "artifact_id": image.artifact_id, "mime_type": image.mime_type });
                if let Some(alt) = image.alt {
                    object["alt"] = json!(alt);
                }
                object
            }
            ContentPart::Audio(audio) => {
                if !shape.artifacts {
                    return fail("audio parts need the negotiated `artifacts` feature");
                }
                let mut object = json!({ "type": "audio", "artifact_id": audio.artifact_id, "mime_type": audio.mime_type });
                if let Some(transcript) = audio.transcript {
                    object["transcript"] = json!(transcript);
                }
                object
            }
        });
    }
    let mut object = Map::new();
    object.insert("content".into(), Value::Array(parts));
    match (&result.structured_content, shape.output_schema) {
        (Some(_), None) => {
            return fail(format!(
                "tool {} returned structured_content but declares no output_schema",
                shape.name
            ));
        }
        (None, Some(_)) if !result.is_error => {
            return fail(format!(
                "tool {} declares an output_schema but returned no structured_content",
                shape.name
            ));
        }
        (Some(text), Some(validator)) => {
            let value = parse_bounded(text, &STRUCTURED)?;
            check_json(&value, &STRUCTURED).map_err(ResultError)?;
            if let Err(error) = validator.validate(&value) {
                return fail(format!(
                    "structured_content does not match the output_schema of tool {}: {error}",
                    shape.name
                ));
            }
            object.insert("structured_content".into(), value);
        }
        _ => {}
    }
    object.insert("is_error".into(), json!(result.is_error));
    object.insert("metadata".into(), metadata);
    Ok(Value::Object(object))
}

/// A guest's own error as a sentence for logs and start-up errors (the
/// generated `Debug` text is for programmers, not for the user).
pub fn guest_error_text(error: &GuestError) -> String {
    match error {
        GuestError::InvalidParams(message) => format!("invalid parameters: {message}"),
        GuestError::Cancelled => "cancelled".to_owned(),
        GuestError::Failed(message) => message.clone(),
        GuestError::Rpc(error) => format!("error {}: {}", error.code, error.message),
    }
}

/// The SDK's answer for a failed tool handler: an `is_error` result.
pub fn tool_failure(api: ApiVersion, text: &str) -> Value {
    match api {
        ApiVersion::V0_1 => json!({ "content": text, "is_error": true, "metadata": {} }),
        ApiVersion::V0_2 | ApiVersion::V0_4 => {
            json!({ "content": [{ "type": "text", "text": text }], "is_error": true, "metadata": {} })
        }
    }
}

/// The params of a `notification` frame, in the SDK's member order
/// (`level`, `message`, then `title` only when there is one).
pub fn notification(n: &Notification) -> Value {
    let mut object = Map::new();
    object.insert("level".into(), json!(notify_level(n.level)));
    object.insert("message".into(), json!(n.message));
    if let Some(title) = &n.title {
        object.insert("title".into(), json!(title));
    }
    Value::Object(object)
}

/// A notification inside a command or hook result, in the protocol's
/// shape `{"level", "title", "message"}` with `"title": null` kept (the
/// WIT cannot tell an absent title from a null one; the SDK passes a
/// handler's `"title": None` through).
pub fn result_notification(n: &Notification) -> Value {
    json!({ "level": notify_level(n.level), "title": n.title, "message": n.message })
}

fn notify_level(level: NotifyLevel) -> &'static str {
    match level {
        NotifyLevel::Info => "info",
        NotifyLevel::Success => "success",
        NotifyLevel::Warning => "warning",
        NotifyLevel::Error => "error",
    }
}

pub fn context_item(item: &ContextItem) -> Value {
    let placement = match item.placement {
        Placement::SystemPrefix => "system_prefix",
        Placement::SystemSuffix => "system_suffix",
        Placement::PromptPrefix => "prompt_prefix",
        Placement::PromptSuffix => "prompt_suffix",
    };
    json!({ "label": item.label, "content": item.content, "placement": placement })
}

pub fn context_items(items: &[ContextItem]) -> Value {
    Value::Array(items.iter().map(context_item).collect())
}

pub fn status_item(item: &StatusItem) -> Value {
    let mut object = Map::new();
    object.insert("surface".into(), json!(item.surface));
    object.insert("text".into(), json!(item.text));
    if let Some(role) = &item.style_role {
        object.insert("style_role".into(), json!(role));
    }
    object.insert("priority".into(), json!(item.priority));
    Value::Object(object)
}

pub fn command_result(result: &CommandResult) -> Value {
    json!({
        "text": result.text,
        "notifications": result.notifications.iter().map(result_notification).collect::<Vec<_>>(),
        "context": context_items(&result.context),
    })
}

/// The default hook answer (no handler): continue, nothing added.
pub fn default_hook_result() -> Value {
    json!({ "disposition": { "action": "continue" }, "context": [], "notifications": [] })
}

/// A hook result; typed extras are only sent for their own hook
/// (docs/protocol.md#hook-run).
pub fn hook_result(hook: &str, result: HookResult) -> Result<Value, ResultError> {
    // An unknown name has no typed extras.
    let hook = Hook::parse(hook);
    let disposition = match &result.disposition {
        Disposition::Continue => json!({ "action": "continue" }),
        Disposition::Deny(reason) => json!({ "action": "deny", "reason": reason }),
    };
    let mut object = Map::new();
    object.insert("disposition".into(), disposition);
    object.insert("context".into(), context_items(&result.context));
    object.insert(
        "notifications".into(),
        Value::Array(
            result
                .notifications
                .iter()
                .map(result_notification)
                .collect(),
        ),
    );
    if hook == Some(Hook::ProviderRetry)
        && let Some(decision) = &result.provider_retry
    {
        let value = match decision {
            RetryDecision::Retry => json!("retry"),
            RetryDecision::Stop => json!("stop"),
            RetryDecision::Delay(ms) => json!({ "delay": { "additional_delay_ms": ms } }),
        };
        object.insert("provider_retry".into(), value);
    }
    if hook == Some(Hook::BeforePersistence)
        && let Some(meta) = &result.persistence_metadata
    {
        let value = parse_bounded(&meta.value, &crate::protocol::bounds::PERSISTENCE_VALUE)?;
        check_json(&value, &crate::protocol::bounds::PERSISTENCE_VALUE).map_err(ResultError)?;
        object.insert(
            "persistence_metadata".into(),
            json!({ "value": value, "public": meta.public }),
        );
    }
    if hook == Some(Hook::PostMutation)
        && let Some(decision) = &result.post_mutation
    {
        let value = match decision {
            RescanDecision::NoRescan => json!({ "action": "no_rescan" }),
            RescanDecision::RequestRescan(ids) => {
                if ids.is_empty() || ids.len() > 32 {
                    return fail(format!(
                        "post_mutation request_rescan needs 1 to 32 resource ids, got {}",
                        ids.len()
                    ));
                }
                json!({ "action": "request_rescan", "resource_ids": ids })
            }
        };
        object.insert("post_mutation".into(), value);
    }
    if let Some(hook) = hook {
        super::hook_extras::add(hook, &result, &mut object)?;
    }
    Ok(Value::Object(object))
}

/// `{"segments": [...]}` with the renderer bounds (docs/protocol.md#tool-render).
pub fn segments(segments: &[Segment]) -> Result<Value, ResultError> {
    if segments.len() > MAX_SEGMENTS {
        return fail(format!(
            "rendering has {} segments; the limit is {MAX_SEGMENTS}",
            segments.len()
        ));
    }
    let mut out = Vec::with_capacity(segments.len());
    for segment in segments {
        if segment.text.len() > MAX_SEGMENT_TEXT {
            return fail(format!(
                "a rendering segment has {} bytes of text; the limit is {MAX_SEGMENT_TEXT}",
                segment.text.len()
            ));
        }
        if segment
            .text
            .chars()
            .any(|c| c.is_control() && c != '\t' && c != '\n')
        {
            return fail(
                "a rendering segment contains a control character (only TAB and LF are allowed)",
            );
        }
        if let Some(role) = &segment.style_role
            && (role.is_empty()
                || role.len() > MAX_STYLE_ROLE
                || role.chars().any(char::is_control))
        {
            return fail(format!(
                "a rendering style_role must be 1 to {MAX_STYLE_ROLE} bytes without control characters"
            ));
        }
        out.push(json!({ "text": segment.text, "style_role": segment.style_role }));
    }
    Ok(json!({ "segments": out }))
}

/// A guest-provided menu (docs/protocol.md#menu-collect), parsed and bounded
/// by size; the host validates the structure and discards an invalid menu as
/// a whole.
pub fn menu(text: &str) -> Result<Value, ResultError> {
    if text.len() > 256 * 1024 {
        return fail(format!(
            "menu of {} bytes exceeds the 256 KiB limit",
            text.len()
        ));
    }
    let value = parse_json(text, "the menu")?;
    if !value.is_object() {
        return fail("menu must be a JSON object");
    }
    Ok(value)
}

/// Guest JSON for a place with no bound of its own (the guest-wide depth
/// bound applies).
pub fn parse_json(text: &str, what: &str) -> Result<Value, ResultError> {
    guest_json::parse(text, what).map_err(|err| ResultError(err.into()))
}

/// Guest JSON for a place the protocol bounds, its depth checked on the
/// text before parsing.
fn parse_bounded(text: &str, bounds: &JsonBounds) -> Result<Value, ResultError> {
    guest_json::parse_within(text, bounds.name, bounds.max_depth)
        .map_err(|err| ResultError(err.into()))
}

/// The `data` of a guest's own JSON-RPC error. Data octet could not read
/// makes the whole answer an invalid handler result rather than a frame
/// the host dies of.
pub fn error_data(text: &str) -> Result<Value, ResultError> {
    parse_json(text, "the error data")
}
#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
