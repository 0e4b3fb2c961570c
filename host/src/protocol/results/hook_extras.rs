//! The typed results of the API 0.4 hooks (docs/api-0.4.md): cache-warming
//! advice, compaction frames and the provider pipeline's payload and header
//! changes. Each is sent only for its own hook and checked against its
//! bound first, so a guest's oversized or malformed advice becomes a plain
//! error for the request instead of a frame the host refuses.

use super::error::{ResultError, fail};
use crate::protocol::bounds::{JsonBounds, check_json};
use crate::protocol::handshake::hook::Hook;
use crate::runtime::types::{CacheWarmingAction, HookResult};
use base64::Engine as _;
use serde_json::{Map, Value, json};

/// Most compaction frames, and bytes of one (before base64).
pub const MAX_COMPACTION_FRAMES: usize = 32;
pub const MAX_COMPACTION_FRAME_BYTES: usize = 512 * 1024;
/// The frames travel base64 inside one protocol frame of at most 1 MiB; the
/// margin leaves room for the envelope and the other members.
pub const MAX_COMPACTION_ENCODED: usize = (1 << 20) - 16 * 1024;
/// The provider payload a `before_provider_request` hook may substitute.
pub const PROVIDER_PAYLOAD: JsonBounds = JsonBounds {
    name: "provider_payload",
    max_bytes: 768 * 1024,
    max_depth: 32,
    max_nodes: 65_536,
    max_key_bytes: None,
};
/// The PNG signature: compaction frames are images for vision models.
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Adds the extra of `hook`'s own 0.4 result to `object`, if the guest gave
/// one.
pub fn add(
    hook: Hook,
    result: &HookResult,
    object: &mut Map<String, Value>,
) -> Result<(), ResultError> {
    match hook {
        Hook::CacheWarmingDecision => {
            // Absent means no opinion: the host keeps its decision.
            if let Some(action) = result.cache_warming {
                let action = match action {
                    CacheWarmingAction::Warm => "warm",
                    CacheWarmingAction::Stop => "stop",
                };
                object.insert("cache_warming_decision".into(), json!(action));
            }
        }
        Hook::CompactionStrategy if !result.compaction_frames.is_empty() => {
            object.insert(
                "compaction_frames".into(),
                compaction_frames(&result.compaction_frames)?,
            );
        }
        Hook::BeforeProviderRequest => {
            if let Some(text) = &result.provider_payload {
                object.insert("provider_payload".into(), provider_payload(text)?);
            }
        }
        Hook::BeforeProviderHeaders if !result.provider_headers.is_empty() => {
            object.insert(
                "provider_headers".into(),
                super::provider_headers::provider_headers(&result.provider_headers)?,
            );
        }
        _ => {}
    }
    Ok(())
}

fn compaction_frames(frames: &[Vec<u8>]) -> Result<Value, ResultError> {
    if frames.len() > MAX_COMPACTION_FRAMES {
        return fail(format!(
            "compaction_strategy returned {} frames; the limit is {MAX_COMPACTION_FRAMES}",
            frames.len()
        ));
    }
    let mut encoded = Vec::with_capacity(frames.len());
    let mut total = 0;
    for (index, frame) in frames.iter().enumerate() {
        if frame.len() > MAX_COMPACTION_FRAME_BYTES {
            return fail(format!(
                "compaction frame {} has {} bytes; the limit is 512 KiB",
                index + 1,
                frame.len()
            ));
        }
        if !frame.starts_with(PNG_SIGNATURE) {
            return fail(format!("compaction frame {} is not a PNG image", index + 1));
        }
        let text = base64::engine::general_purpose::STANDARD.encode(frame);
        total += text.len();
        encoded.push(Value::String(text));
    }
    if total > MAX_COMPACTION_ENCODED {
        return fail(format!(
            "the compaction frames take {total} bytes in base64, more than fit in one 1 MiB protocol frame"
        ));
    }
    Ok(Value::Array(encoded))
}

fn provider_payload(text: &str) -> Result<Value, ResultError> {
    if text.len() > PROVIDER_PAYLOAD.max_bytes {
        return fail(format!(
            "provider_payload has {} bytes; the limit is 768 KiB",
            text.len()
        ));
    }
    let value = crate::protocol::guest_json::parse_within(
        text,
        "provider_payload",
        PROVIDER_PAYLOAD.max_depth,
    )
    .map_err(|err| ResultError(err.into()))?;
    if !value.is_object() && !value.is_array() {
        return fail("provider_payload must be a JSON object or array");
    }
    check_json(&value, &PROVIDER_PAYLOAD).map_err(ResultError)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result() -> HookResult {
        HookResult::default()
    }

    fn extras(hook: &str, result: &HookResult) -> Result<Value, ResultError> {
        let mut object = Map::new();
        add(Hook::parse(hook).unwrap(), result, &mut object)?;
        Ok(Value::Object(object))
    }

    fn png(len: usize) -> Vec<u8> {
        let mut bytes = PNG_SIGNATURE.to_vec();
        bytes.resize(len, 0);
        bytes
    }

    #[test]
    fn each_extra_only_for_its_hook() {
        let mut r = result();
        r.cache_warming = Some(CacheWarmingAction::Stop);
        r.provider_payload = Some("{\"a\":1}".into());
        assert_eq!(
            extras("cache_warming_decision", &r).unwrap(),
            json!({"cache_warming_decision": "stop"})
        );
        assert_eq!(
            extras("before_provider_request", &r).unwrap(),
            json!({"provider_payload": {"a": 1}})
        );
        assert_eq!(extras("before_prompt", &r).unwrap(), json!({}));
        assert_eq!(extras("after_provider_response", &r).unwrap(), json!({}));
        assert_eq!(
            extras("cache_warming_decision", &result()).unwrap(),
            json!({})
        );
    }

    #[test]
    fn compaction_frames_are_bounded_pngs() {
        let mut r = result();
        r.compaction_frames = vec![png(8), png(10)];
        let frames = extras("compaction_strategy", &r).unwrap();
        assert_eq!(frames["compaction_frames"][0], "iVBORw0KGgo=");
        r.compaction_frames = vec![b"GIF89a".to_vec()];
        assert_eq!(
            extras("compaction_strategy", &r).unwrap_err().0,
            "compaction frame 1 is not a PNG image"
        );
        r.compaction_frames = vec![png(8); 33];
        assert!(
            extras("compaction_strategy", &r)
                .unwrap_err()
                .0
                .contains("33 frames")
        );
        r.compaction_frames = vec![png(MAX_COMPACTION_FRAME_BYTES + 1)];
        assert!(
            extras("compaction_strategy", &r)
                .unwrap_err()
                .0
                .contains("512 KiB")
        );
        r.compaction_frames = vec![png(MAX_COMPACTION_FRAME_BYTES); 2];
        assert!(
            extras("compaction_strategy", &r)
                .unwrap_err()
                .0
                .contains("1 MiB")
        );
    }

    /// The header rules themselves are `provider_headers`'s tests.
    #[test]
    fn headers_only_for_their_hook_and_refusals_kept() {
        let edit = |name: &str, value: &str| crate::runtime::types::HeaderEdit {
            name: name.into(),
            values: Some(vec![value.into()]),
        };
        let mut r = result();
        r.provider_headers = vec![edit("x-one", "1")];
        assert_eq!(
            extras("before_provider_headers", &r).unwrap(),
            json!({"provider_headers": {"x-one": "1"}})
        );
        assert_eq!(extras("before_provider_request", &r).unwrap(), json!({}));
        r.provider_headers = vec![edit("x-one", "a\u{1b}b")];
        assert!(
            extras("before_provider_headers", &r)
                .unwrap_err()
                .0
                .contains("provider header x-one")
        );
    }

    #[test]
    fn provider_payload_is_an_object_or_array_within_768_kib() {
        let mut r = result();
        r.provider_payload = Some("\"text\"".into());
        let err = extras("before_provider_request", &r).unwrap_err().0;
        assert!(err.contains("must be a JSON object or array"), "{err}");
        r.provider_payload = Some(format!("[\"{}\"]", "x".repeat(768 * 1024)));
        assert!(
            extras("before_provider_request", &r)
                .unwrap_err()
                .0
                .contains("768 KiB")
        );
        r.provider_payload = Some("{not json".into());
        let err = extras("before_provider_request", &r).unwrap_err().0;
        assert!(err.contains("is not valid JSON"), "{err}");
    }
}
