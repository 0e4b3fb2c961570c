//! A [`Bridge`] for running a guest with no host attached (author tools
//! such as `compile` and `inspect`): logs go to stderr, everything else is
//! refused with an error the guest can handle.

use super::bridge::Bridge;
use super::types::*;

/// The bridge of an instance that serves no host.
pub struct Offline;

fn unavailable() -> GuestError {
    GuestError::Rpc(GuestRpcError {
        code: SERVER_ERROR,
        message: "no octet host is attached (offline inspection)".into(),
        data: None,
    })
}

impl Bridge for Offline {
    type Scope = ();

    fn log(&self, _level: LogLevel, message: String, fields: Option<String>) {
        crate::guest_log!(crate::log::Level::Info, message, "source" => "guest", "fields" => fields);
    }

    async fn notify(&self, _: Option<()>, _: Notification) -> Result<(), GuestError> {
        Err(unavailable())
    }

    async fn confirm(&self, _: Option<()>, _: Confirmation) -> Result<bool, GuestError> {
        Err(unavailable())
    }

    async fn request_input(
        &self,
        _: Option<()>,
        _: String,
        _: bool,
    ) -> Result<Option<String>, GuestError> {
        Err(unavailable())
    }

    async fn progress(&self, _: Option<()>, _: ProgressEvent) -> Result<(), GuestError> {
        Err(unavailable())
    }

    async fn contribute_context(&self, _: ContextItem) -> Result<(), GuestError> {
        Err(unavailable())
    }

    async fn contribute_status(&self, _: StatusItem) -> Result<(), GuestError> {
        Err(unavailable())
    }
}
