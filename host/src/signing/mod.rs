//! Signed components: who wrote the code, checked before any of it runs.
//!
//! The sandbox limits what an extension can do; a signature says whose it
//! is. The format is the WebAssembly tool conventions' embedded signature
//! (a `signature` custom section first; the `wasmsign2` crate reads and
//! writes it), with OpenSSH Ed25519 keys: a publisher's identity is the
//! public key line they already publish. `octet-wasm sign` records the
//! signer's key line as the signature's key id, so `inspect` and the logs
//! can name who signed without being told; a claimed key counts only when
//! its signature verifies.
//!
//! Only the user's policy chooses whom to trust (`[trust]`,
//! `crate::policy`): no argument, variable or file of the bundle adds a
//! publisher or lifts the requirement. The check runs on the bytes `run`
//! read, the same bytes that are hashed for the cache, so a cached
//! compilation never stands in for it (docs/security.md).

pub mod keys;
pub mod sections;
pub mod sign;
pub mod trust;
pub mod verify;

#[cfg(test)]
mod tests;

pub use keys::{Publisher, SigningKey};
pub use trust::{Accepted, TrustPolicy, decide, decide_on, vouch};
pub use verify::{Examination, examine};
