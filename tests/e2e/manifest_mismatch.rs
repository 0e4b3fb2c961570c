//! `initialize` whose declared tools or commands differ from what the guest
//! registers (docs/protocol.md#registration-check): the documented error and
//! nothing else on stdout.

use crate::support::{EXIT_AFTER_EOF, Shim, expect_error, raws};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

/// Sends `initialize` with `contributes.<key>` replaced, checks the error,
/// then closes stdin and checks that nothing else was written.
fn initialize_with_declared(key: &str, declared: Value) -> Value {
    let mut shim = Shim::hello_world();
    let mut params = shim.init_params();
    params["contributes"][key] = declared;
    let reply = shim.initialize_with(params);
    assert!(
        reply.before.is_empty(),
        "frames before the reply: {:?}",
        raws(&reply.before)
    );
    let error = expect_error(&reply).clone();
    assert_eq!(error.code, -32602, "{}", reply.frame.raw);
    shim.close_stdin();
    let rest = shim
        .read_to_eof(Duration::from_secs(10))
        .unwrap_or_else(|error| panic!("after the rejected initialize: {error}"));
    assert!(
        rest.is_empty(),
        "frames after the rejected initialize: {:?}",
        raws(&rest)
    );
    shim.exit_status(EXIT_AFTER_EOF);
    json!({"message": error.message, "data": error.data})
}

fn names(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("expected a name list, got {value}"))
        .iter()
        .map(|name| {
            name.as_str()
                .unwrap_or_else(|| panic!("name {name} is not a string"))
                .to_owned()
        })
        .collect()
}

fn assert_mismatch(key: &str, declared: &[&str], registered: &[&str]) {
    let error = initialize_with_declared(key, json!(declared));
    assert_eq!(
        error["message"],
        format!("registered {key} do not match manifest declarations"),
        "{error}"
    );
    let data = &error["data"];
    assert_eq!(
        names(&data["declared"]),
        declared.iter().map(|s| s.to_string()).collect(),
        "{error}"
    );
    assert_eq!(
        names(&data["registered"]),
        registered.iter().map(|s| s.to_string()).collect(),
        "{error}"
    );
}

fn assert_duplicate(key: &str, declared: &[&str]) {
    let error = initialize_with_declared(key, json!(declared));
    assert_eq!(
        error["message"],
        format!("initialize contributes.{key} contains duplicate names"),
        "{error}"
    );
}

#[test]
fn a_missing_tool_is_rejected() {
    assert_mismatch("tools", &[], &["hello_world"]);
}

#[test]
fn an_extra_tool_is_rejected() {
    assert_mismatch("tools", &["hello_world", "goodbye_world"], &["hello_world"]);
}

#[test]
fn duplicate_tools_are_rejected() {
    assert_duplicate("tools", &["hello_world", "hello_world"]);
}

#[test]
fn a_missing_command_is_rejected() {
    assert_mismatch("commands", &[], &["hello"]);
}

#[test]
fn an_extra_command_is_rejected() {
    assert_mismatch("commands", &["hello", "goodbye"], &["hello"]);
}

#[test]
fn duplicate_commands_are_rejected() {
    assert_duplicate("commands", &["hello", "hello"]);
}
