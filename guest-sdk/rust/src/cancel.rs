//! Cooperative cancellation of the request being served.
//!
//! A handler that never looks is still stopped: after a short grace the shim
//! interrupts it and replaces the instance, losing its memory. Checking
//! lets a long handler stop cleanly and keep the instance's state.

use std::time::Duration;

use crate::bindings::octet::extension::cancellation as imports;
use crate::error::{Error, Result};

/// Whether the current request has been cancelled (by the host, a deadline
/// or shutdown).
pub fn is_cancelled() -> bool {
    imports::is_cancelled()
}

/// `Err(Error::cancelled())` once the request is cancelled, for `?` in
/// loops: `octet_guest::check_cancelled()?;`.
pub fn check_cancelled() -> Result<()> {
    if is_cancelled() {
        Err(Error::cancelled())
    } else {
        Ok(())
    }
}

/// Why the request was cancelled (`user`, `timeout`, `shutdown`...), if it
/// was.
pub fn cancellation_reason() -> Option<String> {
    imports::reason()
}

/// Waits up to `duration` (whole milliseconds, rounded up), returning early
/// when the request is cancelled. Returns `true` if it was cancelled,
/// `false` if the time ran out.
pub fn sleep(duration: Duration) -> bool {
    let millis = duration.as_nanos().div_ceil(1_000_000);
    imports::sleep(u64::try_from(millis).unwrap_or(u64::MAX))
}
