//! `artifacts.publish` (docs/services.md#artifacts): the MIME types and
//! signatures the host verifies, the size and per-generation budgets, and
//! the move of large artifacts through the scratch directory.

use super::gate::{self, bound};
use crate::protocol::imports::child_requests::ChildError;
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::runtime::cache::sha256_hex;
use crate::runtime::types::GuestError;
use base64::Engine as _;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Largest artifact sent inline as base64 (docs/services.md#artifact-checks);
/// larger ones go through `OCTET_EXTENSION_SCRATCH`.
pub const MAX_INLINE_ARTIFACT: usize = 256 * 1024;
/// Largest artifact (docs/services.md#artifact-checks).
pub const MAX_ARTIFACT_BYTES: usize = 20 << 20;
/// The artifact MIME types the host verifies (docs/services.md#artifact-checks).
pub const ARTIFACT_MIME_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "audio/wav",
    "audio/mpeg",
    "audio/flac",
    "audio/opus",
    "audio/aac",
    "audio/mp4",
];

/// Whether `data` starts with the signature of `mime`
/// (docs/services.md#artifact-checks).
pub fn signature_matches(mime: &str, data: &[u8]) -> bool {
    let at = |offset: usize, tag: &[u8]| data.get(offset..offset + tag.len()) == Some(tag);
    match mime {
        "image/png" => at(0, b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => at(0, b"\xff\xd8\xff"),
        "image/gif" => at(0, b"GIF87a") || at(0, b"GIF89a"),
        "image/webp" => at(0, b"RIFF") && at(8, b"WEBP"),
        "audio/wav" => at(0, b"RIFF") && at(8, b"WAVE"),
        "audio/mpeg" => {
            at(0, b"ID3")
                || (data.len() >= 2
                    && data[0] == 0xff
                    && data[1] & 0xe0 == 0xe0
                    && data[1] & 0x06 != 0)
        }
        "audio/flac" => at(0, b"fLaC"),
        "audio/opus" => {
            at(0, b"OggS")
                && data[..data.len().min(64)]
                    .windows(8)
                    .any(|w| w == b"OpusHead")
        }
        "audio/aac" => data.len() >= 2 && data[0] == 0xff && data[1] & 0xf6 == 0xf0,
        "audio/mp4" => data.len() >= 12 && at(4, b"ftyp"),
        _ => false,
    }
}

/// Checks an artifact before anything is reserved or written.
pub fn check_artifact(mime: &str, data: &[u8]) -> Result<(), GuestError> {
    if !ARTIFACT_MIME_TYPES.contains(&mime) {
        return Err(bound(format!(
            "artifact MIME type {mime:?} is not supported (one of {})",
            ARTIFACT_MIME_TYPES.join(", ")
        )));
    }
    if data.len() > MAX_ARTIFACT_BYTES {
        return Err(bound(format!(
            "artifact is {} bytes; the limit is {MAX_ARTIFACT_BYTES} bytes (20 MiB) per artifact",
            data.len()
        )));
    }
    if !signature_matches(mime, data) {
        return Err(bound(format!(
            "artifact bytes do not start with the {mime} signature"
        )));
    }
    Ok(())
}

/// A file in the scratch directory, removed when dropped (the host
/// snapshots the bytes when it answers, docs/services.md#artifact-checks).
struct ScratchFile(PathBuf);

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn write_scratch(dir: &Path, name: &str, data: &[u8]) -> std::io::Result<ScratchFile> {
    use std::io::Write;
    let path = dir.join(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    let guard = ScratchFile(path);
    file.write_all(data)?;
    file.sync_all()?;
    Ok(guard)
}

/// `artifacts.publish` (docs/services.md#artifacts).
pub async fn publish(
    session: &Session,
    scope: Option<Arc<RequestState>>,
    mime_type: String,
    data: Vec<u8>,
) -> Result<String, GuestError> {
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::Artifacts,
        "artifacts.publish",
    )?;
    let parent = gate::active_parent(scope, "artifacts.publish")?;
    check_artifact(&mime_type, &data)?;
    let size = data.len();
    let services = &session.services;
    services.reserve_artifact(size)?;
    let digest = sha256_hex(&data);
    let mut params = json!({
        "parent_request_id": parent.id,
        "mime_type": mime_type,
        "size": size,
        "sha256": digest,
    });
    let _file = if size <= MAX_INLINE_ARTIFACT {
        params["data"] = json!({
            "encoding": "base64",
            "data": base64::engine::general_purpose::STANDARD.encode(&data),
        });
        None
    } else {
        let Some(dir) = std::env::var_os("OCTET_EXTENSION_SCRATCH")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute() && dir.is_dir())
        else {
            services.release_artifact(size);
            return Err(GuestError::Failed(format!(
                "artifacts over {MAX_INLINE_ARTIFACT} bytes are published from OCTET_EXTENSION_SCRATCH, which is not set to a directory"
            )));
        };
        let n = services.scratch_files.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("octet-wasm-artifact-{}-{n}", std::process::id());
        let written = tokio::task::spawn_blocking({
            let name = name.clone();
            move || write_scratch(&dir, &name, &data)
        })
        .await;
        match written {
            Ok(Ok(file)) => {
                params["path"] = json!(name);
                Some(file)
            }
            Ok(Err(err)) => {
                services.release_artifact(size);
                return Err(GuestError::Failed(format!(
                    "cannot write the artifact to the scratch directory: {err}"
                )));
            }
            Err(err) => {
                services.release_artifact(size);
                return Err(GuestError::Failed(format!(
                    "cannot write the artifact to the scratch directory: {err}"
                )));
            }
        }
    };
    let reply = session
        .child_requests
        .call(
            session.writer(),
            true,
            "artifact/publish",
            params,
            &parent.cancel,
        )
        .await;
    match reply {
        Ok(Value::Object(map)) => match map.get("artifact_id") {
            Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
            _ => Err(GuestError::Failed(
                "invalid artifact/publish response (expected {\"artifact_id\": string})".into(),
            )),
        },
        Ok(_) => Err(GuestError::Failed(
            "invalid artifact/publish response (expected {\"artifact_id\": string})".into(),
        )),
        // Rejected by the host or never sent: not counted
        // (docs/choices.md#artifact-budget). A cancelled publication may
        // have been ingested: it stays counted.
        Err(error @ (ChildError::Rpc(_) | ChildError::Refused(_))) => {
            services.release_artifact(size);
            Err(gate::child_error("artifact/publish", error))
        }
        Err(error) => Err(gate::child_error("artifact/publish", error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures() {
        assert!(signature_matches("image/png", b"\x89PNG\r\n\x1a\nrest"));
        assert!(!signature_matches("image/png", b"\x89PNG"));
        assert!(signature_matches("image/webp", b"RIFF\0\0\0\0WEBPVP8 "));
        assert!(signature_matches("audio/mpeg", b"\xff\xfb\x90"));
        assert!(!signature_matches("audio/mpeg", b"\xff\xe0\x90"));
        assert!(signature_matches("audio/aac", b"\xff\xf1"));
        assert!(signature_matches(
            "audio/opus",
            b"OggS\0\x02........OpusHead"
        ));
        assert!(signature_matches("audio/mp4", b"\0\0\0\x18ftypM4A "));
        assert!(!signature_matches("image/PNG", b"\x89PNG\r\n\x1a\n"));
    }

    #[test]
    fn artifact_checks_name_the_bound() {
        let mut big = b"\x89PNG\r\n\x1a\n".to_vec();
        big.resize(MAX_ARTIFACT_BYTES, 0);
        assert!(check_artifact("image/png", &big).is_ok());
        big.push(0);
        let GuestError::InvalidParams(text) = check_artifact("image/png", &big).unwrap_err() else {
            panic!("not invalid-params");
        };
        assert!(text.contains("20 MiB"), "{text}");
        assert!(check_artifact("image/svg+xml", b"<svg").is_err());
        assert!(check_artifact("image/png; q=1", b"\x89PNG\r\n\x1a\n").is_err());
    }
}
