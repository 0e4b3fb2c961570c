//! `octet-wasm inspect COMPONENT [--json]`: what a component offers and what
//! it can reach, found by running its `describe` offline.

use super::component::{self, Analysis, lifecycle_names};
use super::say;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct InspectArgs {
    /// The extension component (.wasm).
    component: PathBuf,
    /// Print one JSON object instead of the readable report.
    #[arg(long)]
    json: bool,
}

pub fn run(args: InspectArgs) -> Result<(), String> {
    let analysis = component::analyze(&args.component).map_err(|err| format!("{err:#}"))?;
    if args.json {
        let value = component::analysis_json(&analysis);
        say(&serde_json::to_string_pretty(&value).map_err(|err| err.to_string())?);
    } else {
        report(&analysis);
    }
    Ok(())
}

fn list(items: &[impl AsRef<str>]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items
            .iter()
            .map(AsRef::as_ref)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn report(analysis: &Analysis) {
    let d = &analysis.description;
    say(&format!("component    {}", analysis.path.display()));
    say(&format!("size         {} bytes", analysis.size));
    say(&format!("sha256       {}", analysis.sha256));
    say(&format!(
        "wit          octet:extension@{}",
        analysis.wit_version.as_deref().unwrap_or("?")
    ));
    say(&format!("name         {}", d.name));
    if let Some(metadata) = &analysis.metadata {
        say(&format!(
            "metadata     {}",
            serde_json::to_string(metadata).unwrap_or_default()
        ));
    }
    if let Ok(api) = super::manifest::api_version(analysis, None) {
        say(&format!("api_version  {api} (what `manifest` selects)"));
    }
    say("");
    say(&format!("tools ({})", d.tools.len()));
    for tool in &d.tools {
        say(&format!("  {} — {}", tool.name, tool.description));
        say(&format!("    parameters     {}", compact(&tool.parameters)));
        if let Some(schema) = &tool.output_schema {
            say(&format!("    output_schema  {}", compact(schema)));
        }
    }
    say(&format!("commands ({})", d.commands.len()));
    for command in &d.commands {
        let usage = command
            .usage
            .as_deref()
            .map(|u| format!("  (usage: {u})"))
            .unwrap_or_default();
        say(&format!(
            "  /{} — {}{usage}",
            command.name, command.description
        ));
    }
    say(&format!("hooks        {}", list(&d.hooks)));
    say(&format!("context      {}", d.context));
    say(&format!("status       {}", list(&d.status_surfaces)));
    say(&format!("renderers    {}", list(&d.renderers)));
    say(&format!("menu         {}", d.menu));
    say(&format!(
        "lifecycle    {}",
        list(&lifecycle_names(&d.lifecycle))
    ));
    say(&format!("concurrency  {}", d.max_concurrency));
    say(&format!("features     {}", list(&d.features)));
    say("");
    say(&format!("imports ({})", analysis.imports.len()));
    for name in &analysis.imports {
        say(&format!("  {name}"));
    }
    let reach = &analysis.reach;
    say("capabilities the imports can use (the manifest must grant them for them to work)");
    say(&format!(
        "  filesystem   {}",
        if reach.filesystem { "yes" } else { "no" }
    ));
    say(&format!(
        "  network      {}",
        if reach.network { "yes" } else { "no" }
    ));
    say(&format!(
        "  environment  {}",
        if reach.environment { "yes" } else { "no" }
    ));
}

/// A JSON text on one line (schemas as the guest wrote them, compacted).
fn compact(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .map(|value| value.to_string())
        .unwrap_or_else(|_| text.to_owned())
}
