//! The limits `run` will use for an extension's requests under a policy,
//! worked out offline for `check` and `inspect`.

use super::clamp::{self, Asked, Clamp, Origin};
use super::{POLICY_FILE, Policy};
use crate::protocol::deadlines::Deadlines;
use crate::runtime::{FsAccess, Limits};
use serde_json::{Value, json};

/// What an extension asks for, from its `run` arguments or its metadata
/// section (each is one `Requests`).
#[derive(Debug, Clone, Default)]
pub struct Requests {
    pub memory_mib: Option<usize>,
    pub fuel: Option<u64>,
    /// `name=ms` settings.
    pub deadlines: Vec<String>,
}

/// The limits and deadlines `run` will use, and what it will clamp.
pub struct Outcome {
    pub limits: Limits,
    pub deadlines: Deadlines,
    pub clamps: Vec<Clamp>,
}

/// Applies `arguments` over `metadata` (as `run` does: arguments win), held
/// to `policy`'s ceilings.
pub fn outcome(
    policy: &Policy,
    arguments: &Requests,
    metadata: &Requests,
) -> Result<Outcome, String> {
    fn asked<T>(flag: Option<T>, metadata: Option<T>) -> Asked<T> {
        flag.map(|value| (value, Origin::Arguments))
            .or(metadata.map(|value| (value, Origin::Metadata)))
    }
    let (limits, mut clamps) = clamp::limits(
        &policy.ceilings,
        asked(arguments.memory_mib, metadata.memory_mib),
        asked(arguments.fuel, metadata.fuel),
    )?;
    let settings: Vec<(String, Origin)> = metadata
        .deadlines
        .iter()
        .map(|setting| (setting.clone(), Origin::Metadata))
        .chain(
            arguments
                .deadlines
                .iter()
                .map(|setting| (setting.clone(), Origin::Arguments)),
        )
        .collect();
    let (deadlines, more) = clamp::deadlines(&policy.ceilings, &settings)?;
    clamps.extend(more);
    Ok(Outcome {
        limits,
        deadlines,
        clamps,
    })
}

fn fs_name(access: FsAccess) -> &'static str {
    match access {
        FsAccess::None => "none",
        FsAccess::Workspace => "workspace",
        FsAccess::Unrestricted => "unrestricted",
    }
}

fn fuel_text(fuel: Option<u64>) -> String {
    fuel.map_or_else(
        || "not metered".to_owned(),
        |fuel| format!("{fuel} per call"),
    )
}

/// The ceilings and the values in force, one line each, for people.
pub fn lines(policy: &Policy, outcome: &Outcome) -> Vec<String> {
    let c = &policy.ceilings;
    let limits = &outcome.limits;
    let mut lines = vec![
        format!(
            "ceilings     {}; the user sets them in {POLICY_FILE}",
            policy.source()
        ),
        format!(
            "  memory     {} MiB per instance, {} MiB for all instances together (ceiling {} MiB)",
            limits.memory_bytes >> 20,
            limits.process_memory.limit() >> 20,
            c.memory_mib
        ),
        format!(
            "  fuel       {} (ceiling: {})",
            fuel_text(limits.fuel),
            c.fuel.map_or_else(|| "none".to_owned(), |f| f.to_string())
        ),
    ];
    for (name, value) in clamp::deadline_list(&outcome.deadlines) {
        lines.push(format!(
            "  {name:<20} {value} ms (ceiling {} ms)",
            c.deadlines.get(name).as_millis()
        ));
    }
    let caps = &c.capabilities;
    lines.push(format!(
        "  capabilities  filesystem at most {}, network {}, environment {}",
        fs_name(caps.filesystem),
        if caps.network { "allowed" } else { "withheld" },
        caps.environment.as_ref().map_or_else(
            || "any the manifest names".to_owned(),
            |names| if names.is_empty() {
                "none".to_owned()
            } else {
                format!(
                    "only {}",
                    names.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            }
        )
    ));
    lines.push(format!("  receipts   {}", receipts_text(c.receipts)));
    lines
}

/// Whether usage receipts are on, and where they go or how the user turns
/// them on.
fn receipts_text(on: bool) -> String {
    if on {
        format!(
            "on: one JSON-lines file per process in {}/<extension>-<pid>.jsonl (`receipts` in {POLICY_FILE})",
            crate::receipts::DIR_TEXT
        )
    } else {
        format!("off (the user turns them on with `receipts = true` in {POLICY_FILE})")
    }
}

/// The same as JSON, for `inspect --json`.
pub fn json(policy: &Policy, outcome: &Outcome) -> Value {
    let c = &policy.ceilings;
    let deadline_map = |d: &Deadlines| {
        clamp::deadline_list(d)
            .into_iter()
            .map(|(name, ms)| (name.to_owned(), Value::from(ms)))
            .collect::<serde_json::Map<_, _>>()
    };
    json!({
        "policy": policy.file.as_ref().map(|p| p.display().to_string()),
        "extension_table": policy.extension_table(),
        "extension_table_pinned_to": policy.table_pinned_elsewhere(),
        "ceilings": {
            "memory_mib": c.memory_mib,
            "fuel": c.fuel,
            "deadlines_ms": deadline_map(&c.deadlines),
            "capabilities": {
                "filesystem": fs_name(c.capabilities.filesystem),
                "network": c.capabilities.network,
                "environment": c.capabilities.environment,
            },
            "receipts": c.receipts,
        },
        "in_force": {
            "memory_mib_per_instance": outcome.limits.memory_bytes >> 20,
            "memory_mib_process": outcome.limits.process_memory.limit() >> 20,
            "fuel": outcome.limits.fuel,
            "deadlines_ms": deadline_map(&outcome.deadlines),
        },
        "clamps": outcome.clamps.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_win_over_metadata_and_both_are_clamped() {
        let metadata = Requests {
            memory_mib: Some(64),
            fuel: None,
            deadlines: vec!["render=60000".into()],
        };
        let arguments = Requests {
            memory_mib: Some(100_000),
            fuel: None,
            deadlines: vec!["cancel_grace=60000".into()],
        };
        let outcome = outcome(&Policy::built_in(), &arguments, &metadata).unwrap();
        assert_eq!(outcome.limits.memory_bytes, 256 << 20);
        let settings: Vec<(&str, Origin)> = outcome
            .clamps
            .iter()
            .map(|c| (c.setting.as_str(), c.origin))
            .collect();
        assert_eq!(
            settings,
            [
                ("memory_mib", Origin::Arguments),
                ("deadlines.render", Origin::Metadata),
                ("deadlines.cancel_grace", Origin::Arguments)
            ]
        );
        let lines = lines(&Policy::built_in(), &outcome);
        assert!(lines[0].contains("built in"), "{lines:?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("render") && l.contains("400 ms (ceiling 400 ms)")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("cancel_grace") && l.contains("1000 ms"))
        );
        let json = json(&Policy::built_in(), &outcome);
        assert_eq!(json["ceilings"]["memory_mib"], 256);
        assert_eq!(json["in_force"]["deadlines_ms"]["render"], 400);
        assert_eq!(json["clamps"].as_array().unwrap().len(), 3);
        assert_eq!(json["ceilings"]["receipts"], false);
        assert!(
            lines
                .iter()
                .any(|l| l.contains("receipts   off") && l.contains("receipts = true")),
            "{lines:?}"
        );
    }
}
