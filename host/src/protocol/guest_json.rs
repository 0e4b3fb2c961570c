//! JSON text from the guest, parsed once where it enters the shim.
//!
//! Every `json` value a guest hands over (schemas, results, error data,
//! snapshots, intents, menus, log fields) goes through [`parse`], so what
//! the shim later writes is a frame octet can read: octet's parser refuses
//! the 128th level of nesting and kills the extension over it, and
//! serde_json here would accept 127. Nesting is checked on the text before
//! it is parsed, so a guest value nested past any parser's limit is refused
//! as the depth bound it breaks, not as "not valid JSON".
//!
//! Parsing is also where numbers and strings are made safe: serde_json
//! refuses numbers outside f64 (`1e400`), `NaN` and lone surrogates
//! (`"\ud800"`), and what it writes back always parses again.

use crate::wire::guard::exceeds_depth;
use serde_json::Value;

/// Deepest nesting of arrays and objects accepted in any JSON from the
/// guest. Envelopes add at most 4 levels (an initialize result's
/// `result.tools[i].parameters`), so a frame built from guest JSON stays at
/// 68 levels or less, under the writer's own bound
/// ([`MAX_FRAME_DEPTH`](crate::wire::guard::MAX_FRAME_DEPTH)) and far under
/// the 128 octet cannot read. Places the protocol bounds more tightly
/// (`structured_content`, `metadata`: 32) pass their own, lower limit.
pub const MAX_GUEST_JSON_DEPTH: usize = 64;

/// Why guest JSON was refused; it reads as a sentence about `what`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestJsonError {
    TooDeep { what: String, limit: usize },
    Invalid { what: String, reason: String },
}

impl std::fmt::Display for GuestJsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GuestJsonError::TooDeep { what, limit } if *limit == MAX_GUEST_JSON_DEPTH => write!(
                f,
                "{what} is nested deeper than {limit} levels, the most octet-wasm accepts in JSON from an extension (octet cannot read frames nested 128 levels deep)"
            ),
            GuestJsonError::TooDeep { what, limit } => {
                write!(f, "{what} is nested deeper than {limit} levels")
            }
            GuestJsonError::Invalid { what, reason } => {
                write!(f, "{what} is not valid JSON: {reason}")
            }
        }
    }
}

impl From<GuestJsonError> for String {
    fn from(error: GuestJsonError) -> String {
        error.to_string()
    }
}

/// Parses guest JSON `text` (named `what` in errors), refusing nesting
/// deeper than [`MAX_GUEST_JSON_DEPTH`].
pub fn parse(text: &str, what: &str) -> Result<Value, GuestJsonError> {
    parse_within(text, what, MAX_GUEST_JSON_DEPTH)
}

/// Like [`parse`] with a lower depth bound of the protocol's (`limit` is
/// capped at [`MAX_GUEST_JSON_DEPTH`]).
pub fn parse_within(text: &str, what: &str, limit: usize) -> Result<Value, GuestJsonError> {
    let limit = limit.min(MAX_GUEST_JSON_DEPTH);
    if exceeds_depth(text, limit) {
        return Err(GuestJsonError::TooDeep {
            what: what.to_owned(),
            limit,
        });
    }
    serde_json::from_str(text).map_err(|err| GuestJsonError::Invalid {
        what: what.to_owned(),
        reason: err.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}0{}", "{\"n\":".repeat(levels), "}".repeat(levels))
    }

    #[test]
    fn depth_at_and_past_the_bound() {
        for levels in [0, 1, 63, 64] {
            assert!(parse(&nested(levels), "x").is_ok(), "{levels}");
        }
        for levels in [65, 127, 128, 200, 100_000] {
            assert_eq!(
                parse(&nested(levels), "the menu").unwrap_err().to_string(),
                "the menu is nested deeper than 64 levels, the most octet-wasm accepts in JSON from an extension (octet cannot read frames nested 128 levels deep)",
                "{levels}"
            );
        }
        // Arrays count like objects; brackets in strings do not.
        assert!(matches!(
            parse(&format!("{}{}", "[".repeat(65), "]".repeat(65)), "x"),
            Err(GuestJsonError::TooDeep {
                limit: MAX_GUEST_JSON_DEPTH,
                ..
            })
        ));
        assert!(parse(&format!("[\"{}\"]", "[".repeat(500)), "x").is_ok());
    }

    /// Found by the e2e `metadata_depth_is_bounded_at_32`: metadata nested
    /// 1,000 deep was refused as "not valid JSON: recursion limit
    /// exceeded"; the protocol's own bound is named instead.
    #[test]
    fn a_tighter_protocol_bound_is_named_plainly() {
        assert!(parse_within(&nested(32), "metadata", 32).is_ok());
        assert_eq!(
            parse_within(&nested(1_000), "metadata", 32)
                .unwrap_err()
                .to_string(),
            "metadata is nested deeper than 32 levels"
        );
        // A looser bound than the guest-wide one is capped.
        assert!(matches!(
            parse_within(&nested(65), "x", 1_000),
            Err(GuestJsonError::TooDeep {
                limit: MAX_GUEST_JSON_DEPTH,
                ..
            })
        ));
    }

    /// Numbers and strings the host could not read back are refused here;
    /// everything accepted re-encodes to JSON that parses again.
    #[test]
    fn numbers_and_escapes_that_cannot_round_trip_are_refused() {
        for bad in [
            "1e400",
            "-1e400",
            "NaN",
            "Infinity",
            r#""\ud800""#,
            r#""\udc00x""#,
            "[1,]",
            "{} x",
        ] {
            let error = parse(bad, "error data").unwrap_err();
            assert!(
                matches!(&error, GuestJsonError::Invalid { .. })
                    && error
                        .to_string()
                        .starts_with("error data is not valid JSON: "),
                "{bad}: {error}"
            );
        }
        for good in [
            "-0",
            "1e-400",
            "18446744073709551616",
            r#""\ud83d\ude00\u0000""#,
        ] {
            let value = parse(good, "x").unwrap();
            let again: Value = serde_json::from_str(&value.to_string()).unwrap();
            assert_eq!(again, value, "{good}");
        }
    }
}
