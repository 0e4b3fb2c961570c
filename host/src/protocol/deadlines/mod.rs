//! How long each kind of request may run before the shim answers for it.
//!
//! The host gives up on a request at its own deadline, cancels it, and kills
//! the whole extension if no answer follows within 2 s
//! (docs/protocol.md#deadlines).
//! The shim therefore stops a guest a little *before* each host deadline and
//! answers itself, so one slow call never costs the extension.
//!
//! The extension may ask for other deadlines (`--deadline-ms`, its metadata
//! section), but never for more than the user's ceiling (`crate::policy`),
//! and no ceiling, not even the user's, goes past the host's own deadline
//! minus a margin ([`Bound::cap`]).

use std::time::Duration;

/// The kinds of work with their own deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Command,
    BeforePrompt,
    AfterResponse,
    /// `before_tool_call`, `after_tool_call`, `provider_retry`: the ordinary
    /// request deadline.
    Hook,
    BeforePersistence,
    PostMutation,
    /// `cache_warming_decision` (API 0.4).
    CacheWarming,
    Context,
    Status,
    Render,
    Menu,
    Lifecycle,
}

mod per_name;

per_name::per_name! {

    /// Ordinary requests: the host waits 30 s; we answer at 29 s.
    pub request,
    /// Commands: 29 s like other requests. Commands the user starts from the
    /// options menu may run 30 min on the host, but the shim cannot tell
    /// them apart, so the conservative choice keeps the extension alive;
    /// the user's policy may raise it for long commands.
    pub command,
    /// `before_prompt`: host 5 s.
    pub before_prompt,
    /// `after_response`: host 2 s.
    pub after_response,
    /// `before_persistence`: host 200 ms for all such hooks together.
    pub before_persistence,
    /// `post_mutation`: host 250 ms.
    pub post_mutation,
    /// `cache_warming_decision`: host 200 ms per process.
    pub cache_warming,
    /// `tool/render`: host 500 ms.
    pub render,
    /// `menu/collect`: host 5 s.
    pub menu,
    /// A lifecycle handler (never answered; the host's delivery budget is
    /// 250 ms). A handler that runs longer holds up the primary instance,
    /// so it is stopped after this.
    pub lifecycle,
    /// How long a cancelled guest may keep running before it is interrupted
    /// and its instance replaced (the SDK's grace; the host allows 2 s).
    pub cancel_grace,
}

/// Per-kind deadlines.
pub type Deadlines = PerName<Duration>;

/// What bounds one deadline: its default, the ceiling when the user has
/// no policy, and the cap no policy can pass, each from the host fact in
/// `host`.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// The name `--deadline-ms`, the metadata section and the policy file
    /// use.
    pub name: &'static str,
    pub default: Duration,
    /// The built-in ceiling.
    pub ceiling: Duration,
    /// The ceiling even a user's policy cannot raise.
    pub cap: Duration,
    /// The host's own deadline that `cap` stays under.
    pub host: &'static str,
}

const fn ms(value: u64) -> Duration {
    Duration::from_millis(value)
}

/// One bound per deadline, in the order of [`NAMES`]. Each default is the
/// host's deadline minus a margin for the answer to reach it.
const BOUNDS: [Bound; 11] = [
    Bound {
        name: "request",
        default: ms(29_000),
        ceiling: ms(29_000),
        cap: ms(29_000),
        host: "octet gives up on a request after 30 s",
    },
    Bound {
        name: "command",
        default: ms(29_000),
        ceiling: ms(29_000),
        // Attended menu commands may run 30 min on the host; an ordinary
        // command past 30 s is cancelled by the host and answered within
        // the cancel grace, so a longer deadline cannot cost the process.
        cap: ms(1_799_000),
        host: "octet gives up on a command after 30 s, or after 30 min when the user started it from the options menu",
    },
    Bound {
        name: "before_prompt",
        default: ms(4_500),
        ceiling: ms(4_500),
        cap: ms(4_500),
        host: "octet waits 5 s for before_prompt",
    },
    Bound {
        name: "after_response",
        default: ms(1_750),
        ceiling: ms(1_750),
        cap: ms(1_750),
        host: "octet waits 2 s for after_response",
    },
    Bound {
        name: "before_persistence",
        default: ms(150),
        ceiling: ms(150),
        cap: ms(150),
        host: "octet waits 200 ms for all before_persistence hooks together",
    },
    Bound {
        name: "post_mutation",
        default: ms(200),
        ceiling: ms(200),
        cap: ms(200),
        host: "octet waits 250 ms for post_mutation",
    },
    Bound {
        name: "cache_warming",
        default: ms(150),
        ceiling: ms(150),
        cap: ms(150),
        host: "octet waits 200 ms for cache_warming_decision",
    },
    Bound {
        name: "render",
        default: ms(400),
        ceiling: ms(400),
        cap: ms(400),
        host: "octet waits 500 ms for tool/render",
    },
    Bound {
        name: "menu",
        default: ms(4_500),
        ceiling: ms(4_500),
        cap: ms(4_500),
        host: "octet waits 5 s for menu/collect",
    },
    Bound {
        name: "lifecycle",
        default: ms(2_000),
        ceiling: ms(2_000),
        // A handler holds the primary instance, which serves requests the
        // host waits at most 30 s for.
        cap: ms(29_000),
        host: "a lifecycle handler holds up the requests queued behind it, which octet gives up on after 30 s",
    },
    Bound {
        name: "cancel_grace",
        default: ms(250),
        ceiling: ms(1_000),
        // The answer to a cancelled request must reach the host within 2 s;
        // half a second is left for interrupting the guest and writing it.
        cap: ms(1_500),
        host: "octet kills the extension 2 s after cancelling a request that is not answered",
    },
];

/// The bound of the deadline `name` (`tool` is an alias of `request`).
pub fn bound(name: &str) -> Option<&'static Bound> {
    let name = if name == "tool" { "request" } else { name };
    BOUNDS.iter().find(|bound| bound.name == name)
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines::from_fn(|bound| bound.default)
    }
}

impl Deadlines {
    /// Deadlines with each value chosen from its bound.
    pub fn from_fn(mut value: impl FnMut(&Bound) -> Duration) -> Deadlines {
        PerName::build(|name| {
            let bound = bound(name).expect("every name has a bound (tested)");
            value(bound)
        })
    }

    /// The built-in ceilings: what applies without a policy file.
    pub fn built_in_ceilings() -> Deadlines {
        Deadlines::from_fn(|bound| bound.ceiling)
    }

    pub fn for_kind(&self, kind: Kind) -> Duration {
        self.get(Deadlines::name(kind))
    }

    /// The deadline called `name` (one of [`NAMES`]; anything else reads as
    /// `request`).
    pub fn get(&self, name: &str) -> Duration {
        self.value(name).copied().unwrap_or(self.request)
    }

    /// Sets the deadline of a known bound.
    pub fn put(&mut self, bound: &Bound, value: Duration) {
        if let Some(slot) = self.value_mut(bound.name) {
            *slot = value;
        }
    }

    /// Parses `name=ms` (as `--deadline-ms` takes it) into its bound and
    /// value. Names: [`NAMES`], plus `tool` for `request`.
    pub fn parse(setting: &str) -> Result<(&'static Bound, Duration), String> {
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| format!("--deadline-ms expects NAME=MILLISECONDS, got {setting:?}"))?;
        let ms: u64 = value.trim().parse().map_err(|_| {
            format!("--deadline-ms {name}: {value:?} is not a whole number of milliseconds")
        })?;
        if ms == 0 {
            return Err(format!("--deadline-ms {name}: must be at least 1 ms"));
        }
        let bound = bound(name.trim()).ok_or_else(|| {
            format!(
                "--deadline-ms: unknown deadline {:?} (known: {})",
                name.trim(),
                NAMES.join(", ")
            )
        })?;
        Ok((bound, Duration::from_millis(ms)))
    }

    /// Applies `name=ms` as given, without any ceiling (tests and author
    /// tools; `run` goes through `crate::policy`).
    pub fn set(&mut self, setting: &str) -> Result<(), String> {
        let (bound, value) = Deadlines::parse(setting)?;
        self.put(bound, value);
        Ok(())
    }

    /// The deadline name of `kind`.
    pub fn name(kind: Kind) -> &'static str {
        match kind {
            Kind::Tool | Kind::Hook | Kind::Context | Kind::Status => "request",
            Kind::Command => "command",
            Kind::BeforePrompt => "before_prompt",
            Kind::AfterResponse => "after_response",
            Kind::BeforePersistence => "before_persistence",
            Kind::PostMutation => "post_mutation",
            Kind::CacheWarming => "cache_warming",
            Kind::Render => "render",
            Kind::Menu => "menu",
            Kind::Lifecycle => "lifecycle",
        }
    }

    /// Where the user sets the deadline of `kind`, for error messages: the
    /// policy key, never a flag the extension controls.
    pub fn flag(kind: Kind) -> &'static str {
        match kind {
            Kind::Tool | Kind::Hook | Kind::Context | Kind::Status => {
                "deadlines.request in ~/.config/octet-wasm/policy.toml"
            }
            Kind::Command => "deadlines.command in ~/.config/octet-wasm/policy.toml",
            Kind::BeforePrompt => "deadlines.before_prompt in ~/.config/octet-wasm/policy.toml",
            Kind::AfterResponse => "deadlines.after_response in ~/.config/octet-wasm/policy.toml",
            Kind::BeforePersistence => {
                "deadlines.before_persistence in ~/.config/octet-wasm/policy.toml"
            }
            Kind::PostMutation => "deadlines.post_mutation in ~/.config/octet-wasm/policy.toml",
            Kind::CacheWarming => "deadlines.cache_warming in ~/.config/octet-wasm/policy.toml",
            Kind::Render => "deadlines.render in ~/.config/octet-wasm/policy.toml",
            Kind::Menu => "deadlines.menu in ~/.config/octet-wasm/policy.toml",
            Kind::Lifecycle => "deadlines.lifecycle in ~/.config/octet-wasm/policy.toml",
        }
    }

    /// Whether and how the deadline of `kind` can go past `limit`, as a
    /// clause for the answer that reports it.
    pub fn advice(kind: Kind, limit: Duration) -> String {
        let Some(bound) = bound(Deadlines::name(kind)) else {
            return String::new();
        };
        if limit >= bound.cap {
            format!("the longest octet-wasm allows: {}", bound.host)
        } else {
            format!(
                "the user can raise it up to {} ms with `{}`",
                bound.cap.as_millis(),
                Deadlines::flag(kind)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_settings() {
        let mut d = Deadlines::default();
        d.set("render=250").unwrap();
        assert_eq!(d.for_kind(Kind::Render), Duration::from_millis(250));
        d.set("tool=1000").unwrap();
        assert_eq!(d.request, Duration::from_millis(1000));
        let err = d.set("render").unwrap_err();
        assert!(err.contains("expects NAME=MILLISECONDS"), "{err}");
        let err = d.set("render=0").unwrap_err();
        assert!(err.contains("must be at least 1 ms"), "{err}");
        let err = d.set("bogus=5").unwrap_err();
        assert!(err.contains("unknown deadline \"bogus\""), "{err}");
        let err = d.set("render=-5").unwrap_err();
        assert!(
            err.contains("is not a whole number of milliseconds"),
            "{err}"
        );
    }

    #[test]
    fn defaults_answer_before_the_host_gives_up() {
        let d = Deadlines::default();
        assert!(d.render < Duration::from_millis(500));
        assert!(d.before_persistence < Duration::from_millis(200));
        assert!(d.request < Duration::from_secs(30));
        assert_eq!(d, Deadlines::from_fn(|b| b.default));
    }

    #[test]
    fn every_name_has_a_bound_under_its_cap() {
        assert_eq!(BOUNDS.map(|b| b.name), NAMES);
        for bound in &BOUNDS {
            assert!(bound.default <= bound.ceiling, "{}", bound.name);
            assert!(bound.ceiling <= bound.cap, "{}", bound.name);
        }
        let cap = |name| bound(name).unwrap().cap;
        // Only commands (attended menu commands: 30 min) and lifecycle
        // handlers may pass the host's ordinary 30 s.
        assert!(cap("command") < Duration::from_secs(30 * 60));
        assert!(cap("cancel_grace") < Duration::from_secs(2));
        assert!(cap("render") < Duration::from_millis(500));
        assert!(cap("request") < Duration::from_secs(30));
    }

    #[test]
    fn errors_name_the_policy_key_and_whether_it_can_rise() {
        for kind in [Kind::Tool, Kind::Render, Kind::Command, Kind::Lifecycle] {
            assert!(Deadlines::flag(kind).contains("policy.toml"));
            assert!(!Deadlines::flag(kind).contains("--"));
        }
        let at_cap = Deadlines::advice(Kind::Render, Duration::from_millis(400));
        assert_eq!(
            at_cap,
            "the longest octet-wasm allows: octet waits 500 ms for tool/render"
        );
        let below = Deadlines::advice(Kind::Render, Duration::from_millis(200));
        assert!(
            below.contains("up to 400 ms") && below.contains("deadlines.render in ~/.config"),
            "{below}"
        );
        let command = Deadlines::advice(Kind::Command, Duration::from_millis(29_000));
        assert!(command.contains("up to 1799000 ms"), "{command}");
    }
}
