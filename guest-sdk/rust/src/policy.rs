//! Policy intents and approvals (API 0.2, features `policy_intents` and
//! `approvals`).
//!
//! ```ignore
//! let intent = Intent::new("external_side_effect", "issues.create", json!({"label": "Open issue"}))
//!     .data_classes(["user_text"]);
//! match octet_guest::policy::evaluate(&intent, None)? {
//!     verdict if verdict.decision == Decision::Allow => { /* go ahead */ }
//!     _ => return Err(Error::failed("not allowed by policy")),
//! }
//! ```
//!
//! Declare the features with
//! [`Extension::uses_policy`](crate::Extension::uses_policy) (and
//! [`Extension::uses_approvals`](crate::Extension::uses_approvals)).

use serde_json::Value;

use crate::bindings::octet::extension::policy as imports;
use crate::error::{Error, Result};

pub use imports::Decision;

/// What the extension is about to do.
#[derive(Debug, Clone, PartialEq)]
pub struct Intent {
    kind: String,
    operation: String,
    target: Value,
    data_classes: Vec<String>,
    read_only: Option<bool>,
    destructive: Option<bool>,
}

impl Intent {
    /// An intent of `kind` (e.g. `external_side_effect`) for `operation`
    /// (a stable dotted name) on `target` (a JSON object for display and
    /// audit).
    pub fn new(kind: impl Into<String>, operation: impl Into<String>, target: Value) -> Self {
        Intent {
            kind: kind.into(),
            operation: operation.into(),
            target,
            data_classes: Vec::new(),
            read_only: None,
            destructive: None,
        }
    }

    /// The classes of data involved (e.g. `user_text`).
    pub fn data_classes<I, S>(mut self, classes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.data_classes = classes.into_iter().map(Into::into).collect();
        self
    }

    /// Hints the operation only reads.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = Some(read_only);
        self
    }

    /// Hints the operation is destructive (turns an `allow` into `ask`).
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive = Some(destructive);
        self
    }

    fn to_wit(&self) -> imports::Intent {
        imports::Intent {
            kind: self.kind.clone(),
            operation: self.operation.clone(),
            target: self.target.to_string(),
            data_classes: self.data_classes.clone(),
            read_only: self.read_only,
            destructive: self.destructive,
        }
    }
}

/// The host's classification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// `Ask` without a token means: not authorized.
    pub decision: Decision,
    /// A single-use approval token (with `Ask`, when approved): repeat
    /// [`evaluate`] with the identical intent and this token, from the same
    /// request, to get `Allow`.
    pub approval_token: Option<String>,
}

/// Asks the host to classify `intent` for the tool call or command being
/// served; `approval_token` redeems an approval.
pub fn evaluate(intent: &Intent, approval_token: Option<&str>) -> Result<Verdict> {
    imports::evaluate(&intent.to_wit(), approval_token)
        .map(|verdict| Verdict {
            decision: verdict.decision,
            approval_token: verdict.approval_token,
        })
        .map_err(Error::from_wit)
}
