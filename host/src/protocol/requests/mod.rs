//! The host's requests, from the line read to the answer written: the
//! server loop reads and admits them, the work planner turns each into a
//! guest call, the lanes run it on an instance, the session keeps the
//! table of active requests (one terminal claim each), one timer answers
//! every deadline, and `shutdown` drains them at the end.

pub(crate) mod deadline_timer;
pub mod lanes;
pub(crate) mod request_state;
pub mod server;
pub(crate) mod session;
pub(crate) mod shutdown;
pub mod tool_call_text;
pub(crate) mod work;
