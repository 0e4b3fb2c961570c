//! [`Extension`]: the registry an author's setup function fills in, and the
//! `describe` answer built from it.

use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::bindings::octet::extension::types as wit;
use crate::call::Call;
use crate::definition::{Command, Render, Tool};
use crate::error::{Error, Result};
use crate::handler::{
    Handler, IntoCommandResult, IntoContextItems, IntoMenu, IntoOutcome, IntoSegments, IntoStatus,
};
use crate::hook_result::IntoHookResult;
use crate::tool_result::IntoToolResult;
use crate::values::{LifecycleEvent, LifecycleKind};

/// The feature that carries tool prompt metadata (API 0.4).
const PROMPT_METADATA: &str = "tool_prompt_metadata_v1";

type Boxed<In, Out> = Box<dyn Fn(In, &Call) -> Result<Out>>;
pub(crate) type ToolFn = Boxed<String, wit::ToolResult>;
pub(crate) type CommandFn = Boxed<Vec<String>, wit::CommandResult>;
pub(crate) type HookFn = Boxed<String, wit::HookResult>;
pub(crate) type ContextFn = Boxed<Option<String>, Vec<wit::ContextItem>>;
pub(crate) type StatusFn = Boxed<String, Option<wit::StatusItem>>;
pub(crate) type RenderFn = Boxed<Render, Vec<wit::Segment>>;
pub(crate) type MenuFn = Boxed<(), Option<Value>>;
pub(crate) type LifecycleFn = Rc<dyn Fn(&LifecycleEvent) -> Result<()>>;
pub(crate) type OutcomeFn = Box<dyn Fn() -> Result<()>>;

/// Everything an extension offers, registered once per instance by the
/// setup function named in [`extension!`](crate::extension).
///
/// Each registration adds one entry to `describe` and its handler. The setup
/// function runs before `init` (the shim calls `describe` first, and author
/// tools call it offline), so it should only register: use
/// [`Extension::on_init`] for work that needs the host.
///
/// Registering the same tool, command, hook, status surface or renderer
/// twice is a programming error and panics, which the shim reports when it
/// loads the component.
pub struct Extension {
    name: String,
    pub(crate) tools: Vec<(Tool, ToolFn)>,
    /// Tools with a handler that are offered only once registered at run
    /// time (`tools_catalog`).
    pub(crate) dynamic_tools: Vec<(Tool, ToolFn)>,
    pub(crate) commands: Vec<(Command, CommandFn)>,
    pub(crate) hooks: Vec<(String, HookFn)>,
    pub(crate) context: Option<ContextFn>,
    pub(crate) status: Vec<(String, StatusFn)>,
    pub(crate) renderers: Vec<(String, RenderFn)>,
    pub(crate) menu: Option<MenuFn>,
    pub(crate) lifecycle: Vec<(LifecycleKind, LifecycleFn)>,
    pub(crate) init: Option<OutcomeFn>,
    pub(crate) shutdown: Option<OutcomeFn>,
    max_concurrency: u32,
    features: Vec<String>,
}

impl Extension {
    /// An empty registry; `name` is normally the crate name, filled in by
    /// [`extension!`](crate::extension).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            tools: Vec::new(),
            dynamic_tools: Vec::new(),
            commands: Vec::new(),
            hooks: Vec::new(),
            context: None,
            status: Vec::new(),
            renderers: Vec::new(),
            menu: None,
            lifecycle: Vec::new(),
            init: None,
            shutdown: None,
            max_concurrency: 1,
            features: Vec::new(),
        }
    }

    /// Overrides the extension's name (default: the crate's package name);
    /// it should equal the manifest's `name`.
    pub fn name(&mut self, name: impl Into<String>) -> &mut Self {
        self.name = name.into();
        self
    }

    /// Registers a tool. The handler receives the arguments deserialised into
    /// `Args` (any `serde::de::DeserializeOwned`, `serde_json::Value` to take
    /// them as they are); arguments that do not fit are answered `-32602`
    /// with serde's message, without calling the handler.
    pub fn tool<Args, Out, Marker>(
        &mut self,
        tool: Tool,
        handler: impl Handler<Args, Out, Marker>,
    ) -> &mut Self
    where
        Args: DeserializeOwned,
        Out: IntoToolResult,
    {
        assert_unique(
            self.tools.iter().map(|(t, _)| t.name()),
            tool.name(),
            "tool",
        );
        let run: ToolFn = Box::new(move |arguments, call| {
            let args = parse::<Args>(&arguments)?;
            handler.invoke(args, call).into_tool_result()?.into_wit()
        });
        self.tools.push((tool, run));
        self
    }

    /// Registers the handler of a tool that is not in the initial catalog:
    /// it is offered once [`tools_catalog::register_dynamic`](crate::tools_catalog::register_dynamic)
    /// (or [`tools_catalog::register`](crate::tools_catalog::register)) adds
    /// it at run time (API 0.2, `dynamic_tools`; declare it with
    /// [`Extension::uses_dynamic_tools`]). Arguments are handled as for
    /// [`Extension::tool`].
    pub fn dynamic_tool<Args, Out, Marker>(
        &mut self,
        tool: Tool,
        handler: impl Handler<Args, Out, Marker>,
    ) -> &mut Self
    where
        Args: DeserializeOwned,
        Out: IntoToolResult,
    {
        assert_unique(
            self.tools
                .iter()
                .chain(self.dynamic_tools.iter())
                .map(|(t, _)| t.name()),
            tool.name(),
            "tool",
        );
        let run: ToolFn = Box::new(move |arguments, call| {
            let args = parse::<Args>(&arguments)?;
            handler.invoke(args, call).into_tool_result()?.into_wit()
        });
        self.dynamic_tools.push((tool, run));
        self
    }

    /// Registers a slash command; the handler receives its arguments.
    pub fn command<Out, Marker>(
        &mut self,
        command: Command,
        handler: impl Handler<Vec<String>, Out, Marker>,
    ) -> &mut Self
    where
        Out: IntoCommandResult,
    {
        assert_unique(
            self.commands.iter().map(|(c, _)| c.name()),
            command.name(),
            "command",
        );
        let run: CommandFn =
            Box::new(move |arguments, call| handler.invoke(arguments, call).into_command_result());
        self.commands.push((command, run));
        self
    }

    /// Handles a hook (`before_prompt`, `before_tool_call`...). The payload
    /// is deserialised into `Payload` (`serde_json::Value` to take it as it
    /// is); a payload that does not fit is answered `-32602`. Hooks the
    /// manifest declares without a handler get the default result from the
    /// shim without calling the guest.
    pub fn hook<Payload, Out, Marker>(
        &mut self,
        hook: impl Into<String>,
        handler: impl Handler<Payload, Out, Marker>,
    ) -> &mut Self
    where
        Payload: DeserializeOwned,
        Out: IntoHookResult,
    {
        let hook = hook.into();
        assert_unique(self.hooks.iter().map(|(h, _)| h.as_str()), &hook, "hook");
        let run: HookFn = Box::new(move |payload, call| {
            let payload = parse::<Payload>(&payload)?;
            handler.invoke(payload, call).into_hook_result()?.into_wit()
        });
        self.hooks.push((hook, run));
        self
    }

    /// Answers `context/collect`; the handler receives the prompt, if any.
    pub fn context<Out, Marker>(
        &mut self,
        handler: impl Handler<Option<String>, Out, Marker>,
    ) -> &mut Self
    where
        Out: IntoContextItems,
    {
        assert!(
            self.context.is_none(),
            "octet_guest: the context handler is registered twice"
        );
        self.context = Some(Box::new(move |prompt, call| {
            handler.invoke(prompt, call).into_context_items()
        }));
        self
    }

    /// Answers `status/collect` for `surface` (`status`, `header` or
    /// `footer`); the handler receives the surface name. Register the same
    /// handler once per surface it serves.
    pub fn status<Out, Marker>(
        &mut self,
        surface: impl Into<String>,
        handler: impl Handler<String, Out, Marker>,
    ) -> &mut Self
    where
        Out: IntoStatus,
    {
        let surface = surface.into();
        assert_unique(
            self.status.iter().map(|(s, _)| s.as_str()),
            &surface,
            "status surface",
        );
        let run: StatusFn =
            Box::new(move |surface, call| handler.invoke(surface, call).into_status());
        self.status.push((surface, run));
        self
    }

    /// Renders calls of `tool` for the frontend.
    pub fn renderer<Out, Marker>(
        &mut self,
        tool: impl Into<String>,
        handler: impl Handler<Render, Out, Marker>,
    ) -> &mut Self
    where
        Out: IntoSegments,
    {
        let tool = tool.into();
        assert_unique(
            self.renderers.iter().map(|(t, _)| t.as_str()),
            &tool,
            "renderer",
        );
        let run: RenderFn =
            Box::new(move |request, call| handler.invoke(request, call).into_segments());
        self.renderers.push((tool, run));
        self
    }

    /// Answers `menu/collect` (API 0.2, manifest `menu = true`) with the
    /// complete menu as JSON. Build it from cached state: the host waits at
    /// most 5 s.
    pub fn menu<Out, F>(&mut self, handler: F) -> &mut Self
    where
        F: Fn(&Call) -> Out + 'static,
        Out: IntoMenu,
    {
        assert!(
            self.menu.is_none(),
            "octet_guest: the menu handler is registered twice"
        );
        self.menu = Some(Box::new(move |(), call| handler(call).into_menu()));
        self
    }

    /// Observes the lifecycle events in `kinds` (e.g. `[LifecycleKind::TurnStarted]`
    /// or `LifecycleKind::ALL`). Adds the `lifecycle_events` feature and
    /// subscribes to exactly the kinds that have a handler. An error the
    /// handler returns is logged: lifecycle events are never answered.
    pub fn on_lifecycle<F, Out>(
        &mut self,
        kinds: impl IntoIterator<Item = LifecycleKind>,
        handler: F,
    ) -> &mut Self
    where
        F: Fn(&LifecycleEvent) -> Out + 'static,
        Out: IntoOutcome,
    {
        let run: LifecycleFn = Rc::new(move |event| handler(event).into_outcome());
        for kind in kinds {
            self.lifecycle.push((kind, Rc::clone(&run)));
        }
        self
    }

    /// Runs once per instance at `init`, after [`api_version`](crate::api_version)
    /// and [`features`](crate::features) are known. An error fails the
    /// instance's start.
    pub fn on_init<F, Out>(&mut self, handler: F) -> &mut Self
    where
        F: Fn() -> Out + 'static,
        Out: IntoOutcome,
    {
        self.init = Some(Box::new(move || handler().into_outcome()));
        self
    }

    /// Runs at graceful shutdown, after in-flight requests were drained or
    /// cancelled (e.g. to clear or flush state).
    pub fn on_shutdown<F, Out>(&mut self, handler: F) -> &mut Self
    where
        F: Fn() -> Out + 'static,
        Out: IntoOutcome,
    {
        self.shutdown = Some(Box::new(move || handler().into_outcome()));
        self
    }

    /// Declares an optional API 0.2 protocol feature the extension uses. The
    /// shim negotiates exactly the declared features (plus the two required
    /// ones it always speaks) and refuses the services of the others.
    pub fn uses_feature(&mut self, feature: impl Into<String>) -> &mut Self {
        let feature = feature.into();
        if !self.features.contains(&feature) {
            self.features.push(feature);
        }
        self
    }

    /// Declares `request_progress`, needed by [`progress`](crate::progress).
    pub fn uses_progress(&mut self) -> &mut Self {
        self.uses_feature("request_progress")
    }

    /// Declares `request_progress` and `progress_decoration`, needed by
    /// [`progress_decoration`](crate::progress_decoration).
    pub fn uses_progress_decoration(&mut self) -> &mut Self {
        self.uses_progress().uses_feature("progress_decoration")
    }

    /// Declares `artifacts`, needed by
    /// [`artifacts::publish`](crate::artifacts::publish) and image/audio parts.
    pub fn uses_artifacts(&mut self) -> &mut Self {
        self.uses_feature("artifacts")
    }

    /// Declares `dynamic_tools`, needed by [`tools_catalog`](crate::tools_catalog).
    pub fn uses_dynamic_tools(&mut self) -> &mut Self {
        self.uses_feature("dynamic_tools")
    }

    /// Declares `secrets`, needed by [`secrets::get`](crate::secrets::get)
    /// (the host offers it only with a non-empty `[capabilities] secrets`).
    pub fn uses_secrets(&mut self) -> &mut Self {
        self.uses_feature("secrets")
    }

    /// Declares `policy_intents`, needed by [`policy::evaluate`](crate::policy::evaluate).
    pub fn uses_policy(&mut self) -> &mut Self {
        self.uses_feature("policy_intents")
    }

    /// Declares `agent_sessions`, needed by [`agents`](crate::agents) (the
    /// host offers it only where the child-session service is bound).
    pub fn uses_agents(&mut self) -> &mut Self {
        self.uses_feature("agent_sessions")
    }

    /// Declares `agent_sessions` and `agent_model_selection_v1` (model
    /// selection and [`agents::list_models`](crate::agents::list_models)).
    pub fn uses_agent_model_selection(&mut self) -> &mut Self {
        self.uses_agents().uses_feature("agent_model_selection_v1")
    }

    /// Declares `tool_composition_v1` (API 0.4), needed by
    /// [`composition`](crate::composition).
    pub fn uses_composition(&mut self) -> &mut Self {
        self.uses_feature("tool_composition_v1")
    }

    /// Declares `policy_intents` and `approvals` (approval tokens).
    pub fn uses_approvals(&mut self) -> &mut Self {
        self.uses_policy().uses_feature("approvals")
    }

    /// How many requests the extension may serve at once (default 1). Above
    /// 1 the shim runs tool calls on a pool of up to `n` separate instances,
    /// each with its own memory: state kept in memory is then per instance.
    pub fn max_concurrency(&mut self, n: u32) -> &mut Self {
        self.max_concurrency = n.max(1);
        self
    }

    /// The `describe` answer: registrations in the order they were made.
    /// `lifecycle_events` is added to the features when a lifecycle handler
    /// exists, so a guest never subscribes to events it does not handle, and
    /// `tool_prompt_metadata_v1` when a tool (static or dynamic) carries
    /// prompt metadata, so tools registered at run time keep theirs.
    pub(crate) fn describe(&self) -> wit::Description {
        let mut lifecycle: Vec<LifecycleKind> = Vec::new();
        for (kind, _) in &self.lifecycle {
            if !lifecycle.contains(kind) {
                lifecycle.push(*kind);
            }
        }
        let mut features = self.features.clone();
        if !lifecycle.is_empty() && !features.iter().any(|f| f == "lifecycle_events") {
            features.push("lifecycle_events".to_owned());
        }
        let prompt_metadata = self
            .tools
            .iter()
            .chain(self.dynamic_tools.iter())
            .any(|(tool, _)| tool.has_prompt_metadata());
        if prompt_metadata && !features.iter().any(|f| f == PROMPT_METADATA) {
            features.push(PROMPT_METADATA.to_owned());
        }
        wit::Description {
            name: self.name.clone(),
            tools: self.tools.iter().map(|(tool, _)| tool.to_wit()).collect(),
            commands: self
                .commands
                .iter()
                .map(|(command, _)| command.to_wit())
                .collect(),
            hooks: self.hooks.iter().map(|(hook, _)| hook.clone()).collect(),
            context: self.context.is_some(),
            status_surfaces: self
                .status
                .iter()
                .map(|(surface, _)| surface.clone())
                .collect(),
            renderers: self
                .renderers
                .iter()
                .map(|(tool, _)| tool.clone())
                .collect(),
            menu: self.menu.is_some(),
            lifecycle,
            max_concurrency: self.max_concurrency,
            features,
        }
    }
}

/// Deserialises a JSON argument or payload; a mismatch is the caller's
/// fault, so it is `invalid-params` with serde's message.
fn parse<T: DeserializeOwned>(json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|error| Error::invalid_params(error.to_string()))
}

fn assert_unique<'a>(mut existing: impl Iterator<Item = &'a str>, name: &str, what: &str) {
    assert!(
        !existing.any(|n| n == name),
        "octet_guest: {what} `{name}` is registered twice"
    );
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
