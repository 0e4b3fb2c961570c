//! The protocol layer: joins the wire and the runtime. It answers
//! `initialize`, plans each host request, runs it on a guest instance
//! through the lanes, enforces deadlines and cancellation, and serves the
//! guest's imports (notifications, confirmations, progress, ...).

pub mod agents;
pub mod bounds;
pub mod bridge;
pub mod catalog;
pub mod deadlines;
pub mod guest_json;
pub mod initialize;
pub mod lanes;
pub mod manifest;
pub mod presentation;
pub mod results;
pub mod reverse;
pub mod server;
pub mod services;
pub mod session;
pub mod work;

use crate::runtime::{FsAccess, Limits, Sandbox};
use initialize::HostOffer;
use serde_json::Value;
use std::path::PathBuf;

/// The sandbox for the manifest's `[capabilities]` as the host sent them.
/// An unknown `filesystem` value is refused rather than guessed.
pub fn sandbox_from(offer: &HostOffer, limits: &Limits) -> anyhow::Result<Sandbox> {
    let capabilities = &offer.capabilities;
    let filesystem = match capabilities.get("filesystem").and_then(Value::as_str) {
        None => FsAccess::None,
        Some(text) => FsAccess::parse(text).ok_or_else(|| {
            anyhow::anyhow!("unknown [capabilities].filesystem value {text:?} (expected none, workspace or unrestricted)")
        })?,
    };
    let network = capabilities
        .get("network")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let workspace = match &offer.workspace {
        Some(path) => PathBuf::from(path),
        None => std::env::current_dir()?,
    };
    // Only brokered variables the manifest names reach the guest, and only
    // when the host actually passed them.
    let env = capabilities
        .get("environment")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .filter_map(|name| {
                    std::env::var(name)
                        .ok()
                        .filter(|v| !v.is_empty())
                        .map(|v| (name.to_owned(), v))
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Sandbox {
        filesystem,
        workspace,
        network,
        env,
        scratch: None,
        output_bytes: limits.output_bytes,
    })
}
