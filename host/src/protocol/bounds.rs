//! Size, depth and node-count bounds on JSON values the guest produces.

use serde_json::Value;

/// One set of bounds, named for error messages.
#[derive(Debug, Clone, Copy)]
pub struct JsonBounds {
    pub name: &'static str,
    pub max_bytes: usize,
    pub max_depth: usize,
    pub max_nodes: usize,
    pub max_key_bytes: Option<usize>,
}

/// `persistence_metadata.value` (protocol-core §4.3).
pub const PERSISTENCE_VALUE: JsonBounds = JsonBounds {
    name: "persistence_metadata.value",
    max_bytes: 16 * 1024,
    max_depth: 16,
    max_nodes: 256,
    max_key_bytes: Some(256),
};

/// Checks `value` against `bounds`; the error names the bound and its limit.
pub fn check_json(value: &Value, bounds: &JsonBounds) -> Result<(), String> {
    let mut nodes = 0usize;
    walk(value, 1, bounds, &mut nodes)?;
    let bytes = serde_json::to_string(value)
        .map(|s| s.len())
        .unwrap_or(usize::MAX);
    if bytes > bounds.max_bytes {
        return Err(format!(
            "{} is {bytes} bytes; the limit is {} bytes",
            bounds.name, bounds.max_bytes
        ));
    }
    Ok(())
}

fn walk(value: &Value, depth: usize, bounds: &JsonBounds, nodes: &mut usize) -> Result<(), String> {
    *nodes += 1;
    if *nodes > bounds.max_nodes {
        return Err(format!(
            "{} has more than {} JSON nodes",
            bounds.name, bounds.max_nodes
        ));
    }
    if depth > bounds.max_depth {
        return Err(format!(
            "{} is nested deeper than {} levels",
            bounds.name, bounds.max_depth
        ));
    }
    match value {
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| walk(item, depth + 1, bounds, nodes)),
        Value::Object(map) => map.iter().try_for_each(|(key, item)| {
            if let Some(max) = bounds.max_key_bytes
                && key.len() > max
            {
                return Err(format!(
                    "{} has a key of {} bytes; the limit is {max}",
                    bounds.name,
                    key.len()
                ));
            }
            walk(item, depth + 1, bounds, nodes)
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SMALL: JsonBounds = JsonBounds {
        name: "x",
        max_bytes: 20,
        max_depth: 3,
        max_nodes: 5,
        max_key_bytes: Some(3),
    };

    #[test]
    fn each_bound_at_and_past_its_limit() {
        assert!(check_json(&json!([[1]]), &SMALL).is_ok());
        assert!(
            check_json(&json!([[[1]]]), &SMALL)
                .unwrap_err()
                .contains("deeper than 3")
        );
        assert!(check_json(&json!([1, 2, 3, 4]), &SMALL).is_ok());
        assert!(
            check_json(&json!([1, 2, 3, 4, 5]), &SMALL)
                .unwrap_err()
                .contains("5 JSON nodes")
        );
        assert!(check_json(&json!({"abc": 1}), &SMALL).is_ok());
        assert!(
            check_json(&json!({"abcd": 1}), &SMALL)
                .unwrap_err()
                .contains("key")
        );
        assert!(
            check_json(&json!("0123456789012345678"), &SMALL)
                .unwrap_err()
                .contains("21 bytes")
        );
    }
}
