//! API 0.2 host services behind the guest's service imports (`artifacts`,
//! `tools-catalog`, `secrets`, `policy`; `agents` is in [`super::agents`]): every gate (negotiated feature, active parent) and every
//! bound of docs/services.md is checked here before a frame is written, so
//! nothing the host would reject fatally ever reaches it. A refusal names
//! the feature or the bound.

use super::api_version::ApiVersion;
use super::catalog::{self, Catalog, ToolEntry};
use super::reverse::ChildError;
use super::session::{RequestState, Session};
use crate::cancel::CancelToken;
use crate::runtime::types::*;
use base64::Engine as _;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Largest artifact sent inline as base64 (docs/services.md#artifact-checks);
/// larger ones go through `OCTET_EXTENSION_SCRATCH`.
pub const MAX_INLINE_ARTIFACT: usize = 256 * 1024;
/// Largest artifact (docs/services.md#artifact-checks).
pub const MAX_ARTIFACT_BYTES: usize = 20 << 20;
/// Artifacts per process generation (docs/services.md#artifact-checks).
pub const MAX_ARTIFACTS: usize = 64;
/// Bytes of all artifacts of a process generation
/// (docs/services.md#artifact-checks).
pub const MAX_ARTIFACT_TOTAL: usize = 64 << 20;
/// Definitions in one `tools/register` / names in one `tools/unregister`
/// (docs/services.md#catalog-checks).
pub const MAX_MUTATION: usize = 256;
/// Committed catalog snapshots kept for pinned dispatch
/// (docs/services.md#pinned-dispatch).
pub const RETAINED_CATALOGS: usize = 8;

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

fn refused(code: i32, message: impl Into<String>) -> GuestError {
    GuestError::Rpc(RpcError {
        code,
        message: message.into(),
        data: None,
    })
}

fn bound(message: impl Into<String>) -> GuestError {
    GuestError::InvalidParams(message.into())
}

/// Distinct resource owners remembered for explicit presentation owners.
pub const MAX_ISSUED_OWNERS: usize = 4096;
/// Longest owner `session_id` (docs/services.md#presentation-wire).
pub const MAX_OWNER_SESSION_ID: usize = 512;

/// Longest secret value the shim accepts from the host (docs/services.md#secrets).
pub const MAX_SECRET_VALUE: usize = 64 * 1024;
/// Longest secret name (docs/services.md#secrets).
pub const MAX_SECRET_NAME: usize = 64;
/// Longest canonical policy intent (docs/services.md#policy).
pub const MAX_INTENT_BYTES: usize = 32 * 1024;

/// Service state of one process generation.
#[derive(Default)]
pub struct Services {
    /// Resource owners the host issued to this process
    /// (docs/services.md#presentation-wire).
    owners: Mutex<std::collections::HashSet<(String, String, u64)>>,
    /// The last presentation revision sent (strictly increasing,
    /// docs/services.md#presentation-revisions).
    presentation_revision: Mutex<Option<u64>>,
    /// The manifest's secret allowlist (`initialize.capabilities.secrets`).
    secrets: std::sync::OnceLock<Vec<String>>,
    artifacts: Mutex<ArtifactBudget>,
    scratch_files: AtomicU64,
    /// The tool catalogs (shared with dispatch).
    pub tools: Arc<ToolCatalogs>,
    /// One catalog mutation at a time (docs/services.md#catalog-checks).
    mutation: tokio::sync::Mutex<()>,
    /// What each live tool call has used of its composition budget.
    pub(super) composition: super::composition::Parents,
}

#[derive(Default)]
struct ArtifactBudget {
    count: usize,
    bytes: usize,
}

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

impl Services {
    /// Records what `initialize.capabilities` allows (the secret allowlist).
    pub fn configure(&self, capabilities: &Value) {
        let _ = self.secrets.set(
            super::manifest::strings(capabilities, "secrets")
                .into_iter()
                .collect(),
        );
    }

    /// Records an owner the host sent in a request context.
    pub fn issue_owner(&self, owner: &ResourceOwner) {
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        if owners.len() < MAX_ISSUED_OWNERS {
            owners.insert((
                owner.session_id.clone(),
                owner.extension_instance_id.clone(),
                owner.process_generation,
            ));
        }
    }

    fn issued(&self, owner: &ResourceOwner) -> bool {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(
                owner.session_id.clone(),
                owner.extension_instance_id.clone(),
                owner.process_generation,
            ))
    }

    fn reserve_artifact(&self, bytes: usize) -> Result<(), GuestError> {
        let mut budget = self.artifacts.lock().unwrap_or_else(|e| e.into_inner());
        if budget.count >= MAX_ARTIFACTS {
            return Err(bound(format!(
                "this process generation already published {MAX_ARTIFACTS} artifacts; the limit is {MAX_ARTIFACTS} artifacts per generation"
            )));
        }
        if budget.bytes + bytes > MAX_ARTIFACT_TOTAL {
            return Err(bound(format!(
                "artifact of {bytes} bytes exceeds the 64 MiB ({MAX_ARTIFACT_TOTAL} bytes) per generation: {} bytes already published",
                budget.bytes
            )));
        }
        budget.count += 1;
        budget.bytes += bytes;
        Ok(())
    }

    fn release_artifact(&self, bytes: usize) {
        let mut budget = self.artifacts.lock().unwrap_or_else(|e| e.into_inner());
        budget.count = budget.count.saturating_sub(1);
        budget.bytes = budget.bytes.saturating_sub(bytes);
    }
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

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Session {
    /// The error of a service whose feature was not negotiated.
    pub(super) fn service_gate(&self, feature: &str, what: &str) -> Result<(), GuestError> {
        let Some(setup) = self.setup().filter(|_| self.is_ready()) else {
            return Err(refused(
                -32000,
                format!("{what} is not available before initialize has been answered"),
            ));
        };
        if !setup.has(feature) {
            return Err(refused(
                -32601,
                format!(
                    "{what} needs API 0.2 or 0.4 with the negotiated `{feature}` feature (declare it in the guest's features; the host must offer it)"
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn service_child_error(method: &str, error: ChildError) -> GuestError {
        match error {
            ChildError::Cancelled(_) => GuestError::Cancelled,
            ChildError::Rpc(error) => GuestError::Rpc(RpcError {
                code: i32::try_from(error.code).unwrap_or(-32603),
                message: error.message,
                data: error.data.map(|d| d.to_string()),
            }),
            ChildError::Refused(reason) => {
                GuestError::Failed(format!("{method} not sent: {reason}"))
            }
        }
    }

    /// `artifacts.publish` (docs/services.md#artifacts).
    pub(super) async fn publish_artifact_for(
        &self,
        scope: Option<Arc<RequestState>>,
        mime_type: String,
        data: Vec<u8>,
    ) -> Result<String, GuestError> {
        self.service_gate("artifacts", "artifacts.publish")?;
        let Some(parent) = scope.filter(|s| s.active_parent) else {
            return Err(refused(
                -32602,
                "artifacts.publish is only available while serving a tool call or a command",
            ));
        };
        check_artifact(&mime_type, &data)?;
        let size = data.len();
        let services = &self.services;
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
        let reply = self
            .children
            .call(
                self.writer(),
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
                Err(Self::service_child_error("artifact/publish", error))
            }
            Err(error) => Err(Self::service_child_error("artifact/publish", error)),
        }
    }

    /// `tools-catalog.register` (docs/services.md#catalog-wire,
    /// docs/services.md#catalog-checks).
    pub(super) async fn register_tools_for(
        &self,
        tools: Vec<ToolDefinition>,
    ) -> Result<CatalogUpdate, GuestError> {
        self.service_gate("dynamic_tools", "tools-catalog.register")?;
        if tools.is_empty() || tools.len() > MAX_MUTATION {
            return Err(bound(format!(
                "tools/register takes 1 to {MAX_MUTATION} definitions, got {}",
                tools.len()
            )));
        }
        let mut names = BTreeSet::new();
        for tool in &tools {
            if !names.insert(tool.name.as_str()) {
                return Err(bound(format!(
                    "tool {} appears twice in one registration",
                    tool.name
                )));
            }
        }
        let metadata = self.setup().is_some_and(|s| s.has(super::prompt::FEATURE));
        if !metadata {
            super::prompt::warn_dropped(&tools, "tool_prompt_metadata_v1 was not negotiated");
        }
        let mut wire = Vec::with_capacity(tools.len());
        for tool in &tools {
            wire.push(
                super::initialize::tool_json(ApiVersion::V0_2, tool, metadata)
                    .map_err(GuestError::InvalidParams)?,
            );
        }
        let _one = self.services.mutation.lock().await;
        let current = self.services.tools.latest();
        let mut definitions: Vec<ToolDefinition> = current
            .definitions
            .iter()
            .filter(|d| !names.contains(d.name.as_str()))
            .cloned()
            .collect();
        definitions.extend(tools);
        self.mutate("tools/register", json!({ "tools": wire }), definitions)
            .await
    }

    /// `tools-catalog.unregister` (docs/services.md#catalog-wire).
    pub(super) async fn unregister_tools_for(
        &self,
        names: Vec<String>,
    ) -> Result<CatalogUpdate, GuestError> {
        self.service_gate("dynamic_tools", "tools-catalog.unregister")?;
        if names.is_empty() || names.len() > MAX_MUTATION {
            return Err(bound(format!(
                "tools/unregister takes 1 to {MAX_MUTATION} names, got {}",
                names.len()
            )));
        }
        let mut unique = BTreeSet::new();
        for name in &names {
            if !catalog::is_identifier(name) {
                return Err(bound(format!(
                    "tool name {name:?} is not an identifier (1-64 bytes of [A-Za-z_][A-Za-z0-9_.-]*)"
                )));
            }
            if !unique.insert(name.as_str()) {
                return Err(bound(format!(
                    "tool {name} appears twice in one unregistration"
                )));
            }
        }
        let _one = self.services.mutation.lock().await;
        let current = self.services.tools.latest();
        let definitions: Vec<ToolDefinition> = current
            .definitions
            .iter()
            .filter(|d| !unique.contains(d.name.as_str()))
            .cloned()
            .collect();
        self.mutate("tools/unregister", json!({ "names": names }), definitions)
            .await
    }

    /// Stages `definitions` as the next revision, sends the mutation and
    /// commits what the host accepted (docs/services.md#catalog-checks).
    async fn mutate(
        &self,
        method: &str,
        params: Value,
        definitions: Vec<ToolDefinition>,
    ) -> Result<CatalogUpdate, GuestError> {
        if definitions.len() > catalog::MAX_TOOLS {
            return Err(bound(format!(
                "the catalog would have {} tools; the limit is {} tools per extension",
                definitions.len(),
                catalog::MAX_TOOLS
            )));
        }
        let snapshot = Snapshot::build(definitions).map_err(bound)?;
        let tools = &self.services.tools;
        let staged = tools.stage(snapshot);
        // Never cancelled: the outcome must be known to keep both sides'
        // catalogs equal.
        let reply = self
            .children
            .call(self.writer(), true, method, params, &CancelToken::new())
            .await;
        let reply = match reply {
            Ok(reply) => reply,
            Err(error) => {
                tools.discard_stage();
                return Err(Self::service_child_error(method, error));
            }
        };
        let invalid = |why: &str| {
            tools.discard_stage();
            GuestError::Failed(format!("invalid {method} response: {why}"))
        };
        let Some(revision) = reply.get("revision").and_then(Value::as_u64) else {
            return Err(invalid("no revision"));
        };
        let Some(Value::Array(names)) = reply.get("tools") else {
            return Err(invalid("no tools list"));
        };
        let mut accepted = BTreeSet::new();
        for name in names {
            let Some(name) = name.as_str() else {
                return Err(invalid("tools must be strings"));
            };
            accepted.insert(name.to_owned());
        }
        if revision != staged {
            return Err(invalid(&format!(
                "revision {revision} is not the staged revision {staged}"
            )));
        }
        tools
            .commit(staged, &accepted)
            .map_err(|why| invalid(&why))?;
        Ok(CatalogUpdate {
            revision,
            tools: accepted.into_iter().collect(),
        })
    }

    /// `tools-catalog.current`.
    pub(super) fn current_catalog_update(&self) -> CatalogUpdate {
        let (revision, snapshot) = self.services.tools.latest_with_revision();
        CatalogUpdate {
            revision,
            tools: snapshot
                .definitions
                .iter()
                .map(|d| d.name.clone())
                .collect(),
        }
    }
}

/// `value` with every object's keys sorted, recursively (the host's
/// canonical intent form, docs/services.md#policy).
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            let mut out = serde_json::Map::new();
            for key in keys {
                out.insert(key.clone(), canonical(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// Whether `token` is an approval token: exactly 64 lowercase hex
/// characters (docs/services.md#policy).
pub fn is_approval_token(token: &str) -> bool {
    token.len() == 64
        && token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The wire intent for `intent`, checked like the host (failures there
/// are fatal, docs/services.md#policy).
pub fn intent_json(intent: &Intent) -> Result<Value, GuestError> {
    if intent.kind.trim().is_empty() {
        return Err(bound("policy intent kind must not be blank"));
    }
    if intent.operation.trim().is_empty() {
        return Err(bound("policy intent operation must not be blank"));
    }
    let target = super::guest_json::parse(&intent.target, "the policy intent target")
        .map_err(|err| bound(err.to_string()))?;
    if !target.is_object() {
        return Err(bound("policy intent target must be a JSON object"));
    }
    let mut object = json!({
        "kind": intent.kind,
        "operation": intent.operation,
        "target": target,
        "data_classes": intent.data_classes,
    });
    if intent.read_only.is_some() || intent.destructive.is_some() {
        let mut hints = serde_json::Map::new();
        if let Some(read_only) = intent.read_only {
            hints.insert("read_only".into(), json!(read_only));
        }
        if let Some(destructive) = intent.destructive {
            hints.insert("destructive".into(), json!(destructive));
        }
        object["adapter_hints"] = Value::Object(hints);
    }
    let bytes = serde_json::to_string(&canonical(&object))
        .map(|s| s.len())
        .unwrap_or(usize::MAX);
    if bytes > MAX_INTENT_BYTES {
        return Err(bound(format!(
            "the canonical policy intent is {bytes} bytes; the limit is {MAX_INTENT_BYTES} bytes (32 KiB)"
        )));
    }
    Ok(object)
}

impl Session {
    /// `secrets.get` (docs/services.md#secrets).
    pub(super) async fn get_secret_for(
        &self,
        scope: Option<Arc<RequestState>>,
        name: String,
    ) -> Result<String, GuestError> {
        self.service_gate("secrets", "secrets.get")?;
        let parent = active_parent(scope, "secrets.get")?;
        if name.len() > MAX_SECRET_NAME || !catalog::is_identifier(&name) {
            return Err(bound(format!(
                "secret name {name:?} is not a valid name (1-{MAX_SECRET_NAME} bytes of [A-Za-z_][A-Za-z0-9_.-]*)"
            )));
        }
        let declared = self
            .services
            .secrets
            .get()
            .is_some_and(|names| names.contains(&name));
        if !declared {
            return Err(bound(format!(
                "secret {name:?} is not declared by this extension: add it to `secrets` under [capabilities] in extension.toml"
            )));
        }
        let reply = self
            .children
            .call(
                self.writer(),
                true,
                "secret/get",
                json!({ "parent_request_id": parent.id, "name": name }),
                &parent.cancel,
            )
            .await
            .map_err(|error| Self::service_child_error("secret/get", error))?;
        match reply {
            Value::Object(map) if map.len() == 1 => match map.get("value") {
                Some(Value::String(value)) if value.len() <= MAX_SECRET_VALUE => Ok(value.clone()),
                Some(Value::String(_)) => Err(GuestError::Failed(format!(
                    "secret/get response exceeds the {MAX_SECRET_VALUE} bytes (64 KiB) bound"
                ))),
                _ => Err(GuestError::Failed(
                    "invalid secret/get response (expected {\"value\": string})".into(),
                )),
            },
            _ => Err(GuestError::Failed(
                "invalid secret/get response (expected {\"value\": string})".into(),
            )),
        }
    }

    /// `policy.evaluate` (docs/services.md#policy).
    pub(super) async fn evaluate_policy_for(
        &self,
        scope: Option<Arc<RequestState>>,
        intent: Intent,
        approval_token: Option<String>,
    ) -> Result<Verdict, GuestError> {
        self.service_gate("policy_intents", "policy.evaluate")?;
        let parent = active_parent(scope, "policy.evaluate")?;
        let approvals = self.setup().is_some_and(|s| s.has("approvals"));
        let intent = intent_json(&intent)?;
        let mut params = json!({ "parent_request_id": parent.id, "intent": intent });
        if let Some(token) = approval_token {
            if !approvals {
                return Err(refused(
                    -32601,
                    "an approval token needs the negotiated `approvals` feature (declare it in the guest's features; the host must offer it)",
                ));
            }
            if !is_approval_token(&token) {
                return Err(bound(
                    "an approval token is exactly 64 lowercase hex characters",
                ));
            }
            params["approval_token"] = json!(token);
        }
        let reply = self
            .children
            .call(
                self.writer(),
                true,
                "policy/evaluate",
                params,
                &parent.cancel,
            )
            .await
            .map_err(|error| Self::service_child_error("policy/evaluate", error))?;
        let invalid =
            |why: &str| GuestError::Failed(format!("invalid policy/evaluate response: {why}"));
        let decision = match reply.get("decision").and_then(Value::as_str) {
            Some("allow") => Decision::Allow,
            Some("ask") => Decision::Ask,
            Some("deny") => Decision::Deny,
            _ => return Err(invalid("decision must be allow, ask or deny")),
        };
        let approval_token = match reply.get("approval_token") {
            None | Some(Value::Null) => None,
            Some(Value::String(token)) => {
                if decision != Decision::Ask || !approvals || !is_approval_token(token) {
                    return Err(invalid(
                        "an approval token is only valid with `ask`, negotiated approvals and 64 lowercase hex characters",
                    ));
                }
                Some(token.clone())
            }
            Some(_) => return Err(invalid("approval_token must be a string or null")),
        };
        Ok(Verdict {
            decision,
            approval_token,
        })
    }
}

impl Session {
    /// `presentation.update` (docs/services.md#presentation).
    pub(super) async fn update_presentation_for(
        &self,
        scope: Option<Arc<RequestState>>,
        snapshot: String,
        owner: Option<ResourceOwner>,
    ) -> Result<(), GuestError> {
        let Some(setup) = self.setup().filter(|_| self.is_ready()) else {
            return Err(refused(
                -32000,
                "presentation.update is not available before initialize has been answered",
            ));
        };
        if !setup.api.negotiates() {
            return Err(refused(-32601, "presentation.update needs API 0.2 or 0.4"));
        }
        if !setup.contributes.presentation {
            return Err(refused(
                -32601,
                "presentation is not declared: add `presentation = true` under [contributes] in extension.toml",
            ));
        }
        let value = super::guest_json::parse(&snapshot, "the snapshot")
            .map_err(|err| bound(err.to_string()))?;
        let commands = setup.contributes.commands.clone().unwrap_or_default();
        let revision = super::presentation::check_snapshot(&value, &commands).map_err(bound)?;
        let mut params = json!({ "snapshot": value });
        if let Some(owner) = &owner {
            if owner.session_id.trim().is_empty()
                || owner.session_id.len() > MAX_OWNER_SESSION_ID
                || owner.session_id.chars().any(char::is_control)
                || owner.extension_instance_id.trim().is_empty()
                || owner.process_generation < 1
            {
                return Err(bound(
                    "the explicit owner must have a non-blank session_id of at most 512 bytes without control characters, a non-blank extension_instance_id and a generation of at least 1",
                ));
            }
            if !self.services.issued(owner) {
                return Err(bound(
                    "the explicit owner was never issued to this process by the host (use the resource owner of a request context)",
                ));
            }
            params["resource_owner"] = json!({
                "session_id": owner.session_id,
                "extension_instance_id": owner.extension_instance_id,
                "process_generation": owner.process_generation,
            });
        }
        // The parent must still be in flight when the host reads the frame:
        // hold its terminal claim while queueing (like progress).
        let parent = if owner.is_none() { scope } else { None };
        let settled_guard = match &parent {
            Some(request) => {
                let guard = request.settled.lock().await;
                if *guard {
                    return Err(if request.cancel.is_cancelled() {
                        GuestError::Cancelled
                    } else {
                        refused(-32000, "request has already settled")
                    });
                }
                params["parent_request_id"] = json!(request.id);
                Some(guard)
            }
            None => None,
        };
        {
            let mut last = self
                .services
                .presentation_revision
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(previous) = *last
                && revision <= previous
            {
                return Err(bound(format!(
                    "snapshot revision {revision} does not increase (the last one sent was {previous})"
                )));
            }
            *last = Some(revision);
        }
        let sent = self
            .notify("presentation/update", &params)
            .await
            .map_err(|err| GuestError::Failed(format!("presentation/update not sent: {err}")));
        drop(settled_guard);
        sent
    }
}

pub(super) fn active_parent(
    scope: Option<Arc<RequestState>>,
    what: &str,
) -> Result<Arc<RequestState>, GuestError> {
    scope.filter(|s| s.active_parent).ok_or_else(|| {
        refused(
            -32602,
            format!("{what} is only available while serving a tool call or a command"),
        )
    })
}

/// One catalog revision: its definitions, in order, and its compiled tools.
pub struct Snapshot {
    pub definitions: Vec<ToolDefinition>,
    pub catalog: Catalog,
}

impl Snapshot {
    /// Checks `definitions` as a complete catalog (names, descriptions,
    /// schemas, ≤ 256 tools, ≤ 4 MiB of schemas).
    pub fn build(definitions: Vec<ToolDefinition>) -> Result<Snapshot, String> {
        let description = Description {
            name: String::new(),
            tools: definitions,
            commands: Vec::new(),
            hooks: Vec::new(),
            context: false,
            status_surfaces: Vec::new(),
            renderers: Vec::new(),
            menu: false,
            lifecycle: Vec::new(),
            max_concurrency: 1,
            features: Vec::new(),
        };
        let catalog = catalog::build(ApiVersion::V0_2, &description)?;
        Ok(Snapshot {
            definitions: description.tools,
            catalog,
        })
    }

    pub fn entry(&self, name: &str) -> Option<&ToolEntry> {
        self.catalog.tools.get(name)
    }
}

/// Why a pinned tool call cannot be dispatched (docs/services.md#pinned-dispatch).
pub enum Unresolved {
    /// Unknown or retired revision: -32602.
    Revision(u64),
    /// Known revision without the tool: -32601.
    Tool,
}

/// The committed catalogs (the newest [`RETAINED_CATALOGS`]) and the one
/// staged mutation, by revision.
#[derive(Default)]
pub struct ToolCatalogs {
    inner: Mutex<CatalogState>,
}

#[derive(Default)]
struct CatalogState {
    committed: VecDeque<(u64, Arc<Snapshot>)>,
    staged: Option<(u64, Arc<Snapshot>)>,
}

impl ToolCatalogs {
    fn lock(&self) -> std::sync::MutexGuard<'_, CatalogState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets revision 0 (the initialize catalog).
    pub fn reset(&self, initial: Snapshot) {
        let mut state = self.lock();
        state.committed.clear();
        state.committed.push_back((0, Arc::new(initial)));
        state.staged = None;
    }

    fn latest_with_revision(&self) -> (u64, Arc<Snapshot>) {
        let state = self.lock();
        match state.committed.back() {
            Some((revision, snapshot)) => (*revision, snapshot.clone()),
            None => (
                0,
                Arc::new(Snapshot {
                    definitions: Vec::new(),
                    catalog: Catalog {
                        tools: HashMap::new(),
                        commands: BTreeSet::new(),
                    },
                }),
            ),
        }
    }

    fn latest(&self) -> Arc<Snapshot> {
        self.latest_with_revision().1
    }

    fn stage(&self, snapshot: Snapshot) -> u64 {
        let mut state = self.lock();
        let revision = state.committed.back().map_or(0, |(r, _)| *r) + 1;
        state.staged = Some((revision, Arc::new(snapshot)));
        revision
    }

    fn discard_stage(&self) {
        self.lock().staged = None;
    }

    /// Commits the staged revision with only the `accepted` names (every
    /// one of which must be staged).
    fn commit(&self, revision: u64, accepted: &BTreeSet<String>) -> Result<(), String> {
        let mut state = self.lock();
        let Some((staged_revision, staged)) = state.staged.take() else {
            return Err("no staged catalog".into());
        };
        if staged_revision != revision {
            return Err(format!("revision {revision} is not staged"));
        }
        if let Some(missing) = accepted.iter().find(|n| staged.entry(n).is_none()) {
            return Err(format!(
                "the host accepted tool {missing}, which was never staged"
            ));
        }
        let definitions: Vec<ToolDefinition> = staged
            .definitions
            .iter()
            .filter(|d| accepted.contains(&d.name))
            .cloned()
            .collect();
        let snapshot = Snapshot::build(definitions)?;
        state.committed.push_back((revision, Arc::new(snapshot)));
        while state.committed.len() > RETAINED_CATALOGS {
            state.committed.pop_front();
        }
        Ok(())
    }

    /// The snapshot a call pinned to `revision` (or the newest committed one)
    /// dispatches against, if it has `name`.
    pub fn resolve(&self, revision: Option<u64>, name: &str) -> Result<Arc<Snapshot>, Unresolved> {
        let state = self.lock();
        let snapshot = match revision {
            None => state.committed.back().map(|(_, s)| s.clone()),
            Some(wanted) => state
                .committed
                .iter()
                .chain(state.staged.iter())
                .find(|(r, _)| *r == wanted)
                .map(|(_, s)| s.clone()),
        };
        let snapshot = snapshot.ok_or(Unresolved::Revision(revision.unwrap_or(0)))?;
        if snapshot.entry(name).is_none() {
            return Err(Unresolved::Tool);
        }
        Ok(snapshot)
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

    #[test]
    fn budget_counts_and_bytes() {
        let services = Services::default();
        for _ in 0..MAX_ARTIFACTS {
            services.reserve_artifact(1).unwrap();
        }
        assert!(services.reserve_artifact(1).is_err());
        services.release_artifact(1);
        assert!(services.reserve_artifact(MAX_ARTIFACT_TOTAL).is_err());
        services.reserve_artifact(1).unwrap();
    }
}
