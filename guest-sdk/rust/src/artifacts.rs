//! Artifacts (API 0.2, feature `artifacts`): publish bytes, then reference
//! the returned id from image and audio parts of a tool result.
//!
//! ```ignore
//! let id = octet_guest::artifacts::publish("image/png", png_bytes)?;
//! Ok(ToolResult::text("Rendered").with_image(id, "image/png", Some("chart".into())))
//! ```
//!
//! Declare the feature with
//! [`Extension::uses_artifacts`](crate::Extension::uses_artifacts). The shim
//! checks the MIME type and the bytes' signature, 20 MiB per artifact and
//! 64 artifacts / 64 MiB per process generation before anything reaches the
//! host; a refusal is an [`Error`] naming the bound.

use crate::bindings::octet::extension::artifacts as imports;
use crate::error::{Error, Result};

/// The MIME types the host accepts (the bytes must start with the type's
/// signature).
pub const MIME_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "audio/wav",
    "audio/mpeg",
    "audio/flac",
    "audio/opus",
    "audio/aac",
    "audio/mp4",
];

/// Publishes `data` as an artifact of `mime_type` for the request being
/// served (a model tool call or a command) and returns its id. The id is
/// valid in any tool result of the same session in this process generation.
pub fn publish(mime_type: &str, data: impl AsRef<[u8]>) -> Result<String> {
    imports::publish(mime_type, data.as_ref()).map_err(Error::from_wit)
}
