//! The demo host's side of tool composition (`tool_composition_v1`, which
//! octet offers every API 0.4 process, so the demo offers it too): the
//! session's context and store are served as octet serves them, and a
//! composed call is refused, since the demo session holds no tool but the
//! extension's own and runs none of them on the extension's behalf.

use crate::wire::error_code::ErrorCode;
use serde_json::{Map, Value, json};

/// octet's composition limits (docs/api-0.4.md#v04-composition).
const TIMEOUT_MS: u64 = 30_000;
const MAX_CALLS: u64 = 256;

/// An answer and its transcript line (the services wrap it as theirs).
pub struct Reply {
    pub outcome: Result<Value, (i64, String)>,
    pub note: String,
}

fn ok(result: Value, note: String) -> Reply {
    Reply {
        outcome: Ok(result),
        note,
    }
}

/// The session's composition store, kept across tool calls.
#[derive(Default)]
pub struct Composition {
    store: Map<String, Value>,
}

impl Composition {
    /// The answer to a `composition/*` request, or `None` for another
    /// method.
    pub fn answer(&mut self, method: &str, params: &Value) -> Option<Reply> {
        Some(match method {
            "composition/context" => ok(
                json!({
                    "tools": [],
                    "store": Value::Object(self.store.clone()),
                    "limits": {"timeout_ms": TIMEOUT_MS, "max_calls": MAX_CALLS},
                }),
                format!(
                    "composition context: no tools to compose, {} stored key(s)",
                    self.store.len()
                ),
            ),
            "composition/call" => {
                let name = params["name"].as_str().unwrap_or_default();
                Reply {
                    outcome: Err((
                        ErrorCode::InvalidParams.code(),
                        format!("unknown tool for composition: {name}"),
                    )),
                    note: format!(
                        "composed call of {name:?} refused: the demo session has no tool to compose but the extension's own, and runs none for it"
                    ),
                }
            }
            "composition/store" => self.store(params),
            _ => return None,
        })
    }

    fn store(&mut self, params: &Value) -> Reply {
        let set = params["set"].as_object().cloned().unwrap_or_default();
        let delete: Vec<&str> = params["delete"]
            .as_array()
            .map(|keys| keys.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for key in &delete {
            self.store.remove(*key);
        }
        let (set_count, delete_count) = (set.len(), delete.len());
        self.store.extend(set);
        ok(
            json!({}),
            format!(
                "composition store: {set_count} set, {delete_count} deleted, {} kept",
                self.store.len()
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_persists_and_composed_calls_are_refused() {
        let mut composition = Composition::default();
        let stored = composition
            .answer(
                "composition/store",
                &json!({"parent_request_id": 2, "set": {"a": 1, "b": [2]}, "delete": []}),
            )
            .unwrap();
        assert_eq!(stored.outcome.unwrap(), json!({}));
        composition
            .answer(
                "composition/store",
                &json!({"parent_request_id": 3, "set": {}, "delete": ["a"]}),
            )
            .unwrap();
        let context = composition
            .answer("composition/context", &json!({"parent_request_id": 4}))
            .unwrap();
        assert_eq!(
            context.outcome.unwrap(),
            json!({"tools": [], "store": {"b": [2]}, "limits": {"timeout_ms": 30000, "max_calls": 256}})
        );
        let call = composition
            .answer(
                "composition/call",
                &json!({"parent_request_id": 4, "name": "grep", "arguments": {}}),
            )
            .unwrap();
        assert_eq!(
            call.outcome.unwrap_err(),
            (-32602, "unknown tool for composition: grep".to_owned())
        );
        assert!(composition.answer("agent/spawn", &json!({})).is_none());
    }
}
