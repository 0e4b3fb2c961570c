//! [`ToolResult`]: what a tool returns when a plain string is not enough.

use serde::Serialize;

use crate::bindings::octet::extension::types as wit;
use crate::error::{Error, Result};

pub use wit::{AudioPart, ContentPart, ImagePart};

/// A tool result: content parts, optional structured content and metadata,
/// and the error flag.
///
/// A handler returning a `String` gets one text part; build a `ToolResult`
/// for anything more:
///
/// ```
/// # use octet_guest::ToolResult;
/// # use serde_json::json;
/// let result = ToolResult::text("README.md has 412 words")
///     .structured(json!({"words": 412}))
///     .metadata(json!({"cache": "miss"}));
/// ```
///
/// The shim checks the protocol's bounds (1..=256 parts with at least one
/// text part, structured content only when the tool declared an output
/// schema, sizes); the SDK leaves that to it so the rules live in one place.
#[derive(Debug, Clone, Default)]
pub struct ToolResult {
    content: Vec<ContentPart>,
    /// JSON text, or why the value could not be serialised (reported when the
    /// result is returned, so builders stay infallible).
    structured: Option<Result<String, String>>,
    metadata: Option<Result<String, String>>,
    is_error: bool,
}

impl ToolResult {
    /// A result with one text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self::default().with_text(text)
    }

    /// An error result the model reads: one text part and `is_error: true`.
    /// (Returning [`Error::failed`] has the same effect.)
    pub fn error(text: impl Into<String>) -> Self {
        Self::text(text).is_error(true)
    }

    /// Appends a text part.
    pub fn with_text(self, text: impl Into<String>) -> Self {
        self.with_part(ContentPart::Text(text.into()))
    }

    /// Appends any content part (image and audio parts need published
    /// artifacts, API 0.2).
    pub fn with_part(mut self, part: ContentPart) -> Self {
        self.content.push(part);
        self
    }

    /// Appends an image part for a published artifact
    /// ([`artifacts::publish`](crate::artifacts::publish)); `mime_type` must
    /// be the one it was published with.
    pub fn with_image(
        self,
        artifact_id: impl Into<String>,
        mime_type: impl Into<String>,
        alt: Option<String>,
    ) -> Self {
        self.with_part(ContentPart::Image(ImagePart {
            artifact_id: artifact_id.into(),
            mime_type: mime_type.into(),
            alt,
        }))
    }

    /// Appends an audio part for a published artifact.
    pub fn with_audio(
        self,
        artifact_id: impl Into<String>,
        mime_type: impl Into<String>,
        transcript: Option<String>,
    ) -> Self {
        self.with_part(ContentPart::Audio(AudioPart {
            artifact_id: artifact_id.into(),
            mime_type: mime_type.into(),
            transcript,
        }))
    }

    /// Sets the structured content, validated by the shim against the tool's
    /// `output_schema` (required exactly when the tool declared one).
    pub fn structured(mut self, value: impl Serialize) -> Self {
        self.structured = Some(to_json(&value));
        self
    }

    /// Sets metadata the host keeps but never shows the model (API 0.2).
    pub fn metadata(mut self, value: impl Serialize) -> Self {
        self.metadata = Some(to_json(&value));
        self
    }

    /// Marks the result as an error the model should read.
    pub fn is_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    pub(crate) fn into_wit(self) -> Result<wit::ToolResult> {
        let serialised = |field: &str, value: Option<Result<String, String>>| {
            value.transpose().map_err(|message| {
                Error::failed(format!(
                    "tool result {field} could not be serialised: {message}"
                ))
            })
        };
        Ok(wit::ToolResult {
            content: self.content,
            structured_content: serialised("structured content", self.structured)?,
            is_error: self.is_error,
            metadata: serialised("metadata", self.metadata)?,
        })
    }
}

pub(crate) fn to_json(value: &impl Serialize) -> Result<String, String> {
    serde_json::to_string(value).map_err(|error| error.to_string())
}

/// What a tool handler may return: a `String`/`&str` (one text part), a
/// [`ToolResult`], or a `Result` of either.
pub trait IntoToolResult {
    /// Converts the handler's value into a result.
    fn into_tool_result(self) -> Result<ToolResult>;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> Result<ToolResult> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<ToolResult> {
        Ok(ToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<ToolResult> {
        Ok(ToolResult::text(self))
    }
}

impl<T: IntoToolResult> IntoToolResult for Result<T> {
    fn into_tool_result(self) -> Result<ToolResult> {
        self?.into_tool_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builder_serialises_values_in_author_order() {
        let result = ToolResult::text("a")
            .with_text("b")
            .structured(json!({"z": 1, "a": 2}))
            .into_wit()
            .unwrap();
        assert_eq!(result.content.len(), 2);
        assert_eq!(
            result.structured_content.as_deref(),
            Some(r#"{"z":1,"a":2}"#)
        );
        assert_eq!(result.metadata, None);
        assert!(!result.is_error);
    }

    #[test]
    fn unserialisable_structured_content_fails_the_call() {
        let mut map = std::collections::HashMap::new();
        map.insert(vec![1u8], 1);
        let error = ToolResult::text("x")
            .structured(map)
            .into_wit()
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("tool result structured content")
        );
    }
}
