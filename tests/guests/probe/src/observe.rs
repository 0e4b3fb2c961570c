//! Everything that is not a tool call: lifecycle, hooks, the `stats`
//! command, context, status and renderers (one of which never returns).

use std::rc::Rc;

use octet_guest::prelude::*;
use serde::Deserialize;

use crate::time::spin;
use crate::{Counters, object_schema};

/// The part of a `before_tool_call` payload the probe looks at.
#[derive(Deserialize)]
struct ToolCallPayload {
    name: String,
}

pub fn register(ext: &mut Extension, counters: &Rc<Counters>) {
    let seen = Rc::clone(counters);
    ext.on_lifecycle(LifecycleKind::ALL, move |_| {
        seen.lifecycle.set(seen.lifecycle.get() + 1)
    });

    // lifecycle_count {} → how many lifecycle events this instance has seen
    let seen = Rc::clone(counters);
    ext.tool(
        Tool::new(
            "lifecycle_count",
            "Count the lifecycle events this instance has seen",
        )
        .parameters(object_schema(json!({}))),
        move |_: Value| seen.lifecycle.get().to_string(),
    );

    // /stats → `lifecycle events: <n>, counter: <n>`;
    // /stats fail WHY → the handler fails with WHY
    let seen = Rc::clone(counters);
    ext.command(
        Command::new("stats", "Show the probe's counters").usage("/stats"),
        move |args: Vec<String>| -> Result<String, Error> {
            if args.first().map(String::as_str) == Some("fail") {
                return Err(Error::failed(args[1..].join(" ")));
            }
            Ok(format!(
                "lifecycle events: {}, counter: {}",
                seen.lifecycle.get(),
                seen.calls.get()
            ))
        },
    );

    ext.hook("before_prompt", |_: Value| HookResult::proceed());
    // after_response {"probe_fail": WHY} → the hook fails with WHY
    ext.hook(
        "after_response",
        |payload: Value| -> Result<HookResult, Error> {
            match payload.get("probe_fail").and_then(Value::as_str) {
                Some(why) => Err(Error::failed(why)),
                None => Ok(HookResult::proceed()),
            }
        },
    );
    ext.hook("before_tool_call", |payload: ToolCallPayload| {
        if payload.name == "forbidden" {
            HookResult::deny("probe forbids the tool `forbidden`")
        } else {
            HookResult::proceed()
        }
    });
    ext.hook("after_tool_call", |_: Value| HookResult::proceed());

    ext.context(|_: Option<String>| ContextItem::new("probe", "The probe extension is active."));
    ext.status("status", |surface: String| {
        StatusItem::new(surface, "probe")
    });

    ext.renderer("echo", |render: Render| {
        let output = render.output.as_deref().unwrap_or("waiting");
        Segment::new(format!("echo · {output}")).style_role("extension.probe.tool")
    });
    ext.renderer("spin", |_: Render| -> Vec<Segment> { spin() });
}
