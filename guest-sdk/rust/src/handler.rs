//! How closures become handlers: with or without the [`Call`] parameter,
//! and the return types each kind of handler accepts.

use serde_json::Value;

use crate::call::Call;
use crate::error::Result;
use crate::values::{CommandResult, ContextItem, Segment, StatusItem};

/// A handler taking its input alone (`|args: Args| ...`) or with the call
/// context (`|args: Args, cx: &Call| ...`).
///
/// Implemented for every matching closure or function; `Marker` only tells
/// the two shapes apart, so authors never name it. Annotate the closure's
/// parameter types: the SDK cannot infer them through this trait.
pub trait Handler<Input, Output, Marker>: 'static {
    /// Runs the handler.
    fn invoke(&self, input: Input, call: &Call) -> Output;
}

/// [`Handler`] shape marker: the closure takes only its input.
#[doc(hidden)]
pub struct InputOnly;

/// [`Handler`] shape marker: the closure also takes `&Call`.
#[doc(hidden)]
pub struct InputAndCall;

impl<F, Input, Output> Handler<Input, Output, InputOnly> for F
where
    F: Fn(Input) -> Output + 'static,
{
    fn invoke(&self, input: Input, _call: &Call) -> Output {
        self(input)
    }
}

impl<F, Input, Output> Handler<Input, Output, InputAndCall> for F
where
    F: Fn(Input, &Call) -> Output + 'static,
{
    fn invoke(&self, input: Input, call: &Call) -> Output {
        self(input, call)
    }
}

/// What a command handler may return: a `String`/`&str` (the text shown),
/// `()` (no text), a [`CommandResult`], or a `Result` of these.
pub trait IntoCommandResult {
    /// Converts the handler's value into a result.
    fn into_command_result(self) -> Result<CommandResult>;
}

impl IntoCommandResult for CommandResult {
    fn into_command_result(self) -> Result<CommandResult> {
        Ok(self)
    }
}

impl IntoCommandResult for String {
    fn into_command_result(self) -> Result<CommandResult> {
        Ok(CommandResult::text(self))
    }
}

impl IntoCommandResult for &'static str {
    fn into_command_result(self) -> Result<CommandResult> {
        Ok(CommandResult::text(self))
    }
}

impl IntoCommandResult for () {
    fn into_command_result(self) -> Result<CommandResult> {
        Ok(CommandResult::text(""))
    }
}

impl<T: IntoCommandResult> IntoCommandResult for Result<T> {
    fn into_command_result(self) -> Result<CommandResult> {
        self?.into_command_result()
    }
}

/// What a context handler may return: a list of [`ContextItem`]s, one item,
/// an `Option` of one, or a `Result` of these.
pub trait IntoContextItems {
    /// Converts the handler's value into the items.
    fn into_context_items(self) -> Result<Vec<ContextItem>>;
}

impl IntoContextItems for Vec<ContextItem> {
    fn into_context_items(self) -> Result<Vec<ContextItem>> {
        Ok(self)
    }
}

impl IntoContextItems for ContextItem {
    fn into_context_items(self) -> Result<Vec<ContextItem>> {
        Ok(vec![self])
    }
}

impl IntoContextItems for Option<ContextItem> {
    fn into_context_items(self) -> Result<Vec<ContextItem>> {
        Ok(self.into_iter().collect())
    }
}

impl<T: IntoContextItems> IntoContextItems for Result<T> {
    fn into_context_items(self) -> Result<Vec<ContextItem>> {
        self?.into_context_items()
    }
}

/// What a status handler may return: `Option<StatusItem>` (`None` shows
/// nothing), a [`StatusItem`], or a `Result` of these.
pub trait IntoStatus {
    /// Converts the handler's value into the status line.
    fn into_status(self) -> Result<Option<StatusItem>>;
}

impl IntoStatus for Option<StatusItem> {
    fn into_status(self) -> Result<Option<StatusItem>> {
        Ok(self)
    }
}

impl IntoStatus for StatusItem {
    fn into_status(self) -> Result<Option<StatusItem>> {
        Ok(Some(self))
    }
}

impl<T: IntoStatus> IntoStatus for Result<T> {
    fn into_status(self) -> Result<Option<StatusItem>> {
        self?.into_status()
    }
}

/// What a renderer may return: a list of [`Segment`]s, one segment, a
/// `String`/`&str` (one unstyled segment), or a `Result` of these.
pub trait IntoSegments {
    /// Converts the handler's value into segments.
    fn into_segments(self) -> Result<Vec<Segment>>;
}

impl IntoSegments for Vec<Segment> {
    fn into_segments(self) -> Result<Vec<Segment>> {
        Ok(self)
    }
}

impl IntoSegments for Segment {
    fn into_segments(self) -> Result<Vec<Segment>> {
        Ok(vec![self])
    }
}

impl IntoSegments for String {
    fn into_segments(self) -> Result<Vec<Segment>> {
        Ok(vec![Segment::new(self)])
    }
}

impl IntoSegments for &'static str {
    fn into_segments(self) -> Result<Vec<Segment>> {
        Ok(vec![Segment::new(self)])
    }
}

impl<T: IntoSegments> IntoSegments for Result<T> {
    fn into_segments(self) -> Result<Vec<Segment>> {
        self?.into_segments()
    }
}

/// What a menu handler may return: the complete menu as JSON, `None` to let
/// the host list the commands, or a `Result` of these.
pub trait IntoMenu {
    /// Converts the handler's value into the menu.
    fn into_menu(self) -> Result<Option<Value>>;
}

impl IntoMenu for Value {
    fn into_menu(self) -> Result<Option<Value>> {
        Ok(Some(self))
    }
}

impl IntoMenu for Option<Value> {
    fn into_menu(self) -> Result<Option<Value>> {
        Ok(self)
    }
}

impl<T: IntoMenu> IntoMenu for Result<T> {
    fn into_menu(self) -> Result<Option<Value>> {
        self?.into_menu()
    }
}

/// What `init`, lifecycle and shutdown handlers may return: `()` or
/// `Result<()>`.
pub trait IntoOutcome {
    /// Converts the handler's value into its outcome.
    fn into_outcome(self) -> Result<()>;
}

impl IntoOutcome for () {
    fn into_outcome(self) -> Result<()> {
        Ok(())
    }
}

impl IntoOutcome for Result<()> {
    fn into_outcome(self) -> Result<()> {
        self
    }
}
