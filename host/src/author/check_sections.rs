//! `check`'s reading of the manifest's sections: `[entrypoint]` (with the
//! `run` arguments, parsed by `run`'s own parser), `[capabilities]` and
//! `[contributes]`, each against what octet accepts and what octet-wasm
//! serves.

use super::check::{Checker, Declared, field};
use crate::protocol::handshake::api_version::ApiVersion;
use crate::protocol::imports::tools_catalog::definitions::is_identifier;
use crate::run_args::{EntrypointError, RunArgs, check_sha256};
use std::path::Path;
use toml::Table;

const ENTRYPOINT_KEYS: &[&str] = &["command", "args", "env"];
const CAPABILITY_KEYS: &[&str] = &[
    "filesystem",
    "process",
    "network",
    "environment",
    "secrets",
    "system_prompt",
    "builtin_tool_overrides",
];
const CONTRIBUTES_KEYS: &[&str] = &[
    "tools",
    "commands",
    "hooks",
    "ui",
    "context",
    "tool_renderers",
    "notifications",
    "confirmations",
    "shortcuts",
    "presentation",
    "menu",
    "providers",
    "flags",
];
const UI_SURFACES: &[&str] = &["status", "header", "footer"];

impl Checker {
    pub(super) fn entrypoint(&mut self, table: &Table, declared: &mut Declared) {
        let Some(entry) = self.section(table, "entrypoint") else {
            if !table.contains_key("entrypoint") {
                self.problem(
                    "entrypoint",
                    "missing: octet has nothing to start".into(),
                    "[entrypoint] command = \"octet-wasm\", args = [\"run\", \"<file>.wasm\"]"
                        .into(),
                );
            }
            return;
        };
        self.unknown_keys(entry, "entrypoint", ENTRYPOINT_KEYS);
        let command = self.string(entry, "entrypoint", "command");
        if command.is_none() && !entry.contains_key("command") {
            self.problem(
                "entrypoint.command",
                "missing".into(),
                "command = \"octet-wasm\"".into(),
            );
        }
        let args = self.strings(entry, "entrypoint", "args");
        if let Some(env) = entry.get("env") {
            match env.as_table() {
                Some(env) => {
                    for (name, value) in env {
                        let valid_name = name
                            .bytes()
                            .next()
                            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
                        if !valid_name {
                            self.problem(
                                &format!("entrypoint.env.{name}"),
                                "not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)".into(),
                                "rename it".into(),
                            );
                        }
                        if value.as_str().is_none_or(|v| v.contains('\0')) {
                            self.problem(
                                &format!("entrypoint.env.{name}"),
                                "must be a string without NUL".into(),
                                format!("{name} = \"...\""),
                            );
                        }
                    }
                }
                None => self.problem(
                    "entrypoint.env",
                    "must be a table of strings".into(),
                    "[entrypoint.env] NAME = \"value\"".into(),
                ),
            }
        }
        let is_shim = command
            .as_deref()
            .is_some_and(|c| Path::new(c).file_name().is_some_and(|n| n == "octet-wasm"));
        if !is_shim {
            return;
        }
        self.run_args(&args, declared);
    }

    /// The `octet-wasm run` arguments, through the shim's own parser, then
    /// the values it would refuse at start-up.
    fn run_args(&mut self, args: &[String], declared: &mut Declared) {
        let fix = "args = [\"run\", \"<file>.wasm\", ...options]".to_owned();
        if args.first().map(String::as_str) != Some("run") {
            self.problem(
                "entrypoint.args",
                "octet-wasm needs `run` first".into(),
                fix,
            );
            return;
        }
        if args.get(1).is_none_or(|c| c.starts_with("--")) {
            self.problem("entrypoint.args", "no component after `run`".into(), fix);
            return;
        }
        // Each unknown option is reported and left out, so one pass names
        // every mistake; anything else stops the parse.
        let mut args = args.to_vec();
        let run = loop {
            match RunArgs::parse_entrypoint(&args) {
                Ok(run) => break run,
                Err(err) => {
                    self.problem(
                        "entrypoint.args",
                        err.to_string(),
                        "see `octet-wasm run --help`".into(),
                    );
                    let EntrypointError::UnknownOption(flag) = err else {
                        return;
                    };
                    let Some(at) = args.iter().position(|arg| *arg == flag) else {
                        return;
                    };
                    args.remove(at);
                }
            }
        };
        let mut bad = Vec::new();
        if let Some(hex) = &run.sha256 {
            declared.pinned = Some(hex.clone());
            bad.extend(check_sha256(hex).err());
        }
        if run.runtime.memory_mib == Some(0) {
            bad.push("--memory-mib \"0\" is not a positive whole number".to_owned());
        }
        let mut deadlines = crate::protocol::deadlines::Deadlines::default();
        for setting in &run.deadlines {
            bad.extend(deadlines.set(setting).err());
        }
        if let Some(dir) = &run.runtime.cache_dir {
            self.warning(
                "entrypoint.args",
                format!("--cache-dir {:?} is ignored: the shim always uses the user's own compiled cache (~/.cache/octet-wasm, the home from the user database), because the manifest could otherwise point it at files the extension planted", dir.display().to_string()),
                format!("remove --cache-dir {}", dir.display()),
            );
        }
        for message in bad {
            self.problem(
                "entrypoint.args",
                message,
                "see `octet-wasm run --help`".into(),
            );
        }
        declared.requests = run.requests();
    }

    pub(super) fn capabilities(&mut self, table: &Table, declared: &mut Declared) {
        declared.filesystem = "none".into();
        let Some(caps) = self.section(table, "capabilities") else {
            return;
        };
        self.unknown_keys(caps, "capabilities", CAPABILITY_KEYS);
        if let Some(fs) = self.string(caps, "capabilities", "filesystem") {
            if matches!(fs.as_str(), "none" | "workspace" | "unrestricted") {
                declared.filesystem = fs;
            } else {
                self.problem(
                    "capabilities.filesystem",
                    format!("{fs:?} is not none, workspace or unrestricted"),
                    "filesystem = \"none\"".into(),
                );
            }
        }
        if self.flag(caps, "capabilities", "process") {
            self.warning(
                "capabilities.process",
                "WebAssembly cannot start processes; octet-wasm grants nothing for it".into(),
                "process = false".into(),
            );
        }
        declared.network = self.flag(caps, "capabilities", "network");
        declared.environment = self.strings(caps, "capabilities", "environment");
        let secrets = self.strings(caps, "capabilities", "secrets");
        let _ = self.flag(caps, "capabilities", "system_prompt");
        let overrides = self.strings(caps, "capabilities", "builtin_tool_overrides");
        match super::api_rules::overrides_problem(declared.api, &overrides) {
            Some((true, message, fix)) => {
                self.problem("capabilities.builtin_tool_overrides", message, fix)
            }
            Some((false, message, fix)) => {
                self.warning("capabilities.builtin_tool_overrides", message, fix)
            }
            None => {}
        }
        if declared.api == Some(ApiVersion::V0_1) {
            for (key, present) in [
                ("environment", !declared.environment.is_empty()),
                ("secrets", !secrets.is_empty()),
            ] {
                if present {
                    self.problem(
                        &format!("capabilities.{key}"),
                        "API 0.1 manifests cannot declare it".into(),
                        format!("api_version = \"0.2\", or remove {key}"),
                    );
                }
            }
        }
    }

    pub(super) fn contributes(&mut self, table: &Table, declared: &mut Declared) {
        let Some(contributes) = self.section(table, "contributes") else {
            return;
        };
        let section = "contributes";
        self.unknown_keys(contributes, section, CONTRIBUTES_KEYS);
        for key in ["tools", "commands"] {
            let names = self.strings(contributes, section, key);
            for name in &names {
                if !is_identifier(name) {
                    self.problem(
                        &field(section, key),
                        format!("{name:?} is not an identifier (1-64 bytes of [A-Za-z_][A-Za-z0-9_.-]*, no leading '/')"),
                        "rename it in the guest and here".into(),
                    );
                }
            }
            if key == "tools" {
                declared.tools = names;
            } else {
                declared.commands = names;
            }
        }
        declared.hooks = self.strings(contributes, section, "hooks");
        for hook in declared.hooks.clone() {
            if let Some((message, fix)) = super::api_rules::hook_problem(declared.api, &hook) {
                self.problem("contributes.hooks", message, fix);
            }
        }
        declared.ui = self.strings(contributes, section, "ui");
        for surface in declared.ui.clone() {
            if !UI_SURFACES.contains(&surface.as_str()) {
                self.problem(
                    "contributes.ui",
                    format!("{surface:?} is not a UI surface"),
                    "use status, header or footer".into(),
                );
            }
        }
        declared.renderers = self.strings(contributes, section, "tool_renderers");
        for tool in declared.renderers.clone() {
            if !declared.tools.contains(&tool) {
                self.problem(
                    "contributes.tool_renderers",
                    format!("{tool:?} is not a tool this manifest declares"),
                    format!("add {tool:?} to tools or remove the renderer"),
                );
            }
        }
        declared.context = self.flag(contributes, section, "context");
        declared.menu = self.flag(contributes, section, "menu");
        for key in ["notifications", "confirmations", "presentation"] {
            let _ = self.flag(contributes, section, key);
        }
        if declared.api == Some(ApiVersion::V0_1) {
            for key in ["menu", "presentation", "shortcuts", "flags"] {
                if contributes.contains_key(key) {
                    self.problem(
                        &field(section, key),
                        "API 0.1 manifests cannot declare it".into(),
                        format!("api_version = \"0.2\", or remove {key}"),
                    );
                }
            }
        }
        if contributes.contains_key("providers") {
            self.problem(
                "contributes.providers",
                "providers belong to API 0.3 (on 0.4, provider_proxy_v1); octet-wasm serves neither".into(),
                "remove providers".into(),
            );
        }
    }
}
