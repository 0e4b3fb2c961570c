//! The protocol layer: joins the wire and the runtime. Four rooms:
//! - [`handshake`]: `initialize`, the API version, features and hooks
//!   negotiated, the manifest's `contributes`, the sandbox, the guest's
//!   start;
//! - [`requests`]: the server loop, each request's plan, the lanes that run
//!   it on a guest instance, the session's table of active requests, the
//!   deadline timer, `shutdown`;
//! - [`results`]: guest answers and errors turned into checked wire results;
//! - [`imports`]: the guest's imports (the bridge the runtime calls, child
//!   requests and notifications, the services).
//!
//! Beside them, what all rooms share: JSON from the guest parsed once
//! ([`guest_json`]), the bounds it is checked against ([`bounds`]), and the
//! deadline of each kind of request ([`deadlines`]).

pub(crate) mod bounds;
pub(crate) mod deadlines;
pub mod guest_json;
pub mod handshake;
pub mod imports;
pub mod requests;
pub mod results;
