//! What each API version lets a manifest carry, judged from a component's
//! description: the `api_version` a guest needs, and what is wrong with a
//! declared hook or grant. `manifest` writes by these rules and `check`
//! and `inspect` judge by them, so they live apart from all three.

use super::component::Analysis;
use crate::protocol::handshake::api_version::ApiVersion;

use crate::protocol::handshake::hook::{self, Hook};

/// The 0.2-only things a guest uses, for messages.
pub fn uses_v0_2(description: &crate::runtime::types::Description) -> Vec<String> {
    let mut uses = Vec::new();
    for tool in &description.tools {
        if tool.output_schema.is_some() {
            uses.push(format!("tool {} has an output_schema", tool.name));
        }
    }
    for feature in &description.features {
        uses.push(format!("feature {feature}"));
    }
    if !description.lifecycle.is_empty() {
        uses.push("lifecycle events".into());
    }
    if description.menu {
        uses.push("a menu".into());
    }
    if description.max_concurrency > 1 {
        uses.push(format!("concurrency {}", description.max_concurrency));
    }
    for hook in &description.hooks {
        if Hook::parse(hook).is_some_and(|hook| hook.since() == ApiVersion::V0_2) {
            uses.push(format!("hook {hook}"));
        }
    }
    uses
}

/// What is wrong with declaring `hook` in a manifest of `api` (`None`: the
/// version is unknown), as the message and the fix; `None` when nothing is.
pub fn hook_problem(api: Option<ApiVersion>, hook: &str) -> Option<(String, String)> {
    use crate::protocol::handshake::features;
    let names = |hooks: &[Hook]| {
        hooks
            .iter()
            .map(|hook| hook.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(known) = Hook::parse(hook) else {
        return Some((
            format!("{hook:?} is not a hook of API 0.1, 0.2 or 0.4"),
            format!(
                "use one of {}, {}, {}",
                names(hook::V0_1),
                names(hook::V0_2),
                names(hook::V0_4)
            ),
        ));
    };
    let since = known.since();
    let api = api?;
    if since == ApiVersion::V0_4 && api != ApiVersion::V0_4 {
        return Some((
            format!(
                "{hook:?} is an API 0.4 hook; octet rejects it in a {} manifest",
                api.as_str()
            ),
            "api_version = \"0.4\", or remove the hook".into(),
        ));
    }
    if since == ApiVersion::V0_2 && api == ApiVersion::V0_1 {
        return Some((
            format!("{hook:?} is an API 0.2 hook; octet rejects it in a 0.1 manifest"),
            "api_version = \"0.2\", or remove the hook".into(),
        ));
    }
    let feature = known.feature()?;
    if features::supported(api, feature) {
        return None;
    }
    Some((
        format!(
            "octet-wasm cannot serve {hook:?}: it needs protocol feature {feature}, which octet-wasm does not implement, so initialize would fail"
        ),
        "remove the hook".into(),
    ))
}

/// What to say about `[capabilities].builtin_tool_overrides` (an API 0.4
/// grant for replacing octet's built-in tools): whether octet refuses the
/// manifest for it, the message and the fix.
pub fn overrides_problem(
    api: Option<ApiVersion>,
    names: &[String],
) -> Option<(bool, String, String)> {
    if names.is_empty() {
        return None;
    }
    if api.is_some_and(|api| api != ApiVersion::V0_4) {
        return Some((
            true,
            "only API 0.4 manifests can grant built-in tool overrides; octet refuses it here"
                .into(),
            "api_version = \"0.4\", or remove builtin_tool_overrides".into(),
        ));
    }
    Some((
        false,
        format!(
            "octet-wasm does not negotiate builtin_tool_overrides_v1, so octet keeps its own {}",
            names.join(", ")
        ),
        "remove builtin_tool_overrides".into(),
    ))
}

/// The 0.4-only things a guest uses, for messages; `hooks` only the 0.4
/// hooks it handles (the things a 0.1 or 0.2 manifest cannot declare).
pub fn uses_v0_4(description: &crate::runtime::types::Description) -> (Vec<String>, Vec<String>) {
    let hooks: Vec<String> = description
        .hooks
        .iter()
        .filter(|hook| Hook::parse(hook).is_some_and(|hook| hook.since() == ApiVersion::V0_4))
        .map(|hook| format!("hook {hook}"))
        .collect();
    let mut others: Vec<String> = description
        .tools
        .iter()
        .filter(|tool| crate::protocol::imports::tools_catalog::prompt::has(tool))
        .map(|tool| format!("prompt metadata on tool {}", tool.name))
        .collect();
    let metadata_named = !others.is_empty();
    for feature in &description.features {
        // The metadata itself is the clearer name for its feature.
        if metadata_named
            && feature == crate::protocol::handshake::feature::Feature::ToolPromptMetadata.as_str()
        {
            continue;
        }
        if crate::protocol::handshake::features::V0_4_ONLY.contains(&feature.as_str()) {
            others.push(format!("feature {feature}"));
        }
    }
    (hooks, others)
}

/// The `api_version` the manifest selects (see the module docs).
pub fn api_version(analysis: &Analysis, requested: Option<&str>) -> Result<String, String> {
    let (v0_4_hooks, v0_4_others) = uses_v0_4(&analysis.description);
    let chosen = requested
        .map(str::to_owned)
        .or_else(|| analysis.metadata.as_ref()?.api_version.clone())
        .unwrap_or_else(|| {
            if v0_4_hooks.is_empty() && v0_4_others.is_empty() {
                "0.2".into()
            } else {
                "0.4".into()
            }
        });
    if chosen != "0.4" && !v0_4_hooks.is_empty() {
        return Err(format!(
            "api_version {chosen} cannot carry what the guest uses: {}; use 0.4",
            v0_4_hooks.join(", ")
        ));
    }
    match chosen.as_str() {
        "0.2" | "0.4" => Ok(chosen),
        "0.1" => {
            let uses = uses_v0_2(&analysis.description);
            if uses.is_empty() {
                Ok(chosen)
            } else {
                Err(format!(
                    "api_version 0.1 cannot carry what the guest uses: {}; use 0.2",
                    uses.join(", ")
                ))
            }
        }
        other => Err(format!("api_version {other:?} is not 0.1, 0.2 or 0.4")),
    }
}
