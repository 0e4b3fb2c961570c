//! native-hello (API 0.4): octet's own first 0.4 example, the Rust/C/C++
//! `hello` tool over octet's native SDK, here as a sandboxed component.
//!
//! One tool, `hello`: it checks its arguments as strictly as its schema
//! says (an object with a `name` of at most 256 Unicode scalars and an
//! optional integer `delay_ms` from 0 to 5000, nothing else), waits the
//! delay cooperatively, stopping as soon as the request is cancelled, and
//! greets. The wire (negotiation, cancellation, shutdown, framing) is the
//! shim's.

use std::time::Duration;

use octet_guest::prelude::*;

/// Longest name accepted, in Unicode scalars (the schema's `maxLength`).
const MAX_NAME_CHARS: usize = 256;
/// Longest delay accepted, in milliseconds (the schema's `maximum`).
const MAX_DELAY_MS: u64 = 5000;

/// The arguments as the schema allows them, checked by hand so that every
/// shape serde would coerce (an array for a struct, a float or a bool for
/// a number) is refused like octet's SDK refuses it.
fn arguments(value: &Value) -> Result<(String, u64)> {
    let object = value
        .as_object()
        .ok_or_else(|| Error::invalid_params("arguments must be an object"))?;
    if let Some(key) = object.keys().find(|k| *k != "name" && *k != "delay_ms") {
        return Err(Error::invalid_params(format!("unknown argument {key:?}")));
    }
    let name = object
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| Error::invalid_params("name must be a string"))?;
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid_params(format!(
            "name must be at most {MAX_NAME_CHARS} characters"
        )));
    }
    let delay_ms = match object.get("delay_ms") {
        None => 0,
        Some(value) => value
            .as_u64()
            .filter(|ms| *ms <= MAX_DELAY_MS)
            .ok_or_else(|| {
                Error::invalid_params(format!(
                    "delay_ms must be an integer from 0 to {MAX_DELAY_MS}"
                ))
            })?,
    };
    Ok((name.to_owned(), delay_ms))
}

fn hello(args: Value) -> Result<String> {
    let (name, delay_ms) = arguments(&args)?;
    if delay_ms > 0 && octet_guest::sleep(Duration::from_millis(delay_ms)) {
        return Err(Error::cancelled());
    }
    Ok(format!("Hello, {name}!"))
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

    #[test]
    fn accepts_what_the_schema_allows() {
        assert_eq!(
            arguments(&json!({"name": "world"})).unwrap(),
            ("world".into(), 0)
        );
        assert_eq!(
            arguments(&json!({"name": "x", "delay_ms": 5000}))
                .unwrap()
                .1,
            5000
        );
        let emoji = "😀".repeat(MAX_NAME_CHARS);
        assert!(arguments(&json!({"name": emoji})).is_ok());
        assert!(arguments(&json!({"name": "nul\u{0}inside"})).is_ok());
    }

    #[test]
    fn refuses_every_shape_octets_sdk_refuses() {
        for bad in [
            json!({}),
            json!({"name": null}),
            json!({"name": 7}),
            json!({"name": "x", "extra": 1}),
            json!({"name": "x".repeat(MAX_NAME_CHARS + 1)}),
            json!({"name": "x", "delay_ms": -1}),
            json!({"name": "x", "delay_ms": 5001}),
            json!({"name": "x", "delay_ms": true}),
            json!({"name": "x", "delay_ms": 1.5}),
            json!(["x"]),
        ] {
            assert!(arguments(&bad).is_err(), "{bad}");
        }
    }
}
