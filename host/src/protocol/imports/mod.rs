//! The guest's imports (docs/services.md), served by the session: the
//! [`bridge`] the runtime calls into, the [`child_requests`] the shim
//! sends the host for the guest, the budget of reverse [`notices`], and one
//! module per service interface. Each service owns its gate, its bounds and
//! its wire shape, and checks all of them before a frame is written, so
//! nothing the host would reject fatally ever reaches it. [`gate`] holds
//! the checks they share; [`state`] and [`tools_catalog::snapshots`] the
//! per-generation state the session keeps for them.

pub mod agents;
pub mod artifacts;
pub(crate) mod bridge;
pub mod child_requests;
pub mod composition;
pub mod gate;
pub mod notices;
pub mod policy;
pub mod presentation;
pub(crate) mod presentation_schema;
pub mod secrets;
pub mod state;
pub mod tools_catalog;
