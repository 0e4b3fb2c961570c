//! The guest's service imports (docs/services.md), one module per WIT
//! interface: each owns its gate, its bounds and its wire shape, and checks
//! all of them before a frame is written, so nothing the host would reject
//! fatally ever reaches it. [`gate`] holds the checks they share; [`state`]
//! and [`catalogs`] the per-generation state the session keeps for them.

pub mod agents;
pub mod artifacts;
pub mod catalogs;
pub mod composition;
pub mod gate;
pub mod policy;
pub mod presentation;
pub mod secrets;
pub mod state;
pub mod tools_catalog;
