//! Tools that end every way a handler can: a value, each kind of error, and
//! each kind of trap.

use std::rc::Rc;

use octet_guest::prelude::*;
use serde::Deserialize;

use crate::{Counters, object_schema};

#[derive(Deserialize)]
struct Text {
    text: String,
}

#[derive(Deserialize)]
struct Message {
    message: String,
}

#[derive(Deserialize)]
struct Code {
    code: i32,
}

pub fn register(ext: &mut Extension, counters: &Rc<Counters>) {
    // echo {text} → text
    ext.tool(
        Tool::new("echo", "Return the text unchanged")
            .parameters(object_schema(json!({"text": {"type": "string"}}))),
        |args: Text| args.text,
    );
    // fail {message} → error `failed(message)` (an is_error result)
    ext.tool(
        Tool::new("fail", "Fail with the message")
            .parameters(object_schema(json!({"message": {"type": "string"}}))),
        |args: Message| -> Result<String> { Err(Error::failed(args.message)) },
    );
    // invalid {} → error `invalid-params` (-32602)
    ext.tool(
        Tool::new("invalid", "Refuse the arguments").parameters(object_schema(json!({}))),
        |_: Value| -> Result<String> {
            Err(Error::invalid_params("probe refuses these arguments"))
        },
    );
    // panic {} → panic! (a trap: panic = abort in guests)
    ext.tool(
        Tool::new("panic", "Panic").parameters(object_schema(json!({}))),
        |_: Value| -> String { panic!("probe panics on purpose") },
    );
    // unreachable {} → the wasm `unreachable` instruction
    ext.tool(
        Tool::new("unreachable", "Execute the unreachable instruction")
            .parameters(object_schema(json!({}))),
        |_: Value| -> String { trap() },
    );
    // exit {code} → std::process::exit(code) (WASI exit: ends the instance)
    ext.tool(
        Tool::new("exit", "Exit the guest with the status code")
            .parameters(object_schema(json!({"code": {"type": "integer"}}))),
        |args: Code| -> String { std::process::exit(args.code) },
    );
    // counter {} → how many times this instance has served `counter` (1 on a
    // fresh instance)
    let counters = Rc::clone(counters);
    ext.tool(
        Tool::new("counter", "Count the calls of this tool on this instance")
            .parameters(object_schema(json!({}))),
        move |_: Value| {
            counters.calls.set(counters.calls.get() + 1);
            counters.calls.get().to_string()
        },
    );
}

#[cfg(target_arch = "wasm32")]
fn trap() -> ! {
    core::arch::wasm32::unreachable()
}

#[cfg(not(target_arch = "wasm32"))]
fn trap() -> ! {
    std::process::abort()
}
