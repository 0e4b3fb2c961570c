//! octet-wasm: a native octet extension process that runs the extension's
//! logic as a sandboxed WebAssembly component.
//!
//! Layers, each ignorant of the ones above it:
//! - [`wire`]: JSON-RPC frames, ids and limits on stdin/stdout;
//! - [`runtime`]: wasmtime engine, compiled cache, limits, instances, WASI
//!   sandbox;
//! - [`protocol`]: the octet protocol, joining the two.
//!
//! The `octet-hostsim` crate plays octet's side of the wire (tests, demo,
//! benchmarks);
//! [`author`] holds the offline tools for extension authors.

pub mod author;
pub mod cancel;
pub mod demo;
pub mod log;
pub mod policy;
pub mod process_env;
pub mod protocol;
pub mod receipts;
pub mod run_args;
pub mod runtime;
pub mod signing;
pub mod user_db;
pub mod user_dirs;
pub mod wire;
