//! The guest's imports (docs/services.md), served by the session: the
//! [`bridge`] the runtime calls into, the [`child_requests`] the shim
//! sends the host for the guest, the budget of reverse [`notices`], and one
//! module per service interface. Each service owns its gate, its bounds and
//! its wire shape, and checks all of them before a frame is written, so
//! nothing the host would reject fatally ever reaches it. [`gate`] holds
//! the checks they share; [`state`] and [`tools_catalog::snapshots`] the
//! per-generation state the session keeps for them.

pub(crate) mod agents;
pub(crate) mod artifacts;
pub(crate) mod bridge;
pub(crate) mod child_requests;
pub(crate) mod composition;
pub(crate) mod gate;
pub mod notices;
pub(crate) mod policy;
pub(crate) mod presentation;
pub(crate) mod presentation_schema;
pub(crate) mod secrets;
pub(crate) mod state;
pub(crate) mod tools_catalog;
