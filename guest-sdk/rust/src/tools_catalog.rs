//! The dynamic tool catalog (API 0.2, feature `dynamic_tools`).
//!
//! Tools registered with [`Extension::tool`](crate::Extension::tool) are the
//! catalog at revision 0. Tools registered with
//! [`Extension::dynamic_tool`](crate::Extension::dynamic_tool) have a handler
//! in every instance but are not offered until [`register`] adds them; calls
//! then reach their handler by name. Each accepted change makes a new
//! revision, and the shim dispatches every call against the revision the
//! model saw.
//!
//! Declare the feature with
//! [`Extension::uses_dynamic_tools`](crate::Extension::uses_dynamic_tools).

use crate::bindings::octet::extension::tools_catalog as imports;
use crate::definition::Tool;
use crate::error::{Error, Result};

/// A catalog the host accepted: its revision and the complete set of the
/// extension's active tool names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogUpdate {
    /// The catalog revision (0 is the initial catalog).
    pub revision: u64,
    /// Every active tool of the extension, sorted.
    pub tools: Vec<String>,
}

impl CatalogUpdate {
    fn from_wit(update: imports::CatalogUpdate) -> Self {
        CatalogUpdate {
            revision: update.revision,
            tools: update.tools,
        }
    }
}

/// Adds or replaces 1..=256 tools. Each needs a handler in this guest
/// ([`Extension::dynamic_tool`](crate::Extension::dynamic_tool) or
/// [`Extension::tool`](crate::Extension::tool)), or its calls are answered
/// `unknown tool`.
pub fn register(tools: &[Tool]) -> Result<CatalogUpdate> {
    let definitions: Vec<_> = tools.iter().map(Tool::to_wit).collect();
    imports::register(&definitions)
        .map(CatalogUpdate::from_wit)
        .map_err(Error::from_wit)
}

/// Registers the dynamic tools named `names` with the definitions given to
/// [`Extension::dynamic_tool`](crate::Extension::dynamic_tool). A name with
/// no such registration is an error, and nothing is sent.
pub fn register_dynamic(names: &[&str]) -> Result<CatalogUpdate> {
    let registry = crate::dispatch::current_registry()
        .ok_or_else(|| Error::failed("the extension is not set up yet"))?;
    let mut tools = Vec::with_capacity(names.len());
    for name in names {
        let tool = registry
            .dynamic_tools
            .iter()
            .find(|(tool, _)| tool.name() == *name)
            .map(|(tool, _)| tool.clone())
            .ok_or_else(|| {
                Error::invalid_params(format!("no dynamic tool named {name} is registered"))
            })?;
        tools.push(tool);
    }
    register(&tools)
}

/// Removes 1..=256 tools by name (names not in the catalog are ignored).
pub fn unregister(names: &[&str]) -> Result<CatalogUpdate> {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    imports::unregister(&names)
        .map(CatalogUpdate::from_wit)
        .map_err(Error::from_wit)
}

/// The committed catalog: its revision and tool names.
pub fn current() -> CatalogUpdate {
    CatalogUpdate::from_wit(imports::current())
}
