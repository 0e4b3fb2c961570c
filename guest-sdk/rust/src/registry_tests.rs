//! The registry without a host: what `describe` says and how tool calls are
//! parsed and converted.

use serde::Deserialize;
use serde_json::json;

use super::*;
use crate::bindings::octet::extension::types as wit;
use crate::{ContextItem, HookResult, Segment, StatusItem, ToolResult};

#[derive(Deserialize)]
struct Named {
    name: String,
}

fn call_tool(ext: &Extension, name: &str, args: &str) -> Result<wit::ToolResult> {
    let (_, run) = ext
        .tools
        .iter()
        .find(|(tool, _)| tool.name() == name)
        .expect("tool");
    run(args.to_owned(), &Call::detached())
}

fn text_of(result: &wit::ToolResult) -> Vec<&str> {
    result
        .content
        .iter()
        .filter_map(|part| match part {
            wit::ContentPart::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn sample() -> Extension {
    let mut ext = Extension::new("sample");
    ext.tool(Tool::new("plain", "One parameter"), |args: Named| {
        format!("hi {}", args.name)
    })
    .tool(
        Tool::new("with_call", "Two parameters"),
        |args: Value, cx: &Call| format!("{args} #{}", cx.request_id()),
    )
    .tool(Tool::new("rich", "ToolResult"), |_: Value| {
        ToolResult::text("a")
            .with_text("b")
            .metadata(json!({"k": 1}))
    })
    .tool(
        Tool::new("failing", "Error"),
        |_: Value| -> Result<String> { Err(Error::failed("nope")) },
    )
    .command(
        Command::new("hello", "Greet").usage("/hello [name]"),
        |args: Vec<String>| args.join(" "),
    )
    .hook("before_tool_call", |payload: Named| {
        if payload.name == "rm" {
            HookResult::deny("no")
        } else {
            HookResult::proceed()
        }
    })
    .context(|_: Option<String>| ContextItem::new("l", "c"))
    .status("status", |surface: String| StatusItem::new(surface, "ok"))
    .renderer("plain", |_: Render| Segment::new("r"))
    .on_lifecycle(
        [LifecycleKind::TurnSettled, LifecycleKind::TurnStarted],
        |_| {},
    )
    .on_lifecycle([LifecycleKind::TurnStarted], |_| {})
    .uses_progress()
    .uses_feature("request_progress")
    .max_concurrency(0);
    ext
}

#[test]
fn describe_lists_registrations_in_order() {
    let description = sample().describe();
    assert_eq!(description.name, "sample");
    let tools: Vec<&str> = description.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["plain", "with_call", "rich", "failing"]);
    assert_eq!(description.tools[0].parameters, r#"{"type":"object"}"#);
    assert_eq!(description.tools[0].output_schema, None);
    assert_eq!(
        description.commands[0].usage.as_deref(),
        Some("/hello [name]")
    );
    assert_eq!(description.hooks, ["before_tool_call"]);
    assert!(description.context);
    assert!(!description.menu);
    assert_eq!(description.status_surfaces, ["status"]);
    assert_eq!(description.renderers, ["plain"]);
    assert_eq!(
        description.lifecycle,
        [LifecycleKind::TurnSettled, LifecycleKind::TurnStarted]
    );
    assert_eq!(description.max_concurrency, 1, "concurrency is at least 1");
}

#[test]
fn features_are_explicit_plus_lifecycle_when_handled() {
    assert_eq!(
        sample().describe().features,
        ["request_progress", "lifecycle_events"]
    );
    let mut bare = Extension::new("bare");
    assert!(bare.describe().features.is_empty());
    bare.uses_progress_decoration();
    assert_eq!(
        bare.describe().features,
        ["request_progress", "progress_decoration"]
    );
}

#[test]
fn handlers_take_arguments_alone_or_with_the_call() {
    let ext = sample();
    assert_eq!(
        text_of(&call_tool(&ext, "plain", r#"{"name":"Ada"}"#).unwrap()),
        ["hi Ada"]
    );
    let with_call = call_tool(&ext, "with_call", r#"{"x":1}"#).unwrap();
    assert_eq!(text_of(&with_call), [r#"{"x":1} #0"#]);
}

#[test]
fn arguments_that_do_not_fit_are_invalid_params() {
    let error = call_tool(&sample(), "plain", r#"{"name":false}"#)
        .unwrap_err()
        .into_wit();
    match error {
        wit::Error::InvalidParams(message) => {
            assert!(message.contains("invalid type"), "{message}")
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn results_and_errors_convert() {
    let ext = sample();
    let rich = call_tool(&ext, "rich", "{}").unwrap();
    assert_eq!(text_of(&rich), ["a", "b"]);
    assert_eq!(rich.metadata.as_deref(), Some(r#"{"k":1}"#));
    assert_eq!(rich.structured_content, None);
    let error = call_tool(&ext, "failing", "{}").unwrap_err().into_wit();
    assert_eq!(error, wit::Error::Failed("nope".into()));
}

#[test]
fn hooks_get_typed_payloads() {
    let ext = sample();
    let (_, run) = &ext.hooks[0];
    let denied = run(r#"{"name":"rm","arguments":{}}"#.into(), &Call::detached()).unwrap();
    assert_eq!(denied.disposition, wit::Disposition::Deny("no".into()));
    let allowed = run(r#"{"name":"ls","arguments":{}}"#.into(), &Call::detached()).unwrap();
    assert_eq!(allowed.disposition, wit::Disposition::Continue);
}

#[test]
#[should_panic(expected = "tool `plain` is registered twice")]
fn duplicate_registrations_panic() {
    let mut ext = sample();
    ext.tool(Tool::new("plain", "again"), |_: Value| "x");
}

#[test]
fn dynamic_tools_have_handlers_but_are_not_described() {
    let mut ext = Extension::new("dynamic");
    ext.uses_artifacts().uses_dynamic_tools().uses_approvals();
    ext.tool(
        Tool::new("base", "In the initial catalog"),
        |_: Value| "base",
    );
    ext.dynamic_tool(Tool::new("later", "Registered at run time"), |_: Value| {
        ToolResult::text("later").with_image("artifact_1", "image/png", None)
    });
    let description = ext.describe();
    let names: Vec<&str> = description.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["base"]);
    assert_eq!(
        description.features,
        ["artifacts", "dynamic_tools", "policy_intents", "approvals"]
    );
    let (_, run) = &ext.dynamic_tools[0];
    let result = run("{}".to_owned(), &Call::detached()).unwrap();
    assert_eq!(result.content.len(), 2);
}

#[test]
#[should_panic(expected = "registered twice")]
fn a_dynamic_tool_cannot_shadow_a_static_one() {
    let mut ext = Extension::new("dynamic");
    ext.tool(Tool::new("same", "Static"), |_: Value| "a");
    ext.dynamic_tool(Tool::new("same", "Dynamic"), |_: Value| "b");
}

#[test]
fn prompt_metadata_declares_its_feature_and_reaches_the_definition() {
    let mut ext = Extension::new("prompted");
    ext.tool(Tool::new("plain", "No metadata"), |_: Value| "x");
    assert!(ext.describe().features.is_empty());
    ext.dynamic_tool(
        Tool::new("later", "Registered at run time")
            .prompt_snippet("later: a tool that arrives late")
            .prompt_guideline("Call it after plain")
            .prompt_guideline("Never twice"),
        |_: Value| "y",
    );
    let description = ext.describe();
    assert_eq!(description.features, ["tool_prompt_metadata_v1"]);
    let (tool, _) = &ext.dynamic_tools[0];
    let wit = tool.to_wit();
    assert_eq!(
        wit.prompt_snippet.as_deref(),
        Some("later: a tool that arrives late")
    );
    assert_eq!(
        wit.prompt_guidelines,
        ["Call it after plain", "Never twice"]
    );
    assert!(description.tools[0].prompt_snippet.is_none());
}
