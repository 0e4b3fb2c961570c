//! Reading a request line in place: the fast path of
//! `message::parse_line`.
//!
//! A full parse into a `Value` allocates every key and string of the line
//! and was the largest cost of a `tool/call` (BENCHMARKS.md). Here the
//! envelope is read with borrowed members ([`request`]); a line that is a
//! plain request is then checked by the same parser without building
//! anything ([`check`]: the same syntax, escapes, number ranges and nesting
//! limit as a `Value` parse, so it refuses exactly what that refuses).
//! Anything that is not a plain request (a notification, a response, a
//! duplicate or ill-typed member) returns `None`, and the caller sorts the
//! line the general way, with the same answers as before
//! (docs/choices.md#in-place-read).

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, de};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

/// Checks that `text` is one JSON value a `Value` parse would accept,
/// without building it.
pub fn check(text: &str) -> Result<(), serde_json::Error> {
    serde_json::from_str::<Checked>(text).map(|_| ())
}

/// Any JSON value, visited and dropped: what serde_json checks on the way
/// (escapes, surrogates, number ranges, its recursion limit) is checked.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Checked, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

/// The members of a request envelope, borrowed from the line.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
}

/// A member that is there, `null` included (`Option` alone reads `null` as
/// absent, and an `"id": null` request is not a notification).
pub fn present<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// A line's request: its id, method and where its params lie in `text`, or
/// `None` for anything the general path must sort. What the envelope skips
/// is not checked here: [`check`] the line before using it.
pub fn request(text: &str) -> Option<(u64, Cow<'_, str>, Option<Range<usize>>)> {
    let envelope: Envelope = serde_json::from_str(text).ok()?;
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return None;
    }
    let method = envelope.method.filter(|method| !method.is_empty())?;
    // Digits only: `1.0`, `-1` and `1e2` take the general path, which
    // refuses them as ids.
    let id = envelope.id?.get().parse::<u64>().ok()?;
    let span = match envelope.params {
        None => None,
        Some(raw) => Some(span_in(text, raw.get())?),
    };
    Some((id, method, span))
}

/// Where `part` lies in `text`, if it is a slice of it (a borrowed
/// `RawValue` always is; anything else is refused rather than trusted).
fn span_in(text: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let span = start..start.checked_add(part.len())?;
    let inside = text.get(span.clone())?;
    (inside.as_ptr() == part.as_ptr()).then_some(span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_refuses_what_a_value_parse_refuses() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for bad in [
            "",
            "{",
            "{\"a\":1,}",
            "\"\\ud800\"",
            "1e400",
            "[1] x",
            "{\"a\":\"\\x\"}",
            deep.as_str(),
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_str::<serde_json::Value>(bad).is_err());
        }
        for good in [
            "{}",
            "[1,-2,3.5,1e300,true,null,\"\\ud83d\\ude00\"]",
            " {\"a\" : {\"b\":[]}} ",
        ] {
            assert!(check(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn spans_only_of_slices_of_the_text() {
        let text = "abcdef";
        assert_eq!(span_in(text, &text[2..4]), Some(2..4));
        assert_eq!(span_in(text, "cd"), None);
        assert_eq!(span_in(&text[1..], text), None);
    }

    #[test]
    fn requests_are_read_in_place() {
        let line = r#"{"jsonrpc":"2.0","id":7,"method":"tool/call","params":{"name":"x"}}"#;
        let (id, method, span) = request(line).unwrap();
        assert_eq!((id, method.as_ref()), (7, "tool/call"));
        assert_eq!(&line[span.unwrap()], r#"{"name":"x"}"#);
        let no_params = r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        assert_eq!(request(no_params).unwrap().2, None);
    }

    #[test]
    fn anything_unusual_takes_the_general_path() {
        for line in [
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tool/call"}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"method":"tool/call"}"#,
            r#"{"jsonrpc":"2.0","id":-1,"method":"tool/call"}"#,
            r#"{"jsonrpc":"2.0","id":"1","method":"tool/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"a"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":""}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"[1]"#,
        ] {
            assert!(request(line).is_none(), "{line}");
        }
    }
}
