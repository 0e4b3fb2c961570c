//! The handshake: `initialize` and what it settles for the whole process.
//! The host's offer is checked and answered here (the API version, the
//! negotiated features and hooks, the manifest's `contributes`), and the
//! guest is loaded, described and initialised within the host's 30 s.

pub mod api_version;
pub(crate) mod feature;
pub(crate) mod features;
pub(crate) mod hook;
pub mod initialize;
pub(crate) mod manifest;
pub(crate) mod sandbox;
pub(crate) mod startup;
