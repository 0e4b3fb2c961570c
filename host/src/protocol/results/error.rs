//! The error of a guest answer that breaks a protocol rule, shared by the
//! result converters (`results` and the 0.4 `hook_extras` it calls) so
//! neither has to import the other for it.

/// A guest answer that breaks a protocol rule; the text names the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultError(pub String);

impl std::fmt::Display for ResultError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Shorthand for refusing an answer with the rule it breaks.
pub(crate) fn fail<T>(message: impl Into<String>) -> Result<T, ResultError> {
    Err(ResultError(message.into()))
}
