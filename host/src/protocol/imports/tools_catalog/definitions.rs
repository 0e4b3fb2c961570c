//! The guest's tool and command catalog, checked once against the host's
//! definition rules (docs/protocol.md#definitions) so the initialize reply
//! can never be rejected for a malformed definition.

use crate::protocol::guest_json;
use crate::protocol::handshake::api_version::ApiVersion;
use crate::runtime::types::Description;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// Most tools and commands in a catalog (docs/protocol.md#definitions,
/// docs/protocol.md#host-validation).
pub const MAX_TOOLS: usize = 256;
pub const MAX_COMMANDS: usize = 256;
/// Aggregate bytes of every tool's parameters, output schema and prompt
/// metadata.
pub const MAX_SCHEMA_BYTES: usize = 4 << 20;

/// A tool the shim dispatches, with its compiled output schema.
pub struct ToolEntry {
    pub output_schema: Option<jsonschema::Validator>,
}

/// Tools by name.
pub struct Catalog {
    pub tools: HashMap<String, ToolEntry>,
    pub commands: BTreeSet<String>,
}

/// Whether `name` is a valid tool or command identifier: 1–64 bytes,
/// `[A-Za-z_][A-Za-z0-9_.-]*`.
pub fn is_identifier(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=64).contains(&bytes.len())
        && (bytes[0].is_ascii_alphabetic() || bytes[0] == b'_')
        && bytes[1..]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Checks the guest's definitions and builds the catalog. Errors name the
/// definition and the rule.
pub fn build(api: ApiVersion, description: &Description) -> Result<Catalog, String> {
    if description.tools.len() > MAX_TOOLS {
        return Err(format!(
            "the guest declares {} tools; the limit is {MAX_TOOLS}",
            description.tools.len()
        ));
    }
    if description.commands.len() > MAX_COMMANDS {
        return Err(format!(
            "the guest declares {} commands; the limit is {MAX_COMMANDS}",
            description.commands.len()
        ));
    }
    let mut tools = HashMap::new();
    let mut schema_bytes = 0usize;
    for tool in &description.tools {
        if !is_identifier(&tool.name) {
            return Err(format!(
                "tool name {:?} is not an identifier (1-64 bytes of [A-Za-z_][A-Za-z0-9_.-]*)",
                tool.name
            ));
        }
        if tool.description.trim().is_empty() {
            return Err(format!("tool {} has an empty description", tool.name));
        }
        let parameters = guest_json::parse(
            &tool.parameters,
            &format!("the parameter schema of tool {}", tool.name),
        )?;
        if !parameters.is_object() {
            return Err(format!(
                "tool {}: parameters must be a JSON object (a JSON Schema)",
                tool.name
            ));
        }
        schema_bytes += tool.parameters.len();
        schema_bytes += super::prompt::check(tool)?;
        let output_schema = match (&tool.output_schema, api) {
            (Some(text), api) if api.negotiates() => {
                schema_bytes += text.len();
                let schema =
                    guest_json::parse(text, &format!("the output_schema of tool {}", tool.name))?;
                check_output_schema(&schema, 1)
                    .map_err(|err| format!("tool {}: output_schema: {err}", tool.name))?;
                Some(jsonschema::validator_for(&schema).map_err(|err| {
                    format!(
                        "tool {}: output_schema is not a valid JSON Schema: {err}",
                        tool.name
                    )
                })?)
            }
            _ => None,
        };
        if tools
            .insert(tool.name.clone(), ToolEntry { output_schema })
            .is_some()
        {
            return Err(format!("tool {} is declared twice", tool.name));
        }
    }
    if schema_bytes > MAX_SCHEMA_BYTES {
        return Err(format!(
            "the tool schemas take {schema_bytes} bytes together; the limit is {MAX_SCHEMA_BYTES}"
        ));
    }
    let mut commands = BTreeSet::new();
    for command in &description.commands {
        if !is_identifier(&command.name) {
            return Err(format!(
                "command name {:?} is not an identifier (no leading '/')",
                command.name
            ));
        }
        if command.description.trim().is_empty() {
            return Err(format!("command {} has an empty description", command.name));
        }
        if !commands.insert(command.name.clone()) {
            return Err(format!("command {} is declared twice", command.name));
        }
    }
    Ok(Catalog { tools, commands })
}

const SCHEMA_KEYWORDS: &[&str] = &[
    "$schema",
    "title",
    "description",
    "default",
    "examples",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "allOf",
    "anyOf",
    "oneOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];
const SCHEMA_TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];

/// The restricted JSON Schema subset the host accepts for `output_schema`.
fn check_output_schema(schema: &Value, depth: usize) -> Result<(), String> {
    if depth > 32 {
        return Err("nested deeper than 32 levels".into());
    }
    let Value::Object(map) = schema else {
        return Err("every schema node must be an object".into());
    };
    for (key, value) in map {
        if !SCHEMA_KEYWORDS.contains(&key.as_str()) {
            return Err(format!("keyword {key:?} is not allowed"));
        }
        match key.as_str() {
            "type" => {
                let names: Vec<&Value> = match value {
                    Value::Array(items) => items.iter().collect(),
                    other => vec![other],
                };
                if names.is_empty()
                    || names
                        .iter()
                        .any(|n| !n.as_str().is_some_and(|s| SCHEMA_TYPES.contains(&s)))
                {
                    return Err(format!(
                        "type {value} is not a JSON type name or a list of them"
                    ));
                }
            }
            "properties" => {
                let props = value.as_object().ok_or("properties must be an object")?;
                for (name, sub) in props {
                    if name.len() > 256 {
                        return Err(format!("property name of {} bytes exceeds 256", name.len()));
                    }
                    check_output_schema(sub, depth + 1)?;
                }
            }
            "items" => check_output_schema(value, depth + 1)?,
            "additionalProperties" if !value.is_boolean() => check_output_schema(value, depth + 1)?,
            "allOf" | "anyOf" | "oneOf" => {
                let items = value
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .ok_or(format!("{key} must be a non-empty array"))?;
                for sub in items {
                    check_output_schema(sub, depth + 1)?;
                }
            }
            "enum" if value.as_array().is_none_or(|a| a.is_empty()) => {
                return Err("enum must be a non-empty array".into());
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum"
                if !value.is_number() =>
            {
                return Err(format!("{key} must be a number"));
            }
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties"
                if value.as_u64().is_none() =>
            {
                return Err(format!("{key} must be a non-negative integer"));
            }
            "uniqueItems" if !value.is_boolean() => {
                return Err("uniqueItems must be a boolean".into());
            }
            "required"
                if !value
                    .as_array()
                    .is_some_and(|a| a.iter().all(Value::is_string)) =>
            {
                return Err("required must be an array of strings".into());
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers() {
        assert!(
            is_identifier("hello_world")
                && is_identifier("_a.b-c")
                && is_identifier(&"a".repeat(64))
        );
        assert!(
            !is_identifier("")
                && !is_identifier("1a")
                && !is_identifier("/hello")
                && !is_identifier(&"a".repeat(65))
        );
    }

    fn one_tool(parameters: String, output_schema: Option<String>) -> Description {
        Description {
            name: "t".into(),
            tools: vec![crate::runtime::types::ToolDefinition {
                name: "deep".into(),
                description: "d".into(),
                parameters,
                output_schema,
                ..Default::default()
            }],
            max_concurrency: 1,
            ..Default::default()
        }
    }

    /// `levels` schemas nested through `items`.
    fn schema(levels: usize) -> String {
        (1..levels)
            .fold(
                json!({"type": "string"}),
                |inner, _| json!({"type": "array", "items": inner}),
            )
            .to_string()
    }

    /// A schema nested past what octet can read fails the catalog naming
    /// the tool; the output schema's own 32-level rule still applies below.
    #[test]
    fn schemas_nested_past_the_guest_bound_name_the_tool() {
        let build_v02 = |d: &Description| build(ApiVersion::V0_2, d).err();
        assert_eq!(build_v02(&one_tool(schema(64), None)), None);
        let error = build_v02(&one_tool(schema(65), None)).unwrap();
        assert!(
            error.starts_with("the parameter schema of tool deep is nested deeper than 64 levels"),
            "{error}"
        );
        let object = "{\"type\":\"object\"}".to_owned();
        let error = build_v02(&one_tool(object.clone(), Some(schema(200)))).unwrap();
        assert!(
            error.starts_with("the output_schema of tool deep is nested deeper than 64 levels"),
            "{error}"
        );
        let error = build_v02(&one_tool(object, Some(schema(33)))).unwrap();
        assert_eq!(
            error,
            "tool deep: output_schema: nested deeper than 32 levels"
        );
    }

    #[test]
    fn output_schema_subset() {
        assert!(check_output_schema(&json!({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}, "required": ["n"]}), 1).is_ok());
        assert!(
            check_output_schema(&json!({"type": "object", "patternProperties": {}}), 1).is_err()
        );
        let err = check_output_schema(&json!({"type": "decimal"}), 1).unwrap_err();
        assert!(err.contains("is not a JSON type name"), "{err}");
        let err = check_output_schema(&json!({"anyOf": []}), 1).unwrap_err();
        assert!(err.contains("anyOf must be a non-empty array"), "{err}");
        let mut deep = json!({"type": "string"});
        for _ in 0..32 {
            deep = json!({"type": "array", "items": deep});
        }
        let err = check_output_schema(&deep, 1).unwrap_err();
        assert!(err.contains("nested deeper than 32 levels"), "{err}");
    }
}
