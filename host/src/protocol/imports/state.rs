//! What the session keeps for the guest's services over one process
//! generation: issued resource owners, the presentation revision, the
//! secret allowlist, the artifact budget, the tool catalogs and the
//! composition budgets. Plain state, below the services that use it.

use super::tools_catalog::snapshots::ToolCatalogs;
use crate::runtime::types::{GuestError, ResourceOwner};
use serde_json::Value;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// Artifacts per process generation (docs/services.md#artifact-checks).
pub const MAX_ARTIFACTS: usize = 64;
/// Bytes of all artifacts of a process generation
/// (docs/services.md#artifact-checks).
pub const MAX_ARTIFACT_TOTAL: usize = 64 << 20;
/// Distinct resource owners remembered for explicit presentation owners.
pub const MAX_ISSUED_OWNERS: usize = 4096;
/// Service state of one process generation.
#[derive(Default)]
pub struct Services {
    /// Resource owners the host issued to this process
    /// (docs/services.md#presentation-wire).
    owners: Mutex<std::collections::HashSet<(String, String, u64)>>,
    /// The last presentation revision sent (strictly increasing,
    /// docs/services.md#presentation-revisions).
    pub(super) presentation_revision: Mutex<Option<u64>>,
    /// The manifest's secret allowlist (`initialize.capabilities.secrets`).
    pub(super) secrets: std::sync::OnceLock<Vec<String>>,
    artifacts: Mutex<ArtifactBudget>,
    pub(super) scratch_files: AtomicU64,
    /// The tool catalogs (shared with dispatch).
    pub tools: Arc<ToolCatalogs>,
    /// One catalog mutation at a time (docs/services.md#catalog-checks).
    pub(super) mutation: tokio::sync::Mutex<()>,
    /// What each live tool call has used of its composition budget.
    pub(crate) composition: super::composition::state::Parents,
}

#[derive(Default)]
struct ArtifactBudget {
    count: usize,
    bytes: usize,
}

impl Services {
    /// Records what `initialize.capabilities` allows (the secret allowlist).
    pub fn configure(&self, capabilities: &Value) {
        let _ = self.secrets.set(
            crate::protocol::handshake::manifest::strings(capabilities, "secrets")
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

    pub(super) fn issued(&self, owner: &ResourceOwner) -> bool {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&(
                owner.session_id.clone(),
                owner.extension_instance_id.clone(),
                owner.process_generation,
            ))
    }

    pub(super) fn reserve_artifact(&self, bytes: usize) -> Result<(), GuestError> {
        let mut budget = self.artifacts.lock().unwrap_or_else(|e| e.into_inner());
        if budget.count >= MAX_ARTIFACTS {
            return Err(GuestError::InvalidParams(format!(
                "this process generation already published {MAX_ARTIFACTS} artifacts; the limit is {MAX_ARTIFACTS} artifacts per generation"
            )));
        }
        if budget.bytes + bytes > MAX_ARTIFACT_TOTAL {
            return Err(GuestError::InvalidParams(format!(
                "artifact of {bytes} bytes exceeds the 64 MiB ({MAX_ARTIFACT_TOTAL} bytes) per generation: {} bytes already published",
                budget.bytes
            )));
        }
        budget.count += 1;
        budget.bytes += bytes;
        Ok(())
    }

    pub(super) fn release_artifact(&self, bytes: usize) {
        let mut budget = self.artifacts.lock().unwrap_or_else(|e| e.into_inner());
        budget.count = budget.count.saturating_sub(1);
        budget.bytes = budget.bytes.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
