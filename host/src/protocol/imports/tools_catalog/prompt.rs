//! Tool prompt metadata (API 0.4, `tool_prompt_metadata_v1`): a snippet the
//! host may put in the system prompt's tool list and guidelines for the
//! model. The host refuses the whole catalog for one string out of bounds,
//! so every definition is checked before it reaches the wire, and the
//! metadata is sent only where it was negotiated: on any other wire the key
//! is fatal, so it is left out (the tool still works, the model just sees
//! less).

use crate::runtime::types::ToolDefinition;
use serde_json::{Map, Value, json};

/// Most bytes of the snippet and of each guideline.
pub const MAX_TEXT_BYTES: usize = 1024;
/// Most guidelines per tool.
pub const MAX_GUIDELINES: usize = 16;

/// Whether the tool carries prompt metadata.
pub fn has(tool: &ToolDefinition) -> bool {
    tool.prompt_snippet.is_some() || !tool.prompt_guidelines.is_empty()
}

/// Checks the tool's metadata against the host's bounds; `Ok` holds the
/// bytes it adds to the catalog (they count toward its 4 MiB budget).
pub fn check(tool: &ToolDefinition) -> Result<usize, String> {
    let mut bytes = 0;
    if let Some(snippet) = &tool.prompt_snippet {
        check_text(snippet).map_err(|why| format!("tool {}: prompt_snippet {why}", tool.name))?;
        bytes += snippet.len();
    }
    if tool.prompt_guidelines.len() > MAX_GUIDELINES {
        return Err(format!(
            "tool {} has {} prompt guidelines; the limit is {MAX_GUIDELINES}",
            tool.name,
            tool.prompt_guidelines.len()
        ));
    }
    for (index, guideline) in tool.prompt_guidelines.iter().enumerate() {
        check_text(guideline)
            .map_err(|why| format!("tool {}: prompt guideline {} {why}", tool.name, index + 1))?;
        bytes += guideline.len();
    }
    Ok(bytes)
}

fn check_text(text: &str) -> Result<(), String> {
    if text.len() > MAX_TEXT_BYTES {
        return Err(format!(
            "has {} bytes; the limit is {MAX_TEXT_BYTES}",
            text.len()
        ));
    }
    if let Some(c) = text
        .chars()
        .find(|c| c.is_control() && *c != '\n' && *c != '\t')
    {
        return Err(format!(
            "contains the control character U+{:04X} (only LF and TAB are allowed)",
            u32::from(c)
        ));
    }
    Ok(())
}

/// Adds the tool's metadata to its wire definition, when negotiated.
pub fn insert(object: &mut Map<String, Value>, tool: &ToolDefinition, negotiated: bool) {
    if !negotiated {
        return;
    }
    if let Some(snippet) = &tool.prompt_snippet {
        object.insert("prompt_snippet".into(), json!(snippet));
    }
    if !tool.prompt_guidelines.is_empty() {
        object.insert("prompt_guidelines".into(), json!(tool.prompt_guidelines));
    }
}

/// Logs, once for all of them, the tools whose metadata the wire cannot
/// carry.
pub fn warn_dropped<'a>(tools: impl IntoIterator<Item = &'a ToolDefinition>, why: &str) {
    let names: Vec<&str> = tools
        .into_iter()
        .filter(|tool| has(tool))
        .map(|tool| tool.name.as_str())
        .collect();
    if !names.is_empty() {
        crate::guest_log!(crate::log::Level::Warning, "tool prompt metadata left out: this wire cannot carry it",
            "tools" => names, "why" => why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(snippet: Option<&str>, guidelines: &[&str]) -> ToolDefinition {
        ToolDefinition {
            name: "t".into(),
            description: "d".into(),
            parameters: "{}".into(),
            output_schema: None,
            prompt_snippet: snippet.map(str::to_owned),
            prompt_guidelines: guidelines.iter().map(|g| (*g).to_owned()).collect(),
        }
    }

    #[test]
    fn bounds_are_the_hosts() {
        let at_limit = "é".repeat(MAX_TEXT_BYTES / 2);
        assert_eq!(check(&tool(Some(&at_limit), &[])), Ok(MAX_TEXT_BYTES));
        let over = format!("{at_limit}x");
        assert_eq!(
            check(&tool(Some(&over), &[])).unwrap_err(),
            "tool t: prompt_snippet has 1025 bytes; the limit is 1024"
        );
        assert!(check(&tool(None, &["a\tb\nc"])).is_ok());
        assert_eq!(
            check(&tool(None, &["ok", "a\rb"])).unwrap_err(),
            "tool t: prompt guideline 2 contains the control character U+000D (only LF and TAB are allowed)"
        );
        let sixteen = vec!["g"; 16];
        assert_eq!(check(&tool(None, &sixteen)), Ok(16));
        let seventeen = vec!["g"; 17];
        assert_eq!(
            check(&tool(None, &seventeen)).unwrap_err(),
            "tool t has 17 prompt guidelines; the limit is 16"
        );
        assert!(
            check(&tool(Some("\u{85}"), &[])).is_err(),
            "C1 controls too"
        );
    }

    #[test]
    fn sent_only_when_negotiated() {
        let t = tool(Some("s"), &["g"]);
        let mut object = Map::new();
        insert(&mut object, &t, false);
        assert!(object.is_empty());
        insert(&mut object, &t, true);
        assert_eq!(
            Value::Object(object),
            json!({"prompt_snippet": "s", "prompt_guidelines": ["g"]})
        );
    }
}
