//! The WebAssembly side: engine, compiled-component cache, store limits,
//! instances and the WASI sandbox.
//!
//! This layer knows nothing of JSON-RPC. It loads a component built against
//! our WIT, makes sandboxed instances of it and calls their exports; what a
//! guest asks of the host goes through the [`Bridge`] trait, which the
//! protocol layer implements.

pub(crate) mod bridge;
pub mod cache;
pub mod component_file;
mod convert;
pub mod engine;
pub(crate) mod exports;
pub(crate) mod imports;
pub(crate) mod instance;
pub(crate) mod limits;
pub(crate) mod links;
pub(crate) mod loader;
pub mod offline;
pub(crate) mod output;
pub(crate) mod pending;
mod procfs;
pub(crate) mod sandbox;
pub(crate) mod shapes;
pub(crate) mod store;
pub mod types;
pub(crate) mod v0_2;
pub(crate) mod v0_4;
pub(crate) mod versions;

pub use bridge::Bridge;
pub use cache::LoadSource;
pub use instance::{Fault, Instance};
pub use limits::Limits;
pub use loader::{Runtime, precompile};
pub use sandbox::{FsAccess, Sandbox};
pub use versions::WitVersion;
