//! The tool catalogs a guest's `tools-catalog` mutations build: committed
//! snapshots by revision (the newest few, for pinned dispatch) and the one
//! staged mutation (docs/services.md#pinned-dispatch).

use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::imports::tools_catalog::definitions::{self, Catalog, ToolEntry};
use crate::runtime::types::{Description, ToolDefinition};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// Committed catalog snapshots kept for pinned dispatch
/// (docs/services.md#pinned-dispatch).
pub const RETAINED_CATALOGS: usize = 8;

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
        let catalog = definitions::build(ApiVersion::V0_2, &description)?;
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

    pub(crate) fn latest_with_revision(&self) -> (u64, Arc<Snapshot>) {
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

    pub(crate) fn latest(&self) -> Arc<Snapshot> {
        self.latest_with_revision().1
    }

    pub(crate) fn stage(&self, snapshot: Snapshot) -> u64 {
        let mut state = self.lock();
        let revision = state.committed.back().map_or(0, |(r, _)| *r) + 1;
        state.staged = Some((revision, Arc::new(snapshot)));
        revision
    }

    pub(crate) fn discard_stage(&self) {
        self.lock().staged = None;
    }

    /// Commits the staged revision with only the `accepted` names (every
    /// one of which must be staged).
    pub(crate) fn commit(&self, revision: u64, accepted: &BTreeSet<String>) -> Result<(), String> {
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
