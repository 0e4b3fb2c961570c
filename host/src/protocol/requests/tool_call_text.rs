//! `tool/call` params read in place from the host's text, the per-call hot
//! path (BENCHMARKS.md): the tool name, the arguments and `cx.host` are
//! taken as the host wrote them instead of being parsed into a tree and
//! encoded again.
//!
//! It reads what the general path (`work`) would read and nothing
//! else: a member of an unexpected type, a duplicate member or a
//! `catalog_revision` (whose checks the general path owns) returns `None`,
//! and the request goes the general way with the same answer as before.
//! The text was checked as JSON with its whole line (`wire::in_place`;
//! docs/choices.md#in-place-read).

use crate::runtime::types::{CallContext, ResourceOwner, ToolCall};
use crate::wire::in_place::present;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "present")]
    arguments: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    catalog_revision: Option<&'a RawValue>,
    #[serde(borrow, default)]
    context: Option<Context<'a>>,
}

/// The execution context's members the guest sees
/// (docs/protocol.md#execution-context).
#[derive(Deserialize)]
struct Context<'a> {
    #[serde(borrow, default)]
    workspace: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    execution_scope: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    resource_owner: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    host: Option<&'a RawValue>,
}

/// A resource owner with all three members of their types; anything else
/// reads as no owner, as on the general path.
#[derive(Deserialize)]
struct Owner<'a> {
    #[serde(borrow)]
    session_id: Cow<'a, str>,
    #[serde(borrow)]
    extension_instance_id: Cow<'a, str>,
    process_generation: u64,
}

/// The call and its context, or `None` for the general path.
pub fn read(id: u64, text: &str) -> Option<(ToolCall, CallContext)> {
    let params: Params = serde_json::from_str(text).ok()?;
    if params.catalog_revision.is_some() {
        return None;
    }
    let context = params.context;
    let (workspace, execution_scope, owner, host) = match context {
        Some(cx) => (cx.workspace, cx.execution_scope, cx.resource_owner, cx.host),
        None => (None, None, None, None),
    };
    let resource_owner = owner
        .and_then(|raw| serde_json::from_str::<Owner>(raw.get()).ok())
        .map(|owner| ResourceOwner {
            session_id: owner.session_id.into_owned(),
            extension_instance_id: owner.extension_instance_id.into_owned(),
            process_generation: owner.process_generation,
        });
    let call = ToolCall {
        name: params.name.into_owned(),
        arguments: params.arguments.map_or("{}", RawValue::get).to_owned(),
        catalog_revision: None,
    };
    let cx = CallContext {
        request_id: id,
        workspace: workspace.map(Cow::into_owned).unwrap_or_default(),
        execution_scope: execution_scope.map(Cow::into_owned),
        resource_owner,
        host: host.map_or("{}", RawValue::get).to_owned(),
    };
    Some((call, cx))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// What the general path makes of the same params.
    fn general(params: &Value) -> (String, String, CallContext) {
        let cx = crate::protocol::requests::work::call_context(3, params);
        let arguments = params
            .get("arguments")
            .map_or_else(|| "{}".to_owned(), Value::to_string);
        let name = params["name"].as_str().unwrap().to_owned();
        (name, arguments, cx)
    }

    #[test]
    fn reads_what_the_general_path_reads() {
        for params in [
            json!({"name": "t", "arguments": {"a": [1, "x"]}, "context": {"workspace": "/w", "execution_scope": "s", "host": {"k": null}}}),
            json!({"name": "t"}),
            json!({"name": "t", "arguments": null, "context": null}),
            json!({"name": "t", "context": {"host": null, "execution_scope": null}}),
            json!({"name": "t", "context": {"resource_owner": {"session_id": "a", "extension_instance_id": "b", "process_generation": 2}}}),
            json!({"name": "t", "context": {"resource_owner": {"session_id": "a", "process_generation": 2}}}),
            json!({"name": "t", "context": {"resource_owner": {"session_id": "a", "extension_instance_id": "b", "process_generation": -1}}}),
            json!({"name": "t\u{e9}\n", "context": {"workspace": "\u{1F600}", "extra": [1]}}),
        ] {
            let text = params.to_string();
            let (call, cx) = read(3, &text).expect("read in place");
            let (name, arguments, expected) = general(&params);
            assert_eq!((call.name, call.arguments), (name, arguments), "{text}");
            assert_eq!(cx, expected, "{text}");
        }
    }

    #[test]
    fn leaves_the_unusual_to_the_general_path() {
        for text in [
            r#"[]"#,
            r#"{}"#,
            r#"{"name": 5}"#,
            r#"{"name": "t", "name": "u"}"#,
            r#"{"name": "t", "catalog_revision": 1}"#,
            r#"{"name": "t", "context": 5}"#,
            r#"{"name": "t", "context": {"workspace": 5}}"#,
        ] {
            assert!(read(1, text).is_none(), "{text}");
        }
    }
}
