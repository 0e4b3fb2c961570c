//! `check`'s comparison of a manifest with its component: the tool and
//! command sets and definition rules exactly as `run` checks them at
//! initialize, the digest pin, and the capabilities the imports need.

use super::api_rules::uses_v0_2;
use super::check::{Checker, Declared};
use super::component::{Analysis, Reach};
use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::handshake::initialize;
use crate::protocol::imports::tools_catalog::definitions;
use serde_json::json;

impl Checker {
    pub(super) fn against_component(
        &mut self,
        declared: &Declared,
        analysis: &Analysis,
        deny: &[String],
    ) {
        let d = &analysis.description;
        if let Some(pinned) = &declared.pinned
            && !pinned.eq_ignore_ascii_case(&analysis.sha256)
        {
            self.problem(
                "entrypoint.args",
                format!(
                    "--sha256 {pinned} does not match {} (sha256 {}); octet-wasm refuses to run it",
                    analysis.path.display(),
                    analysis.sha256
                ),
                format!(
                    "pin the component you ship: --sha256 {} (or `octet-wasm manifest`)",
                    analysis.sha256
                ),
            );
        }
        if let Some(metadata) = &analysis.metadata {
            for (key, ours, theirs) in [
                ("name", declared.name.as_deref(), metadata.name.as_str()),
                (
                    "version",
                    declared.version.as_deref(),
                    metadata.version.as_str(),
                ),
            ] {
                if ours.is_some_and(|ours| ours != theirs) {
                    self.warning(
                        key,
                        format!("the component's metadata says {theirs:?}"),
                        format!("{key} = {theirs:?}, or embed new metadata"),
                    );
                }
            }
        }
        let Some(api) = declared.api else { return };
        if let Err(err) = definitions::build(api, d) {
            self.problem(
                "component",
                format!("octet-wasm refuses the guest's definitions at initialize: {err}"),
                "fix the definition in the guest's source and rebuild".into(),
            );
        }
        self.registration(declared, analysis, api);
        if api == ApiVersion::V0_1 {
            let uses = uses_v0_2(d);
            if !uses.is_empty() {
                self.warning(
                    "api_version",
                    format!(
                        "the guest uses what only API 0.2 carries ({}); on 0.1 octet-wasm leaves it out",
                        uses.join(", ")
                    ),
                    "api_version = \"0.2\"".into(),
                );
            }
        }
        let (_, v0_4_only) = super::api_rules::uses_v0_4(d);
        if api != ApiVersion::V0_4 && !v0_4_only.is_empty() {
            self.warning(
                "api_version",
                format!(
                    "the guest uses what only API 0.4 carries ({}); on {} octet-wasm leaves it out",
                    v0_4_only.join(", "),
                    api.as_str()
                ),
                "api_version = \"0.4\"".into(),
            );
        }
        let missing = |have: &[String], want: &[String]| -> Vec<String> {
            want.iter().filter(|w| !have.contains(w)).cloned().collect()
        };
        let hooks = missing(&declared.hooks, &d.hooks);
        if !hooks.is_empty() {
            self.warning(
                "contributes.hooks",
                format!(
                    "the guest handles {} but the manifest does not declare them, so octet never calls them",
                    hooks.join(", ")
                ),
                "add them to hooks".into(),
            );
        }
        let unhandled = missing(&d.hooks, &declared.hooks);
        if !unhandled.is_empty() {
            self.warning(
                "contributes.hooks",
                format!(
                    "the guest does not handle {}; octet-wasm answers them with the default result",
                    unhandled.join(", ")
                ),
                "remove them from hooks, or handle them in the guest".into(),
            );
        }
        let surfaces = missing(&declared.ui, &d.status_surfaces);
        if !surfaces.is_empty() {
            self.warning(
                "contributes.ui",
                format!(
                    "the guest answers status for {} but the manifest does not declare them",
                    surfaces.join(", ")
                ),
                "add them to ui".into(),
            );
        }
        let renderers = missing(&declared.renderers, &d.renderers);
        if !renderers.is_empty() {
            self.warning(
                "contributes.tool_renderers",
                format!(
                    "the guest renders {} but the manifest does not declare them",
                    renderers.join(", ")
                ),
                "add them to tool_renderers".into(),
            );
        }
        if d.context && !declared.context {
            self.warning(
                "contributes.context",
                "the guest answers context/collect but the manifest does not declare context"
                    .into(),
                "context = true".into(),
            );
        }
        if d.menu && !declared.menu && api.negotiates() {
            self.warning(
                "contributes.menu",
                "the guest answers menu/collect but the manifest does not declare a menu".into(),
                "menu = true".into(),
            );
        }
        self.capabilities_against(declared, analysis, deny);
    }

    /// The tool and command sets, exactly as `run` checks them at
    /// initialize (an absent key: octet sends `[]`).
    fn registration(&mut self, declared: &Declared, analysis: &Analysis, api: ApiVersion) {
        let mut params = json!({
            "api_version": api.as_str(),
            "contributes": {"tools": declared.tools, "commands": declared.commands},
        });
        if api.negotiates() {
            params["protocol"] = json!({
                "version": api.as_str(),
                "required_features": ["request_cancellation", "content_parts"],
            });
        }
        let Ok(offer) = initialize::check_params(&params, None) else {
            return; // duplicates: reported by `strings` already
        };
        for key in ["tools", "commands"] {
            let registered: Vec<String> = if key == "tools" {
                analysis
                    .description
                    .tools
                    .iter()
                    .map(|t| t.name.clone())
                    .collect()
            } else {
                analysis
                    .description
                    .commands
                    .iter()
                    .map(|c| c.name.clone())
                    .collect()
            };
            let listed = if key == "tools" {
                &declared.tools
            } else {
                &declared.commands
            };
            let undeclared: Vec<&String> =
                registered.iter().filter(|r| !listed.contains(r)).collect();
            let unregistered: Vec<&String> =
                listed.iter().filter(|l| !registered.contains(l)).collect();
            if undeclared.is_empty() && unregistered.is_empty() {
                continue;
            }
            let mut message = format!(
                "octet-wasm answers initialize with -32602 \"registered {key} do not match manifest declarations\":"
            );
            if !undeclared.is_empty() {
                message.push_str(&format!(
                    " the guest registers {undeclared:?}, not declared"
                ));
            }
            if !unregistered.is_empty() {
                message.push_str(&format!(
                    " the manifest declares {unregistered:?}, not registered"
                ));
            }
            let mut sorted = registered.clone();
            sorted.sort();
            self.problem(
                &format!("contributes.{key}"),
                message,
                format!("{key} = {}", toml::Value::from(sorted)),
            );
        }
        // The shim's own check, so this never drifts from `run`.
        if initialize::check_registration(&offer, &analysis.description).is_err()
            && !self
                .findings
                .iter()
                .any(|f| f.field == "contributes.tools" || f.field == "contributes.commands")
        {
            self.problem(
                "contributes",
                "the guest registers a tool or command twice; octet-wasm rejects it at initialize"
                    .into(),
                "register each name once in the guest".into(),
            );
        }
    }

    /// Imports the manifest does not grant, as notes: the component still
    /// starts (the interfaces are there, with no directory or socket
    /// behind them), so nothing fails unless the code uses them, and a
    /// language runtime imports them whatever the extension does.
    fn capabilities_against(&mut self, declared: &Declared, analysis: &Analysis, deny: &[String]) {
        let reach = &analysis.reach;
        let denied = |c: &str| deny.iter().any(|d| d == c);
        let imports = |c: &str| Reach::imports_for(&analysis.imports, c).join(", ");
        if reach.filesystem && declared.filesystem == "none" && !denied("filesystem") {
            self.note(
                "capabilities.filesystem",
                format!(
                    "the component imports {} but the manifest grants no filesystem, so every file access fails inside the sandbox (language runtimes import it whether or not the extension touches files)",
                    imports("filesystem")
                ),
                "nothing, unless the extension reads or writes files: then filesystem = \"workspace\" (`--deny filesystem` leaves this note out)".into(),
            );
        }
        if reach.network && !declared.network && !denied("network") {
            self.note(
                "capabilities.network",
                format!(
                    "the component imports {} but network = false, so every socket and name lookup fails inside the sandbox (the Python runtime imports it whether or not the extension uses the network)",
                    imports("network")
                ),
                "nothing, unless the extension uses the network: then network = true (`--deny network` leaves this note out)".into(),
            );
        }
    }
}
