//! `tools-catalog` (docs/services.md#catalog-wire): registering and
//! unregistering tools at run time, one mutation at a time, committed only
//! as far as the host accepted it (docs/services.md#catalog-checks).
//!
//! The whole tool catalog lives in this folder: the definition rules every
//! catalog is checked against ([`definitions`]), the 0.4 prompt metadata
//! ([`prompt`]) and the committed snapshots pinned dispatch reads
//! ([`snapshots`]).

use self::snapshots::Snapshot;
use super::gate::{self, bound};
use crate::cancel::CancelToken;
use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::requests::session::Session;
use crate::runtime::types::{CatalogUpdate, GuestError, ToolDefinition};
use serde_json::{Value, json};
use std::collections::BTreeSet;

pub(crate) mod definitions;
pub(crate) mod prompt;
pub(crate) mod snapshots;

/// Definitions in one `tools/register` / names in one `tools/unregister`
/// (docs/services.md#catalog-checks).
pub const MAX_MUTATION: usize = 256;
/// `tools-catalog.register` (docs/services.md#catalog-wire,
/// docs/services.md#catalog-checks).
pub async fn register(
    session: &Session,
    tools: Vec<ToolDefinition>,
) -> Result<CatalogUpdate, GuestError> {
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::DynamicTools,
        "tools-catalog.register",
    )?;
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
    let metadata = session
        .setup()
        .is_some_and(|s| s.has(crate::protocol::handshake::feature::Feature::ToolPromptMetadata));
    if !metadata {
        crate::protocol::imports::tools_catalog::prompt::warn_dropped(
            &tools,
            "tool_prompt_metadata_v1 was not negotiated",
        );
    }
    let mut wire = Vec::with_capacity(tools.len());
    for tool in &tools {
        wire.push(
            crate::protocol::handshake::initialize::tool_json(ApiVersion::V0_2, tool, metadata)
                .map_err(GuestError::InvalidParams)?,
        );
    }
    let _one = session.services.mutation.lock().await;
    let current = session.services.tools.latest();
    let mut definitions: Vec<ToolDefinition> = current
        .definitions
        .iter()
        .filter(|d| !names.contains(d.name.as_str()))
        .cloned()
        .collect();
    definitions.extend(tools);
    mutate(
        session,
        "tools/register",
        json!({ "tools": wire }),
        definitions,
    )
    .await
}

/// `tools-catalog.unregister` (docs/services.md#catalog-wire).
pub async fn unregister(
    session: &Session,
    names: Vec<String>,
) -> Result<CatalogUpdate, GuestError> {
    gate::feature(
        session,
        crate::protocol::handshake::feature::Feature::DynamicTools,
        "tools-catalog.unregister",
    )?;
    if names.is_empty() || names.len() > MAX_MUTATION {
        return Err(bound(format!(
            "tools/unregister takes 1 to {MAX_MUTATION} names, got {}",
            names.len()
        )));
    }
    let mut unique = BTreeSet::new();
    for name in &names {
        if !definitions::is_identifier(name) {
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
    let _one = session.services.mutation.lock().await;
    let current = session.services.tools.latest();
    let definitions: Vec<ToolDefinition> = current
        .definitions
        .iter()
        .filter(|d| !unique.contains(d.name.as_str()))
        .cloned()
        .collect();
    mutate(
        session,
        "tools/unregister",
        json!({ "names": names }),
        definitions,
    )
    .await
}

/// Stages `definitions` as the next revision, sends the mutation and
/// commits what the host accepted (docs/services.md#catalog-checks).
async fn mutate(
    session: &Session,
    method: &str,
    params: Value,
    definitions: Vec<ToolDefinition>,
) -> Result<CatalogUpdate, GuestError> {
    if definitions.len() > definitions::MAX_TOOLS {
        return Err(bound(format!(
            "the catalog would have {} tools; the limit is {} tools per extension",
            definitions.len(),
            definitions::MAX_TOOLS
        )));
    }
    let snapshot = Snapshot::build(definitions).map_err(bound)?;
    let tools = &session.services.tools;
    let staged = tools.stage(snapshot);
    // Never cancelled: the outcome must be known to keep both sides'
    // catalogs equal.
    let reply = session
        .child_requests
        .call(session.writer(), true, method, params, &CancelToken::new())
        .await;
    let reply = match reply {
        Ok(reply) => reply,
        Err(error) => {
            tools.discard_stage();
            return Err(gate::child_error(method, error));
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
pub fn current(session: &Session) -> CatalogUpdate {
    let (revision, snapshot) = session.services.tools.latest_with_revision();
    CatalogUpdate {
        revision,
        tools: snapshot
            .definitions
            .iter()
            .map(|d| d.name.clone())
            .collect(),
    }
}
