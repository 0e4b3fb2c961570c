//! Tools that call the host's services: progress, notifications,
//! confirmations and input.

use octet_guest::prelude::*;
use octet_guest::{NotifyLevel, ProgressStatus};
use serde::Deserialize;

use crate::object_schema;

#[derive(Deserialize)]
struct Count {
    count: u64,
}

#[derive(Deserialize)]
struct Decorate {
    label: String,
    #[serde(default)]
    detail: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    message: String,
}

#[derive(Deserialize)]
struct Prompt {
    prompt: String,
}

#[derive(Deserialize)]
struct Input {
    prompt: String,
    #[serde(default)]
    secret: bool,
}

pub fn register(ext: &mut Extension) {
    let count = || object_schema(json!({"count": {"type": "integer", "minimum": 0}}));
    // progress {count} → `count` status events (`step i/count`), then `done`;
    // a refused event (API 0.1, feature not negotiated) fails the call
    ext.tool(
        Tool::new("progress", "Report progress, then finish").parameters(count()),
        |args: Count| -> Result<String> {
            for i in 1..=args.count {
                octet_guest::progress(ProgressStatus::new("step").step(i, args.count))?;
            }
            Ok("done".to_owned())
        },
    );
    // progress_then_fail {count} → `count` status events, then error
    // `failed("failed after progress")`
    ext.tool(
        Tool::new("progress_then_fail", "Report progress, then fail").parameters(count()),
        |args: Count| -> Result<String> {
            for i in 1..=args.count {
                octet_guest::progress(ProgressStatus::new("step").step(i, args.count))?;
            }
            Err(Error::failed("failed after progress"))
        },
    );
    // decorate {label, detail?} → one decoration event, then `decorated`
    ext.tool(
        Tool::new("decorate", "Set the request's decoration").parameters(json!({
            "type": "object",
            "properties": {"label": {"type": "string"}, "detail": {"type": "string"}},
            "required": ["label"],
        })),
        |args: Decorate| -> Result<String> {
            octet_guest::progress_decoration(args.label, args.detail)?;
            Ok("decorated".to_owned())
        },
    );
    // notify {message} → an info notification, then `notified`
    ext.tool(
        Tool::new("notify", "Show a notification")
            .parameters(object_schema(json!({"message": {"type": "string"}}))),
        |args: Message| -> Result<String> {
            octet_guest::notify(NotifyLevel::Info, args.message)?;
            Ok("notified".to_owned())
        },
    );
    // confirm {prompt} → `confirmed: true` / `confirmed: false`
    ext.tool(
        Tool::new("confirm", "Ask the user to confirm")
            .parameters(object_schema(json!({"prompt": {"type": "string"}}))),
        |args: Prompt| -> Result<String> {
            Ok(format!("confirmed: {}", octet_guest::confirm(args.prompt)?))
        },
    );
    // input {prompt, secret?} → the answer itself (even a secret one: this is
    // a test fixture), or `no input`
    ext.tool(
        Tool::new("input", "Ask the user for text").parameters(json!({
            "type": "object",
            "properties": {"prompt": {"type": "string"}, "secret": {"type": "boolean"}},
            "required": ["prompt"],
        })),
        |args: Input| -> Result<String> {
            let answer = octet_guest::request_input(&args.prompt, args.secret)?;
            Ok(answer.unwrap_or_else(|| "no input".to_owned()))
        },
    );
}
