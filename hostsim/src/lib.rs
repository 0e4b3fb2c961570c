//! `octet-hostsim`: octet's side of the legacy JSON-RPC wire, for tests, the demo
//! and benchmarks.
//!
//! It spawns an extension exactly as octet does ([`Launch`],
//! docs/protocol.md#launch), writes host frames, and reads the extension's
//! stdout through a strict [`FrameChecker`] that applies octet's fatal rules
//! (docs/protocol.md#fatal) to every line:
//! anything the real host would die of is reported as a [`Violation`] with
//! the offending line. stderr is collected on a background thread and parsed
//! as structured JSON log records where it is JSON ([`StderrLog`]).
//!
//! ```no_run
//! use octet_hostsim::{ApiVersion, Context, InitializeParams, Launch, ManifestSpec};
//! use serde_json::json;
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let manifest = ManifestSpec::new("hello-world", ApiVersion::V0_1).tools(&["hello_world"]);
//! let (ext, ws) = (std::path::Path::new("examples/hello-world"), std::path::Path::new("/tmp/ws"));
//! let mut session = Launch::new("octet-wasm")
//!     .args(["run", "hello-world.wasm"])
//!     .manifest_path(ext.join("extension.toml"))
//!     .workspace(ws)
//!     .scratch("/tmp/scratch")
//!     .name("hello-world")
//!     .spawn()?;
//! let params = InitializeParams::new(&manifest, &ext.join("extension.toml"), ws).to_json();
//! session.call("initialize", params, Duration::from_secs(30))?;
//! let context = Context::new(ws).to_json();
//! let reply = session.call(
//!     "tool/call",
//!     json!({"name": "hello_world", "arguments": {"name": "Ada"}, "context": context}),
//!     Duration::from_secs(30),
//! )?;
//! assert_eq!(reply.result().unwrap()["content"], "Hello, Ada!");
//! session.check_clean()?;
//! # Ok(()) }
//! ```
//!
//! What it leaves to the caller: choosing timeouts, deciding which frames a
//! test expects, and answering child requests (see
//! [`Session::wait_response_with`]). It uses std threads and `serde_json`
//! only.

mod checker;
mod composition;
mod frame;
mod handshake;
mod launch;
mod offer_v02;
mod offer_v04;
mod params;
mod reader;
mod rule;
mod rules;
mod session;
mod stderr;

pub use checker::{
    FrameChecker, MAX_CHILD_ID_BYTES, MAX_DISTINCT_CHILD_IDS, MAX_LINE_BYTES,
    MAX_OUTSTANDING_CHILD_REQUESTS, MAX_SERVICED_CHILD_OPERATIONS, ManifestFacts, Violation,
};
pub use composition::{
    CompositionCall, HostileUpdates, MAX_BUFFERED_UPDATES, UPDATE_METHOD, update_params,
};
pub use frame::{ChildId, Frame, FrameKind, RpcError};
pub use launch::Launch;
pub use offer_v02::{HOST_OPTIONAL_FEATURES, REQUIRED_FEATURES};
pub use offer_v04::{
    MAX_PROMPT_GUIDELINES, MAX_PROMPT_TEXT_BYTES, V0_4_ALWAYS, V0_4_ONLY_FEATURES,
    optional_features as v0_4_optional_features,
};
pub use params::{
    ApiVersion, Context, HOST_MAX_CONCURRENT_REQUESTS, InitializeParams, ManifestSpec,
    OCTET_VERSION, host_state,
};
pub use rule::Rule;
pub use session::{Reply, Session, SimError};
pub use stderr::{StderrLine, StderrLog};
