//! Brokered secrets (API 0.2, feature `secrets`).
//!
//! Declare the names under `[capabilities] secrets` in `extension.toml` and
//! the feature with [`Extension::uses_secrets`](crate::Extension::uses_secrets).
//! Never log a value or put it in results, progress, metadata or
//! presentation; keep it only as long as needed.

use crate::bindings::octet::extension::secrets as imports;
use crate::error::{Error, Result};

/// The value of the declared secret `name`, for the tool call or command
/// being served. An undeclared name is refused without asking the host; a
/// secret the broker does not have is the host's error -32004.
pub fn get(name: &str) -> Result<String> {
    imports::get(name).map_err(Error::from_wit)
}
