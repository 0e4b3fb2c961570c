//! The manifest facts the host sends in `initialize.contributes`: what the
//! shim may let the guest do on the wire (notifications, confirmations,
//! status surfaces, ...). Emitting an undeclared message is fatal on the
//! host (docs/protocol.md#fatal), so every gate reads from here.

use crate::wire::message::RpcError;
use serde_json::Value;
use std::collections::BTreeSet;

/// `contributes`, as far as the shim needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contributes {
    /// `None` when the key is absent: no registration check (like the SDK).
    pub tools: Option<Vec<String>>,
    pub commands: Option<Vec<String>>,
    pub hooks: Vec<String>,
    pub ui: Vec<String>,
    pub context: bool,
    pub tool_renderers: Vec<String>,
    pub notifications: bool,
    pub confirmations: bool,
    pub menu: bool,
    /// `presentation/update` snapshots (API 0.2).
    pub presentation: bool,
}

impl Contributes {
    pub fn from_json(value: &Value) -> Result<Contributes, RpcError> {
        Ok(Contributes {
            tools: name_list(value, "tools")?,
            commands: name_list(value, "commands")?,
            hooks: strings(value, "hooks"),
            ui: strings(value, "ui"),
            context: flag(value, "context"),
            tool_renderers: strings(value, "tool_renderers"),
            notifications: flag(value, "notifications"),
            confirmations: flag(value, "confirmations"),
            menu: flag(value, "menu"),
            presentation: flag(value, "presentation"),
        })
    }

    pub fn declares_hook(&self, hook: &str) -> bool {
        self.hooks.iter().any(|h| h == hook)
    }

    pub fn declares_surface(&self, surface: &str) -> bool {
        self.ui.iter().any(|s| s == surface)
    }

    pub fn declares_renderer(&self, tool: &str) -> bool {
        self.tool_renderers.iter().any(|t| t == tool)
    }
}

fn name_list(value: &Value, key: &str) -> Result<Option<Vec<String>>, RpcError> {
    let Some(items) = value.get(key) else {
        return Ok(None);
    };
    let bad = || {
        RpcError::invalid_params(format!(
            "initialize contributes.{key} must be an array of strings"
        ))
    };
    let items = items.as_array().ok_or_else(bad)?;
    let mut names = Vec::with_capacity(items.len());
    let mut seen = BTreeSet::new();
    for item in items {
        let name = item.as_str().ok_or_else(bad)?;
        if !seen.insert(name) {
            return Err(RpcError::invalid_params(format!(
                "initialize contributes.{key} contains duplicate names"
            )));
        }
        names.push(name.to_owned());
    }
    Ok(Some(names))
}

/// The strings of the array at `key` (non-strings skipped; absent: empty).
pub(crate) fn strings(value: &Value, key: &str) -> Vec<String> {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn flag(value: &Value, key: &str) -> bool {
    value.get(key).and_then(Value::as_bool).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_hello_world_manifest() {
        let c = Contributes::from_json(&json!({
            "tools": ["hello_world"], "commands": ["hello"], "hooks": ["before_prompt"],
            "ui": ["status"], "context": true, "tool_renderers": ["hello_world"],
            "notifications": true, "confirmations": false
        }))
        .unwrap();
        assert_eq!(c.tools.as_deref(), Some(&["hello_world".to_string()][..]));
        assert!(c.declares_surface("status") && c.notifications && !c.confirmations);
    }

    #[test]
    fn rejects_duplicates_and_non_strings() {
        let err = Contributes::from_json(&json!({"tools": ["a", "a"]})).unwrap_err();
        assert_eq!(
            err.message,
            "initialize contributes.tools contains duplicate names"
        );
        let err = Contributes::from_json(&json!({"commands": [1]})).unwrap_err();
        assert_eq!(
            err.message,
            "initialize contributes.commands must be an array of strings"
        );
    }
}
