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

/// `persistence_metadata.value` (docs/protocol.md#result-bounds).
pub const PERSISTENCE_VALUE: JsonBounds = JsonBounds {
    name: "persistence_metadata.value",
    max_bytes: 16 * 1024,
    max_depth: 16,
    max_nodes: 256,
    max_key_bytes: Some(256),
};

/// Checks `value` against `bounds`; the error names the bound and its limit.
///
/// Depth counts containers (arrays and objects), not the scalars inside
/// them: `{"n":0}` is 1 level deep, `[[1]]` 2, a bare scalar 0. So 32
/// nested objects around a number are within a depth of 32, and 33 are not.
pub fn check_json(value: &Value, bounds: &JsonBounds) -> Result<(), String> {
    let mut nodes = 0usize;
    walk(value, 0, bounds, &mut nodes)?;
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

/// `outer` is the number of containers around `value`.
fn walk(value: &Value, outer: usize, bounds: &JsonBounds, nodes: &mut usize) -> Result<(), String> {
    *nodes += 1;
    if *nodes > bounds.max_nodes {
        return Err(format!(
            "{} has more than {} JSON nodes",
            bounds.name, bounds.max_nodes
        ));
    }
    let depth = match value {
        Value::Array(_) | Value::Object(_) => outer + 1,
        _ => outer,
    };
    if depth > bounds.max_depth {
        return Err(format!(
            "{} is nested deeper than {} levels",
            bounds.name, bounds.max_depth
        ));
    }
    match value {
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| walk(item, depth, bounds, nodes)),
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
            walk(item, depth, bounds, nodes)
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
        assert!(check_json(&json!([[[]]]), &SMALL).is_ok());
        assert!(
            check_json(&json!([[[[]]]]), &SMALL)
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

    /// Depth counts containers only: the scalar inside the innermost one
    /// adds no level (the probe's `nested {depth: 32}` is 32 objects around
    /// a 0 and within the protocol's 32 levels; 33 objects are not).
    #[test]
    fn depth_counts_containers_not_scalars() {
        let nested = |depth: usize| (0..depth).fold(json!(0), |inner, _| json!({ "n": inner }));
        let bounds = JsonBounds {
            max_depth: 32,
            max_bytes: 1 << 20,
            max_nodes: 1_000,
            ..SMALL
        };
        assert!(check_json(&json!(7), &bounds).is_ok());
        assert!(check_json(&nested(32), &bounds).is_ok());
        assert_eq!(
            check_json(&nested(33), &bounds).unwrap_err(),
            "x is nested deeper than 32 levels"
        );
        assert!(check_json(&json!([[[1]]]), &SMALL).is_ok());
        let err = check_json(&json!([[[[1]]]]), &SMALL).unwrap_err();
        assert!(err.contains("nested deeper than 3 levels"), "{err}");
    }
}
