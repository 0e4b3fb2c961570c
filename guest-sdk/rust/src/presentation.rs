//! Presentation snapshots (API 0.2, manifest `[contributes] presentation =
//! true`; no feature string).
//!
//! A snapshot is a complete replacement of what the frontend shows for the
//! extension: `revision` (strictly increasing), `status`, `activities`,
//! `collection` and `actions` (see the protocol's snapshot schema). The shim
//! validates the whole schema and its bounds (256 KiB, 128 activities, 256
//! nodes, 64 actions) before anything is written.

use serde_json::Value;

use crate::bindings::octet::extension::presentation as imports;
use crate::call::ResourceOwner;
use crate::error::{Error, Result};

/// Publishes `snapshot`. Inside a request the host derives its owner from
/// the request; outside one the snapshot is process-scoped.
pub fn update(snapshot: &Value) -> Result<()> {
    imports::update(&snapshot.to_string(), None).map_err(Error::from_wit)
}

/// Publishes `snapshot` for `owner`, a resource owner the host gave this
/// process in a request context (a background publisher keeps it).
pub fn update_for(owner: &ResourceOwner, snapshot: &Value) -> Result<()> {
    imports::update(&snapshot.to_string(), Some(owner)).map_err(Error::from_wit)
}
