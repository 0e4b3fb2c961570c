//! What a guest may ask of the host, as plain functions.
//!
//! Every function acts for the request the instance is serving, so none takes
//! a request id. The shim checks each call against the manifest, the
//! negotiated features and the protocol's bounds; a refused call returns an
//! [`Error`] (propagate it with `?`) and sends nothing.

use serde_json::Value;

use crate::bindings::octet::extension::host as imports;
use crate::error::{Error, Result};
use crate::values::{
    Confirmation, ContextItem, Notification, NotifyLevel, OutputStream, ProgressDecoration,
    ProgressEvent, ProgressOutput, StatusItem,
};

pub use imports::LogLevel;

/// Shows a notification (manifest `contributes.notifications = true`).
pub fn notify(level: NotifyLevel, message: impl Into<String>) -> Result<()> {
    send_notification(Notification::new(level, message))
}

/// Shows a notification with a title.
pub fn notify_titled(
    level: NotifyLevel,
    title: impl Into<String>,
    message: impl Into<String>,
) -> Result<()> {
    send_notification(Notification::new(level, message).title(title))
}

/// Shows a notification built with [`Notification`]'s constructors.
pub fn send_notification(notification: Notification) -> Result<()> {
    imports::notify(&notification).map_err(Error::from_wit)
}

/// Asks the user a yes/no question and waits for the answer (manifest
/// `contributes.confirmations = true`; on API 0.2 only while serving a tool
/// call or a command). Takes a prompt or a [`Confirmation`]. `Ok(false)` when
/// the frontend cannot ask; an error that [`Error::is_cancelled`] when the
/// request is cancelled while waiting.
pub fn confirm(request: impl Into<Confirmation>) -> Result<bool> {
    imports::confirm(&request.into()).map_err(Error::from_wit)
}

/// Asks the user for text (API 0.2, while serving a tool call or a command).
/// `Ok(None)` when cancelled, unavailable or headless. A `secret` answer must
/// never be logged or returned in results.
pub fn request_input(prompt: &str, secret: bool) -> Result<Option<String>> {
    imports::request_input(prompt, secret).map_err(Error::from_wit)
}

/// Reports progress for the current request (API 0.2; declare it with
/// [`Extension::uses_progress`](crate::Extension::uses_progress)). Takes a
/// message, a [`ProgressStatus`](crate::ProgressStatus) (with counts) or any
/// [`ProgressEvent`].
pub fn progress(event: impl Into<ProgressEvent>) -> Result<()> {
    imports::progress(&event.into()).map_err(Error::from_wit)
}

/// Streams output for the current request as a progress event.
pub fn progress_output(stream: OutputStream, data: impl Into<Vec<u8>>) -> Result<()> {
    progress(ProgressEvent::Output(ProgressOutput {
        stream,
        data: data.into(),
    }))
}

/// Replaces the current request's decoration (needs
/// [`Extension::uses_progress_decoration`](crate::Extension::uses_progress_decoration)).
pub fn progress_decoration(label: impl Into<String>, detail: Option<String>) -> Result<()> {
    progress(ProgressEvent::Decoration(ProgressDecoration {
        label: label.into(),
        detail,
    }))
}

/// Writes one structured record to the shim's log (stderr, never the
/// protocol stream). `fields`, when given, is a JSON object merged into it:
/// `log(LogLevel::Info, "loaded", None)` or `log(LogLevel::Info, "loaded", json!({"n": 2}))`.
pub fn log(level: LogLevel, message: &str, fields: impl Into<Option<Value>>) {
    let fields = fields.into().map(|fields| fields.to_string());
    imports::log(level, message, fields.as_deref());
}

/// Sends context the model sees without being asked (manifest
/// `contributes.context`).
pub fn contribute_context(item: ContextItem) -> Result<()> {
    imports::contribute_context(&item).map_err(Error::from_wit)
}

/// Sends a status line for a declared UI surface (manifest `contributes.ui`).
pub fn contribute_status(item: StatusItem) -> Result<()> {
    imports::contribute_status(&item).map_err(Error::from_wit)
}
