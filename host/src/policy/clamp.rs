//! What the extension asks for, held to the user's ceilings.
//!
//! An extension may always ask for less than a ceiling; what it asks above
//! one is lowered to the ceiling, with a record naming the ceiling, the
//! request and the policy key that raises it.

use super::ceilings::Ceilings;
use crate::protocol::deadlines::{self, Deadlines};
use crate::runtime::Limits;
use crate::runtime::limits::{MemoryBudget, Origins, SetBy};
use crate::user_dirs::POLICY_FILE;
use std::fmt;

/// Where an extension's request came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The manifest's `[entrypoint].args` (`octet-wasm run ...`).
    Arguments,
    /// The component's `octet-wasm-metadata` section.
    Metadata,
}

impl Origin {
    pub fn describe(self) -> &'static str {
        match self {
            Origin::Arguments => "the run arguments",
            Origin::Metadata => "the component's metadata section",
        }
    }
}

/// A request lowered to its ceiling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clamp {
    /// The policy key: `memory_mib`, `fuel`, `deadlines.<name>`.
    pub setting: String,
    pub requested: u64,
    pub ceiling: u64,
    /// `MiB`, `ms` or empty.
    pub unit: &'static str,
    pub origin: Origin,
    /// Who can raise the ceiling, and how.
    pub raise: String,
    /// Whether any policy can raise the ceiling (a deadline already at the
    /// host's own deadline minus the margin cannot go higher).
    pub raisable: bool,
}

impl fmt::Display for Clamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = |n: u64| {
            if self.unit.is_empty() {
                n.to_string()
            } else {
                format!("{n} {}", self.unit)
            }
        };
        write!(
            f,
            "{} {} from {} is above the ceiling of {}; using {} ({})",
            self.setting,
            unit(self.requested),
            self.origin.describe(),
            unit(self.ceiling),
            unit(self.ceiling),
            self.raise
        )
    }
}

impl Clamp {
    /// Logs the clamp as a warning: the user should know the extension
    /// asked for more than they allow.
    pub fn log(&self) {
        crate::log!(crate::log::Level::Warning, "the extension asks for more than the user's ceiling; lowered to the ceiling",
            "setting" => self.setting.clone(),
            "requested" => self.requested,
            "ceiling" => self.ceiling,
            "unit" => self.unit,
            "from" => self.origin.describe(),
            "raise_with" => self.raise.clone(),
            "detail" => self.to_string());
    }
}

/// A number the extension asked for, with where it came from.
pub type Asked<T> = Option<(T, Origin)>;

fn policy_key(key: &str) -> String {
    format!("the user raises the ceiling with {key} in {POLICY_FILE}")
}

/// The limits for the extension's memory and fuel requests under
/// `ceilings`, and the clamps that took.
pub fn limits(
    ceilings: &Ceilings,
    memory_mib: Asked<usize>,
    fuel: Asked<u64>,
) -> Result<(Limits, Vec<Clamp>), String> {
    let mut clamps = Vec::new();
    let ceiling = ceilings.memory_mib;
    let (instance_mib, memory_origin) = match memory_mib {
        Some((0, origin)) => {
            return Err(format!(
                "memory_mib from {} must be at least 1",
                origin.describe()
            ));
        }
        None => (ceiling, SetBy::User),
        Some((mib, origin)) if mib > ceiling => {
            clamps.push(Clamp {
                setting: "memory_mib".into(),
                requested: mib as u64,
                ceiling: ceiling as u64,
                unit: "MiB",
                origin,
                raise: policy_key("memory_mib"),
                raisable: true,
            });
            (ceiling, SetBy::User)
        }
        Some((mib, _)) if mib == ceiling => (mib, SetBy::User),
        Some((mib, _)) => (mib, SetBy::Extension),
    };
    let (fuel, fuel_origin) = match (fuel, ceilings.fuel) {
        (None, ceiling) => (ceiling, SetBy::User),
        (Some((asked, _)), None) => (Some(asked), SetBy::Extension),
        (Some((asked, origin)), Some(ceiling)) if asked > ceiling => {
            clamps.push(Clamp {
                setting: "fuel".into(),
                requested: asked,
                ceiling,
                unit: "",
                origin,
                raise: policy_key("fuel"),
                raisable: true,
            });
            (Some(ceiling), SetBy::User)
        }
        (Some((asked, _)), Some(ceiling)) if asked == ceiling => (Some(asked), SetBy::User),
        (Some((asked, _)), Some(_)) => (Some(asked), SetBy::Extension),
    };
    let limits = Limits {
        memory_bytes: instance_mib.saturating_mul(1 << 20),
        process_memory: MemoryBudget::new(ceiling.saturating_mul(1 << 20)),
        fuel,
        origins: Origins {
            memory: memory_origin,
            fuel: fuel_origin,
        },
        capabilities: ceilings.capabilities.clone(),
        ..Limits::default()
    };
    Ok((limits, clamps))
}

/// The deadlines for the extension's `name=ms` settings (applied in order,
/// so a later one wins) under `ceilings`, and the clamps that took.
pub fn deadlines(
    ceilings: &Ceilings,
    settings: &[(String, Origin)],
) -> Result<(Deadlines, Vec<Clamp>), String> {
    let mut values = ceilings.deadline_defaults.clone();
    let mut clamps = Vec::new();
    for (setting, origin) in settings {
        let (bound, asked) = Deadlines::parse(setting)
            .map_err(|err| format!("{err} (from {})", origin.describe()))?;
        let ceiling = ceilings.deadlines.get(bound.name);
        let value = if asked > ceiling {
            let raisable = ceiling < bound.cap;
            let raise = if !raisable {
                format!("no ceiling can be higher: {}", bound.host)
            } else {
                format!(
                    "the user raises the ceiling, up to {} ms, with deadlines.{} in {POLICY_FILE}",
                    bound.cap.as_millis(),
                    bound.name
                )
            };
            clamps.push(Clamp {
                setting: format!("deadlines.{}", bound.name),
                requested: asked.as_millis() as u64,
                ceiling: ceiling.as_millis() as u64,
                unit: "ms",
                origin: *origin,
                raise,
                raisable,
            });
            ceiling
        } else {
            asked
        };
        values.put(bound, value);
    }
    Ok((values, clamps))
}

/// The deadline names and values in `deadlines`, for reports.
pub fn deadline_list(deadlines: &Deadlines) -> Vec<(&'static str, u64)> {
    deadlines::NAMES
        .iter()
        .map(|name| (*name, deadlines.get(name).as_millis() as u64))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const MIB: usize = 1 << 20;

    #[test]
    fn memory_above_the_ceiling_is_lowered_and_the_budget_is_the_ceiling() {
        let built_in = Ceilings::built_in();
        let (limits, clamps) =
            super::limits(&built_in, Some((100_000, Origin::Arguments)), None).unwrap();
        assert_eq!(limits.memory_bytes, 256 * MIB);
        assert_eq!(limits.process_memory.limit(), 256 * MIB);
        assert_eq!(limits.origins.memory, SetBy::User);
        assert_eq!(clamps.len(), 1);
        let text = clamps[0].to_string();
        assert_eq!(
            text,
            "memory_mib 100000 MiB from the run arguments is above the ceiling of 256 MiB; using 256 MiB (the user raises the ceiling with memory_mib in ~/.config/octet-wasm/policy.toml)"
        );
    }

    #[test]
    fn an_extension_may_ask_for_less() {
        let built_in = Ceilings::built_in();
        let (limits, clamps) = super::limits(
            &built_in,
            Some((64, Origin::Metadata)),
            Some((10, Origin::Metadata)),
        )
        .unwrap();
        assert!(clamps.is_empty());
        assert_eq!(limits.memory_bytes, 64 * MIB);
        // The budget is still the user's: the per-instance cap is the
        // extension's own.
        assert_eq!(limits.process_memory.limit(), 256 * MIB);
        assert_eq!(limits.origins.memory, SetBy::Extension);
        assert_eq!(
            (limits.fuel, limits.origins.fuel),
            (Some(10), SetBy::Extension)
        );
        let (limits, _) = super::limits(&built_in, None, None).unwrap();
        assert_eq!(limits.memory_bytes, 256 * MIB);
        assert_eq!((limits.fuel, limits.origins.fuel), (None, SetBy::User));
        assert!(super::limits(&built_in, Some((0, Origin::Arguments)), None).is_err());
    }

    #[test]
    fn a_fuel_ceiling_meters_every_call() {
        let ceilings = Ceilings {
            fuel: Some(1_000),
            ..Ceilings::built_in()
        };
        let (limits, clamps) = super::limits(&ceilings, None, None).unwrap();
        assert_eq!(
            (limits.fuel, limits.origins.fuel),
            (Some(1_000), SetBy::User)
        );
        assert!(clamps.is_empty());
        let (limits, clamps) =
            super::limits(&ceilings, None, Some((u64::MAX, Origin::Arguments))).unwrap();
        assert_eq!(limits.fuel, Some(1_000));
        assert_eq!(clamps[0].setting, "fuel");
        assert!(
            clamps[0]
                .raise
                .contains("fuel in ~/.config/octet-wasm/policy.toml")
        );
        let (limits, _) = super::limits(&ceilings, None, Some((5, Origin::Metadata))).unwrap();
        assert_eq!(
            (limits.fuel, limits.origins.fuel),
            (Some(5), SetBy::Extension)
        );
    }

    #[test]
    fn every_deadline_is_held_to_its_ceiling() {
        let built_in = Ceilings::built_in();
        let settings: Vec<(String, Origin)> = deadlines::NAMES
            .iter()
            .map(|name| (format!("{name}=600000000"), Origin::Arguments))
            .collect();
        let (values, clamps) = super::deadlines(&built_in, &settings).unwrap();
        assert_eq!(values, built_in.deadlines);
        assert_eq!(clamps.len(), deadlines::NAMES.len());
        let render = clamps
            .iter()
            .find(|c| c.setting == "deadlines.render")
            .unwrap();
        assert_eq!((render.requested, render.ceiling), (600_000_000, 400));
        assert!(
            render.raise.contains("no ceiling can be higher"),
            "{}",
            render.raise
        );
        let command = clamps
            .iter()
            .find(|c| c.setting == "deadlines.command")
            .unwrap();
        assert!(
            command
                .raise
                .contains("up to 1799000 ms, with deadlines.command in ~/.config"),
            "{}",
            command.raise
        );
    }

    #[test]
    fn lower_deadlines_pass_and_the_later_setting_wins() {
        let settings = [
            ("render=60000".to_owned(), Origin::Metadata),
            ("render=100".to_owned(), Origin::Arguments),
            ("tool=5000".to_owned(), Origin::Arguments),
        ];
        let (values, clamps) = super::deadlines(&Ceilings::built_in(), &settings).unwrap();
        assert_eq!(values.render, Duration::from_millis(100));
        assert_eq!(values.request, Duration::from_millis(5_000));
        assert_eq!(values.cancel_grace, Duration::from_millis(250));
        assert_eq!(clamps.len(), 1);
        assert_eq!(clamps[0].origin, Origin::Metadata);
        let bad = super::deadlines(
            &Ceilings::built_in(),
            &[("forever=1".to_owned(), Origin::Metadata)],
        )
        .unwrap_err();
        assert!(bad.contains("forever") && bad.contains("metadata"), "{bad}");
    }
}
