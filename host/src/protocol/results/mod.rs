//! What the guest answers, turned into what the shim writes: tool and hook
//! results with every bound checked first, the API 0.4 hooks' typed
//! results, and the guest's own errors as request-level JSON-RPC errors.
//! A guest answer that breaks a rule becomes an [`error::ResultError`]
//! naming it, never a frame the host would reject.

pub mod encode;
pub(crate) mod error;
pub(crate) mod guest_errors;
pub(crate) mod hook_extras;
pub mod provider_headers;
