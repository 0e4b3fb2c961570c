//! hello-delay (API 0.2): the cancellation reference. One tool, `hello`,
//! that validates its own arguments and waits cooperatively, stopping as soon
//! as the request is cancelled.

use std::time::Duration;

use octet_guest::prelude::*;
use serde::Deserialize;

/// Longest name accepted, in characters (the schema's `maxLength`).
const MAX_NAME_CHARS: usize = 256;
/// Longest delay accepted, in milliseconds (the schema's `maximum`).
const MAX_DELAY_MS: u64 = 5000;

/// The arguments; unknown members are refused like the schema's
/// `additionalProperties: false`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HelloArgs {
    name: String,
    #[serde(default)]
    delay_ms: u64,
}

/// Checks what the types alone do not: the schema's bounds.
fn validate(args: &HelloArgs) -> Result<()> {
    if args.name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid_params(format!(
            "name must be at most {MAX_NAME_CHARS} characters"
        )));
    }
    if args.delay_ms > MAX_DELAY_MS {
        return Err(Error::invalid_params(format!(
            "delay_ms must be an integer from 0 to {MAX_DELAY_MS}"
        )));
    }
    Ok(())
}

fn hello(args: HelloArgs) -> Result<String> {
    validate(&args)?;
    if args.delay_ms > 0 && octet_guest::sleep(Duration::from_millis(args.delay_ms)) {
        return Err(Error::cancelled());
    }
    Ok(format!("Hello, {}!", args.name))
}

fn setup(ext: &mut Extension) {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": MAX_NAME_CHARS},
            "delay_ms": {"type": "integer", "minimum": 0, "maximum": MAX_DELAY_MS, "default": 0},
        },
        "required": ["name"],
        "additionalProperties": false,
    });
    ext.tool(
        Tool::new("hello", "Return a local greeting").parameters(schema),
        hello,
    );
}

octet_guest::extension!(setup);

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> std::result::Result<(), String> {
        let args: HelloArgs = serde_json::from_str(json).map_err(|e| e.to_string())?;
        validate(&args).map_err(|e| e.to_string())
    }

    #[test]
    fn accepts_unicode_names_and_bounded_delays() {
        assert!(check(r#"{"name":"host λ😀"}"#).is_ok());
        assert!(check(r#"{"name":"x","delay_ms":5000}"#).is_ok());
        let long: String = "😀".repeat(MAX_NAME_CHARS);
        assert!(check(&json!({"name": long}).to_string()).is_ok());
    }

    #[test]
    fn refuses_what_the_schema_refuses() {
        assert!(check(r#"{"name":false}"#).is_err());
        assert!(check(r#"{}"#).is_err());
        assert!(check(r#"{"name":"x","delay_ms":5001}"#).is_err());
        assert!(check(r#"{"name":"x","delay_ms":-1}"#).is_err());
        assert!(check(r#"{"name":"x","delay_ms":1.5}"#).is_err());
        assert!(check(r#"{"name":"x","extra":1}"#).is_err());
        assert!(check(&json!({"name": "x".repeat(MAX_NAME_CHARS + 1)}).to_string()).is_err());
    }
}
