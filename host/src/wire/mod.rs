//! The octet wire: JSON-RPC 2.0 messages, one compact JSON object per line.
//!
//! This layer knows frames, ids and limits and nothing of WebAssembly:
//! [`message`] is the message model (a plain request read in place by
//! `in_place`, its params kept as text by `params`), [`frame`] reads bounded lines,
//! [`guard`] refuses frames the host could not read and [`transport`] owns
//! stdin and stdout (a reader task on non-blocking stdin, and a writer that
//! writes each frame under a lock in the task that produced it).

pub(crate) mod error_code;
pub mod frame;
pub mod guard;
pub(crate) mod in_place;
pub mod message;
pub(crate) mod params;
pub(crate) mod transport;

/// Longest frame either side may write, in bytes before the LF.
///
/// The host tears the stream down as soon as an extension line reaches
/// 1,048,576 bytes before its LF, and never sends more than 1,048,575 bytes
/// plus LF itself (docs/protocol.md#frame-size), so one bound serves both
/// directions.
pub const MAX_FRAME_BYTES: usize = 1_048_575;
