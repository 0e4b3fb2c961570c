//! `octet-wasm inspect COMPONENT [--json]`: what a component offers, what
//! it can reach (found by running its `describe` offline), and the limits
//! it will run under (its metadata section against the user's policy).

use super::component::{self, Analysis, lifecycle_names};
use super::say;
use crate::policy::report;
use crate::policy::{Policy, Problem};
use serde_json::{Value, json};
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
    let limits = Limits::of(&analysis)?;
    if args.json {
        let mut value = analysis_json(&analysis);
        value["limits"] = report::json(&limits.policy, &limits.outcome);
        value["signature"] =
            super::sign::report_json(&analysis.signature, &analysis.sha256, &limits.policy.trust);
        if let Some(problem) = &limits.problem {
            value["limits"]["policy_problem"] = problem.to_string().into();
        }
        say(&serde_json::to_string_pretty(&value).map_err(|err| err.to_string())?);
    } else {
        self::report(&analysis);
        for line in
            super::sign::report_lines(&analysis.signature, &analysis.sha256, &limits.policy.trust)
        {
            say(&line);
        }
        say("");
        match &limits.problem {
            Some(problem) if problem.refuses_start() => say(&format!(
                "error: {problem}; `run` and `compile` refuse to start until it is fixed or removed (the limits below are the built-in ones, for reference)"
            )),
            Some(problem) => say(&format!("warning: {problem}; the built-in ceilings apply")),
            None => {}
        }
        for clamp in &limits.outcome.clamps {
            say(&format!("clamp        {clamp}"));
        }
        for line in report::lines(&limits.policy, &limits.outcome) {
            say(&line);
        }
    }
    Ok(())
}

/// The limits `run` will give the component: its metadata section's
/// requests (the manifest's args may ask for more; `check` sees those)
/// against the user's policy for the extension's name.
struct Limits {
    policy: Policy,
    problem: Option<Problem>,
    outcome: report::Outcome,
}

impl Limits {
    fn of(analysis: &Analysis) -> Result<Limits, String> {
        let name = analysis
            .metadata
            .as_ref()
            .map_or(analysis.description.name.as_str(), |m| m.name.as_str());
        let (policy, problem) = crate::policy::load(Some(name), Some(&analysis.sha256));
        let metadata = analysis
            .metadata
            .as_ref()
            .map(|m| m.limits.clone())
            .unwrap_or_default();
        let outcome = report::outcome(&policy, &report::Requests::default(), &metadata.requests())?;
        Ok(Limits {
            policy,
            problem,
            outcome,
        })
    }
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
    if let Ok(api) = super::api_rules::api_version(analysis, None) {
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
        if let Some(snippet) = &tool.prompt_snippet {
            say(&format!("    prompt_snippet {snippet:?} (API 0.4)"));
        }
        for guideline in &tool.prompt_guidelines {
            say(&format!("    guideline      {guideline:?} (API 0.4)"));
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

/// The whole analysis as JSON (`inspect --json`).
fn analysis_json(analysis: &Analysis) -> Value {
    json!({
        "path": analysis.path.display().to_string(),
        "size": analysis.size,
        "sha256": analysis.sha256,
        "wit_version": analysis.wit_version,
        "description": component::description_json(&analysis.description),
        "imports": analysis.imports,
        "exports": analysis.exports,
        "capabilities": {
            "filesystem": analysis.reach.filesystem,
            "network": analysis.reach.network,
            "environment": analysis.reach.environment,
        },
        "api_version": super::api_rules::api_version(analysis, None).ok(),
        "metadata": analysis.metadata,
    })
}
