//! A request's params as the host sent them.
//!
//! A request line parsed in place ([`super::in_place`]) keeps the line
//! itself (moved, not copied) and where its `params` member lies, so the
//! protocol layer can read the hot `tool/call` without building a tree of
//! it; every other reader asks for [`Params::value`]. The text was checked
//! with the whole line: it is JSON a `Value` parse accepts.

use serde_json::Value;
use std::borrow::Cow;
use std::ops::Range;

#[derive(Debug, Clone)]
pub enum Params {
    /// `params` inside the host's line; `None` when the member is absent
    /// (read as `null`).
    Text {
        line: String,
        span: Option<Range<usize>>,
    },
    /// Already a value: a line sorted the general way, or made in tests.
    Value(Value),
}

impl Params {
    /// The params' JSON text, when they are still text.
    pub fn text(&self) -> Option<&str> {
        match self {
            Params::Text { line, span } => Some(span.clone().map_or("null", |span| &line[span])),
            Params::Value(_) => None,
        }
    }

    /// The params as a value (parsed from the text on each call).
    pub fn value(&self) -> Cow<'_, Value> {
        match self {
            Params::Value(value) => Cow::Borrowed(value),
            // The whole line passed the same parser's checks before it
            // became a request, so this parse cannot fail; `null` would
            // only make the method refuse its params.
            Params::Text { .. } => Cow::Owned(
                self.text()
                    .and_then(|text| serde_json::from_str(text).ok())
                    .unwrap_or(Value::Null),
            ),
        }
    }
}

impl From<Value> for Params {
    fn from(value: Value) -> Params {
        Params::Value(value)
    }
}

/// Equal when they are the same JSON (not the same text).
impl PartialEq for Params {
    fn eq(&self, other: &Params) -> bool {
        self.value() == other.value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_value_agree() {
        let line = r#"{"params":{"a":[1,"x"]}}"#.to_owned();
        let params = Params::Text {
            line,
            span: Some(10..23),
        };
        assert_eq!(params.text(), Some(r#"{"a":[1,"x"]}"#));
        assert_eq!(params.value().as_ref(), &json!({"a": [1, "x"]}));
        assert_eq!(params, Params::from(json!({"a": [1, "x"]})));
        let absent = Params::Text {
            line: "{}".into(),
            span: None,
        };
        assert_eq!(absent.text(), Some("null"));
        assert_eq!(absent.value().as_ref(), &Value::Null);
    }
}
