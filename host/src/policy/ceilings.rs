//! The ceilings in force for one extension: the built-in ones, or the
//! user's policy within the caps the host's own deadlines set.

use super::format::Settings;
use crate::protocol::deadlines::{self, Deadlines};
use crate::runtime::limits::CapabilityLimit;
use std::time::Duration;

/// Memory for the whole process without a policy: room for an interpreter
/// guest and the protocol's largest values (see `runtime::Limits`), for
/// all instances together.
pub const BUILT_IN_MEMORY_MIB: usize = 256;

/// The most an extension may ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceilings {
    /// Guest memory of the whole process (every instance together), MiB.
    pub memory_mib: usize,
    /// Fuel per call; `None`: calls are not metered unless the extension
    /// asks.
    pub fuel: Option<u64>,
    /// The longest each deadline may be.
    pub deadlines: Deadlines,
    /// Each deadline when the extension asks for none: the user's value
    /// where the policy names one, else the built-in default.
    pub deadline_defaults: Deadlines,
    /// The most of each capability a sandbox may be given.
    pub capabilities: CapabilityLimit,
    /// Whether `run` writes usage receipts (`crate::receipts`); off unless
    /// the user's policy says `receipts = true`.
    pub receipts: bool,
}

impl Ceilings {
    /// The ceilings without a policy file.
    pub fn built_in() -> Ceilings {
        Ceilings {
            memory_mib: BUILT_IN_MEMORY_MIB,
            fuel: None,
            deadlines: Deadlines::built_in_ceilings(),
            deadline_defaults: Deadlines::default(),
            capabilities: CapabilityLimit::default(),
            receipts: false,
        }
    }

    /// The ceilings a policy's settings give, and a note for each value
    /// that had to be lowered to a cap no policy can pass.
    pub fn from_settings(settings: &Settings) -> (Ceilings, Vec<String>) {
        let mut notes = Vec::new();
        let mut ceilings = Ceilings::built_in();
        if let Some(mib) = settings.memory_mib {
            ceilings.memory_mib = usize::try_from(mib)
                .unwrap_or(usize::MAX)
                .min(usize::MAX >> 20);
        }
        ceilings.fuel = settings.fuel;
        ceilings.receipts = settings.receipts.unwrap_or(false);
        for name in deadlines::NAMES {
            let (Some(bound), Some(ms)) = (deadlines::bound(name), settings.deadlines.get(name))
            else {
                continue;
            };
            let mut value = Duration::from_millis(ms);
            if value > bound.cap {
                notes.push(format!(
                    "deadlines.{name} = {ms} is past what octet-wasm allows ({} ms: {}); using {} ms",
                    bound.cap.as_millis(),
                    bound.host,
                    bound.cap.as_millis()
                ));
                value = bound.cap;
            }
            ceilings.deadlines.put(bound, value);
            ceilings.deadline_defaults.put(bound, value);
        }
        let capabilities = &settings.capabilities;
        if let Some(filesystem) = capabilities.filesystem {
            ceilings.capabilities.filesystem = filesystem.access();
        }
        if let Some(network) = capabilities.network {
            ceilings.capabilities.network = network;
        }
        if let Some(names) = &capabilities.environment {
            ceilings.capabilities.environment = Some(names.iter().cloned().collect());
        }
        (ceilings, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::format::parse;
    use crate::runtime::FsAccess;

    fn ceilings(text: &str) -> (Ceilings, Vec<String>) {
        Ceilings::from_settings(&parse(text, None, None).unwrap().0)
    }

    #[test]
    fn without_a_policy_the_host_bounds_everything() {
        let built_in = Ceilings::built_in();
        assert_eq!(built_in.memory_mib, 256);
        assert_eq!(built_in.fuel, None);
        assert_eq!(built_in.deadlines.render, Duration::from_millis(400));
        assert_eq!(built_in.deadlines.command, Duration::from_millis(29_000));
        assert_eq!(
            built_in.deadlines.cancel_grace,
            Duration::from_millis(1_000)
        );
        assert_eq!(built_in.deadline_defaults, Deadlines::default());
        assert_eq!(built_in.capabilities, CapabilityLimit::default());
        assert!(!built_in.receipts);
        assert_eq!(ceilings(""), (built_in, Vec::new()));
    }

    #[test]
    fn a_policy_sets_ceilings_and_defaults() {
        let (c, notes) = ceilings(
            r#"
memory_mib = 1024
fuel = 5
[deadlines]
command = 600000
render = 100
[capabilities]
filesystem = "none"
network = false
environment = ["A", "B"]
"#,
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!((c.memory_mib, c.fuel), (1024, Some(5)));
        assert!(!c.receipts);
        assert!(ceilings("receipts = true").0.receipts);
        assert_eq!(c.deadlines.command, Duration::from_millis(600_000));
        assert_eq!(c.deadline_defaults.command, Duration::from_millis(600_000));
        assert_eq!(c.deadlines.render, Duration::from_millis(100));
        // Unnamed deadlines keep the built-in ceiling and default.
        assert_eq!(c.deadlines.cancel_grace, Duration::from_millis(1_000));
        assert_eq!(c.deadline_defaults.cancel_grace, Duration::from_millis(250));
        assert_eq!(c.capabilities.filesystem, FsAccess::None);
        assert!(!c.capabilities.network);
        assert_eq!(
            c.capabilities
                .environment
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            ["A", "B"]
        );
    }

    #[test]
    fn no_policy_passes_the_host_deadlines() {
        let (c, notes) = ceilings(
            "[deadlines]\nrender = 60000\ncommand = 3600000\ncancel_grace = 5000\nrequest = 30000",
        );
        assert_eq!(c.deadlines.render, Duration::from_millis(400));
        assert_eq!(c.deadlines.command, Duration::from_millis(1_799_000));
        assert_eq!(c.deadlines.cancel_grace, Duration::from_millis(1_500));
        assert_eq!(c.deadlines.request, Duration::from_millis(29_000));
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("deadlines.render = 60000") && n.contains("using 400 ms")),
            "{notes:?}"
        );
    }
}
