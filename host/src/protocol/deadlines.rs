//! How long each kind of request may run before the shim answers for it.
//!
//! The host gives up on a request at its own deadline, cancels it, and kills
//! the whole extension if no answer follows within 2 s (protocol-core §7.3).
//! The shim therefore stops a guest a little *before* each host deadline and
//! answers itself, so one slow call never costs the extension.

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
    Context,
    Status,
    Render,
    Menu,
    Lifecycle,
}

/// Per-kind deadlines.
#[derive(Debug, Clone)]
pub struct Deadlines {
    /// Ordinary requests: the host waits 30 s; we answer at 29 s.
    pub request: Duration,
    /// Commands: 29 s like other requests. Commands the user starts from the
    /// options menu may run 30 min on the host, but the shim cannot tell
    /// them apart, so the conservative choice keeps the extension alive;
    /// raise it with `--deadline-ms command=...` for long commands.
    pub command: Duration,
    /// `before_prompt`: host 5 s.
    pub before_prompt: Duration,
    /// `after_response`: host 2 s.
    pub after_response: Duration,
    /// `before_persistence`: host 200 ms for all such hooks together.
    pub before_persistence: Duration,
    /// `post_mutation`: host 250 ms.
    pub post_mutation: Duration,
    /// `tool/render`: host 500 ms.
    pub render: Duration,
    /// `menu/collect`: host 5 s.
    pub menu: Duration,
    /// A lifecycle handler (never answered; the host's delivery budget is
    /// 250 ms). A handler that runs longer holds up the primary instance,
    /// so it is stopped after this.
    pub lifecycle: Duration,
    /// How long a cancelled guest may keep running before it is interrupted
    /// and its instance replaced (the SDK's grace; the host allows 2 s).
    pub cancel_grace: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            request: Duration::from_millis(29_000),
            command: Duration::from_millis(29_000),
            before_prompt: Duration::from_millis(4_500),
            after_response: Duration::from_millis(1_750),
            before_persistence: Duration::from_millis(150),
            post_mutation: Duration::from_millis(200),
            render: Duration::from_millis(400),
            menu: Duration::from_millis(4_500),
            lifecycle: Duration::from_millis(2_000),
            cancel_grace: Duration::from_millis(250),
        }
    }
}

impl Deadlines {
    pub fn for_kind(&self, kind: Kind) -> Duration {
        match kind {
            Kind::Tool | Kind::Hook | Kind::Context | Kind::Status => self.request,
            Kind::Command => self.command,
            Kind::BeforePrompt => self.before_prompt,
            Kind::AfterResponse => self.after_response,
            Kind::BeforePersistence => self.before_persistence,
            Kind::PostMutation => self.post_mutation,
            Kind::Render => self.render,
            Kind::Menu => self.menu,
            Kind::Lifecycle => self.lifecycle,
        }
    }

    /// Applies `name=ms` from the command line. Names: `request`, `tool`
    /// (alias of request), `command`, `before_prompt`, `after_response`,
    /// `before_persistence`, `post_mutation`, `render`, `menu`, `lifecycle`,
    /// `cancel_grace`.
    pub fn set(&mut self, setting: &str) -> Result<(), String> {
        let (name, value) = setting
            .split_once('=')
            .ok_or_else(|| format!("--deadline-ms expects NAME=MILLISECONDS, got {setting:?}"))?;
        let ms: u64 = value.trim().parse().map_err(|_| {
            format!("--deadline-ms {name}: {value:?} is not a whole number of milliseconds")
        })?;
        if ms == 0 {
            return Err(format!("--deadline-ms {name}: must be at least 1 ms"));
        }
        let duration = Duration::from_millis(ms);
        let slot = match name.trim() {
            "request" | "tool" => &mut self.request,
            "command" => &mut self.command,
            "before_prompt" => &mut self.before_prompt,
            "after_response" => &mut self.after_response,
            "before_persistence" => &mut self.before_persistence,
            "post_mutation" => &mut self.post_mutation,
            "render" => &mut self.render,
            "menu" => &mut self.menu,
            "lifecycle" => &mut self.lifecycle,
            "cancel_grace" => &mut self.cancel_grace,
            other => {
                return Err(format!(
                    "--deadline-ms: unknown deadline {other:?} (known: request, command, before_prompt, after_response, before_persistence, post_mutation, render, menu, lifecycle, cancel_grace)"
                ));
            }
        };
        *slot = duration;
        Ok(())
    }

    /// The flag that raises the deadline of `kind`, for error messages.
    pub fn flag(kind: Kind) -> &'static str {
        match kind {
            Kind::Tool | Kind::Hook | Kind::Context | Kind::Status => "--deadline-ms request=MS",
            Kind::Command => "--deadline-ms command=MS",
            Kind::BeforePrompt => "--deadline-ms before_prompt=MS",
            Kind::AfterResponse => "--deadline-ms after_response=MS",
            Kind::BeforePersistence => "--deadline-ms before_persistence=MS",
            Kind::PostMutation => "--deadline-ms post_mutation=MS",
            Kind::Render => "--deadline-ms render=MS",
            Kind::Menu => "--deadline-ms menu=MS",
            Kind::Lifecycle => "--deadline-ms lifecycle=MS",
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
        assert!(d.set("render").is_err());
        assert!(d.set("render=0").is_err());
        assert!(d.set("bogus=5").is_err());
    }

    #[test]
    fn defaults_answer_before_the_host_gives_up() {
        let d = Deadlines::default();
        assert!(d.render < Duration::from_millis(500));
        assert!(d.before_persistence < Duration::from_millis(200));
        assert!(d.request < Duration::from_secs(30));
    }
}
