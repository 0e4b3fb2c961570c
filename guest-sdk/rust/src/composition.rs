//! Tool composition (API 0.4, feature `tool_composition_v1`): from inside a
//! tool handler, call the session's other tools through octet, and read or
//! commit the session's composition store.
//!
//! Declare the feature with
//! [`Extension::uses_composition`](crate::Extension::uses_composition).
//! Only a model tool call may compose: from any other handler every
//! function here fails. The shim enforces octet's bounds (256 calls per
//! tool call, arguments of 128 KiB, one store commit) and reads the sidecar
//! files octet uses for large values, so results always arrive as JSON.
//!
//! [`call_streaming`] asks octet for the called tool's partial results as
//! well: iterate the returned [`StreamingCall`] for them, then
//! [`finish`](StreamingCall::finish) it for the final value.

use serde::Serialize;
use serde_json::Value;

use crate::bindings::octet::extension::composition as imports;
use crate::error::{Error, Result};
use crate::tool_result::to_json;

/// What a tool call may compose with.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// The definitions of the tools it may call.
    pub tools: Vec<Value>,
    /// The store's entries.
    pub store: serde_json::Map<String, Value>,
    /// octet's time budget for this tool call's compositions.
    pub timeout_ms: u64,
    /// How many calls this tool call may make.
    pub max_calls: u32,
}

fn parse(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|err| Error::failed(format!("the {what} is not JSON: {err}")))
}

/// `composition/context`: the tools and the store.
pub fn context() -> Result<Context> {
    let context = imports::context().map_err(Error::from_wit)?;
    let tools = match parse(&context.tools, "composition tool list")? {
        Value::Array(tools) => tools,
        _ => return Err(Error::failed("the composition tool list is not an array")),
    };
    let store = match parse(&context.store, "composition store")? {
        Value::Object(store) => store,
        _ => return Err(Error::failed("the composition store is not an object")),
    };
    Ok(Context {
        tools,
        store,
        timeout_ms: context.limits.timeout_ms,
        max_calls: context.limits.max_calls,
    })
}

fn arguments_json(arguments: impl Serialize) -> Result<String> {
    to_json(&arguments).map_err(|message| {
        Error::invalid_params(format!("the arguments could not be serialised: {message}"))
    })
}

/// `composition/call`: runs tool `name` with `arguments` (serialised to a
/// JSON object) and returns its value.
pub fn call(name: &str, arguments: impl Serialize) -> Result<Value> {
    let text = imports::call(name, &arguments_json(arguments)?, false).map_err(Error::from_wit)?;
    parse(&text, "composition value")
}

/// Like [`call`], but returns the tool's whole outcome (its content parts,
/// error flag and value, as octet reports them).
pub fn call_outcome(name: &str, arguments: impl Serialize) -> Result<Value> {
    let text = imports::call(name, &arguments_json(arguments)?, true).map_err(Error::from_wit)?;
    parse(&text, "composition outcome")
}

/// `composition/store`: sets `set` and deletes `delete`, as the one commit
/// this tool call may make.
pub fn store<'a>(
    set: impl IntoIterator<Item = (&'a str, Value)>,
    delete: impl IntoIterator<Item = &'a str>,
) -> Result<()> {
    let set: Vec<(String, String)> = set
        .into_iter()
        .map(|(key, value)| (key.to_owned(), value.to_string()))
        .collect();
    let delete: Vec<String> = delete.into_iter().map(str::to_owned).collect();
    imports::store(&set, &delete).map_err(Error::from_wit)
}

/// One partial result of a [`StreamingCall`].
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    /// octet's sequence number: it increases, and a gap means the shim
    /// dropped updates (more than 64 were waiting, or one was too large or
    /// too deep).
    pub sequence: u64,
    /// The called tool's partial result.
    pub result: Value,
}

/// A composition call in flight whose partial results arrive as they come.
///
/// It is an iterator of [`Update`]s: each `next` waits for the next one and
/// the iteration ends when no more will come (the call has its final reply,
/// failed, or the tool call ended). Then [`finish`](Self::finish) gives the
/// final value. Dropping it without `finish` abandons the call.
///
/// ```no_run
/// # fn f() -> octet_guest::Result<()> {
/// use octet_guest::composition;
/// let mut call = composition::call_streaming("grep", serde_json::json!({"pattern": "TODO"}))?;
/// for update in call.by_ref() {
///     let update = update?;
///     println!("partial {}: {}", update.sequence, update.result);
/// }
/// let value = call.finish()?;
/// # let _ = value; Ok(()) }
/// ```
#[derive(Debug)]
pub struct StreamingCall {
    call: imports::PendingCall,
    outcome: bool,
}

impl Iterator for StreamingCall {
    type Item = Result<Update>;

    fn next(&mut self) -> Option<Result<Update>> {
        let update = self.call.next_update()?;
        Some(
            parse(&update.result, "composition update").map(|result| Update {
                sequence: update.sequence,
                result,
            }),
        )
    }
}

impl StreamingCall {
    /// Waits for the final reply: the value (or with
    /// [`call_outcome_streaming`] the whole outcome). Updates not read yet
    /// are discarded.
    pub fn finish(self) -> Result<Value> {
        let text = self.call.finish().map_err(Error::from_wit)?;
        let what = if self.outcome {
            "composition outcome"
        } else {
            "composition value"
        };
        parse(&text, what)
    }
}

/// Like [`call`], asking octet for the tool's partial results as it runs
/// (`updates: true`). Returns once the call is sent; at most 4 calls of one
/// tool call may be in flight.
pub fn call_streaming(name: &str, arguments: impl Serialize) -> Result<StreamingCall> {
    start(name, arguments, false)
}

/// Like [`call_streaming`], finishing with the tool's whole outcome.
pub fn call_outcome_streaming(name: &str, arguments: impl Serialize) -> Result<StreamingCall> {
    start(name, arguments, true)
}

fn start(name: &str, arguments: impl Serialize, outcome: bool) -> Result<StreamingCall> {
    let call =
        imports::start_call(name, &arguments_json(arguments)?, outcome).map_err(Error::from_wit)?;
    Ok(StreamingCall { call, outcome })
}
