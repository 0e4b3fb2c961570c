//! The names of octet's fatal rules, shared by the checker (which applies
//! them line by line) and the per-method rules it calls (which say which
//! one a frame broke).

/// Which rule a line broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Not valid UTF-8.
    NotUtf8,
    /// Not JSON.
    NotJson,
    /// JSON, but not an object (includes batch arrays).
    NotObject,
    /// `jsonrpc` missing or not `"2.0"`.
    BadJsonrpc,
    /// The line reached 1,048,576 bytes before its LF.
    LineTooLong,
    /// stdout ended after a partial line.
    Unterminated,
    /// A response whose `id` is not a u64 (null, string, negative, missing).
    BadResponseId,
    /// A response without exactly one of `result`/`error`, or with an error
    /// that is not `{code:int, message:string}`.
    BadResponseBody,
    /// A response for an id the host has no unanswered request for (the host
    /// only logs it, but every host request gets exactly one answer,
    /// docs/protocol.md#host-ids).
    UnexpectedResponse,
    /// `method` present but not a string.
    BadMethod,
    /// Any frame other than the initialize response before that response.
    BeforeInitialize,
    /// The initialize result fails the host's validation
    /// (docs/protocol.md#host-validation).
    InvalidInitializeResult,
    /// A message the manifest does not declare (`notification`,
    /// `context/contribution`, `status/contribution` surface,
    /// `confirmation/request`).
    Undeclared,
    /// A message that needs a feature or API version not negotiated
    /// (`$/progress`, decorations, `input/request` on 0.1).
    NotNegotiated,
    /// Params that the host decodes strictly and rejects.
    InvalidParams,
    /// A notification-only method sent with an id, or a request method sent
    /// without one.
    WrongMessageType,
    /// A child request id that is neither u64 nor a string ≤ 256 bytes.
    BadChildId,
    /// A child request id used before in this generation.
    ChildIdReused,
    /// More than 128 outstanding child requests or 65,536 distinct ids.
    TooManyChildRequests,
    /// More than 8 confirmation/input requests under model tool calls.
    TooManyServicedOperations,
}
