//! The API version a session speaks, the vocabulary every protocol module
//! shares. It lives apart from `initialize` (which picks it) so that the
//! modules `initialize` calls can name it without importing their caller.

/// The wire version the host selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiVersion {
    V0_1,
    V0_2,
    /// octet's current authoring API: the 0.2 wire with its own version
    /// strings and a wider set of features (docs/api-0.4.md).
    V0_4,
}

impl ApiVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            ApiVersion::V0_1 => "0.1",
            ApiVersion::V0_2 => "0.2",
            ApiVersion::V0_4 => "0.4",
        }
    }

    /// Whether this is the feature-negotiated wire (0.2 and 0.4 share it:
    /// `protocol` in initialize, typed results, `parent_request_id`...),
    /// as opposed to the frozen 0.1 wire.
    pub fn negotiates(self) -> bool {
        self != ApiVersion::V0_1
    }
}
