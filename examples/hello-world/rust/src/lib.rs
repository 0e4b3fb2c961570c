//! hello-world (API 0.1): the whole API 0.1 surface in one small extension —
//! a tool, a command, two hooks, context, a status line and a renderer.

use octet_guest::prelude::*;
use serde::Deserialize;

/// The name greeted when none is given.
const DEFAULT_NAME: &str = "tinkerer";

#[derive(Deserialize)]
struct HelloArgs {
    #[serde(default = "default_name")]
    name: String,
}

fn default_name() -> String {
    DEFAULT_NAME.to_owned()
}

fn greeting(name: &str) -> String {
    format!("Hello, {name}!")
}

fn setup(ext: &mut Extension) {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": false,
    });
    ext.tool(
        Tool::new("hello_world", "Greet someone from an executable extension").parameters(schema),
        |args: HelloArgs| -> Result<String> {
            let message = format!("hello_world greeted {}", args.name);
            octet_guest::notify(NotifyLevel::Success, message)?;
            Ok(greeting(&args.name))
        },
    );
    ext.command(
        Command::new("hello", "Show a greeting notification").usage("/hello [name]"),
        |args: Vec<String>| greeting(args.first().map_or(DEFAULT_NAME, String::as_str)),
    );
    ext.hook("before_prompt", |_: Value| HookResult::proceed());
    ext.hook("after_response", |_: Value| HookResult::proceed());
    ext.context(|_: Option<String>| {
        ContextItem::new("hello-world", "The hello-world extension is active.")
            .placement(Placement::SystemSuffix)
    });
    ext.status("status", |surface: String| {
        StatusItem::new(surface, "hello").style_role("extension.hello_world.status")
    });
    ext.renderer("hello_world", |render: Render| {
        // Like the Python original (`output or "waiting"`): empty is no output.
        let output = render
            .output
            .as_deref()
            .filter(|o| !o.is_empty())
            .unwrap_or("waiting");
        Segment::new(format!("hello_world · {output}")).style_role("extension.hello_world.tool")
    });
}

octet_guest::extension!(setup);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_name_defaults_to_tinkerer() {
        let args: HelloArgs = serde_json::from_str("{}").unwrap();
        assert_eq!(greeting(&args.name), "Hello, tinkerer!");
    }
}
