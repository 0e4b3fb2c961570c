//! The component's exports: each one finds its handler in the instance's
//! registry and converts between WIT values and the SDK's types.

use std::cell::OnceCell;
use std::marker::PhantomData;
use std::rc::Rc;

use crate::bindings::exports::octet::extension::guest::Guest;
use crate::bindings::octet::extension::types as wit;
use crate::call::{Call, store_init};
use crate::definition::Render;
use crate::error::{Error, Result};
use crate::host::{LogLevel, log};
use crate::registry::Extension;

/// The author's setup function, as [`extension!`](crate::extension) hands it
/// to the SDK.
#[doc(hidden)]
pub trait Setup {
    /// The default extension name (the author crate's package name).
    const NAME: &'static str;
    /// Fills in the registry.
    fn setup(extension: &mut Extension);
}

/// The type whose `Guest` implementation is exported; `S` is the author's
/// setup.
#[doc(hidden)]
pub struct Exported<S>(PhantomData<S>);

thread_local! {
    /// The registry, built on first use. Wasm guests are single-threaded and
    /// every instance has its own memory, so this is per instance.
    static REGISTRY: OnceCell<Rc<Extension>> = const { OnceCell::new() };
}

/// The instance's registry. Handed out as an `Rc` so no borrow is held
/// while a handler runs.
fn registry<S: Setup>() -> Rc<Extension> {
    REGISTRY.with(|cell| {
        Rc::clone(cell.get_or_init(|| {
            let mut extension = Extension::new(S::NAME);
            S::setup(&mut extension);
            Rc::new(extension)
        }))
    })
}

/// The instance's registry once it is built (for the service wrappers).
pub(crate) fn current_registry() -> Option<Rc<Extension>> {
    REGISTRY.with(|cell| cell.get().cloned())
}

fn unknown(what: &str, name: &str) -> Error {
    Error::rpc(-32601, format!("unknown {what}: {name}"), None)
}

fn to_wit<T>(result: Result<T>) -> std::result::Result<T, wit::Error> {
    result.map_err(Error::into_wit)
}

impl<S: Setup> Guest for Exported<S> {
    fn describe() -> wit::Description {
        registry::<S>().describe()
    }

    fn init(params: wit::InitParams) -> std::result::Result<(), wit::Error> {
        store_init(params);
        let registry = registry::<S>();
        to_wit(registry.init.as_ref().map_or(Ok(()), |init| init()))
    }

    fn call_tool(
        call: wit::ToolCall,
        cx: wit::CallContext,
    ) -> std::result::Result<wit::ToolResult, wit::Error> {
        let registry = registry::<S>();
        let cx = Call::from_wit(cx);
        to_wit(
            match registry
                .tools
                .iter()
                .chain(registry.dynamic_tools.iter())
                .find(|(tool, _)| tool.name() == call.name)
            {
                Some((_, run)) => run(call.arguments, &cx),
                None => Err(unknown("tool", &call.name)),
            },
        )
    }

    fn execute_command(
        name: String,
        arguments: Vec<String>,
        cx: wit::CallContext,
    ) -> std::result::Result<wit::CommandResult, wit::Error> {
        let registry = registry::<S>();
        let cx = Call::from_wit(cx);
        to_wit(
            match registry
                .commands
                .iter()
                .find(|(command, _)| command.name() == name)
            {
                Some((_, run)) => run(arguments, &cx),
                None => Err(unknown("command", &name)),
            },
        )
    }

    fn run_hook(
        hook: String,
        payload: String,
        cx: wit::CallContext,
    ) -> std::result::Result<wit::HookResult, wit::Error> {
        let registry = registry::<S>();
        let cx = Call::from_wit(cx);
        to_wit(
            match registry.hooks.iter().find(|(name, _)| *name == hook) {
                Some((_, run)) => run(payload, &cx),
                None => crate::HookResult::default().into_wit(),
            },
        )
    }

    fn collect_context(
        prompt: Option<String>,
        cx: wit::CallContext,
    ) -> std::result::Result<Vec<wit::ContextItem>, wit::Error> {
        let registry = registry::<S>();
        let cx = Call::from_wit(cx);
        to_wit(
            registry
                .context
                .as_ref()
                .map_or(Ok(Vec::new()), |run| run(prompt, &cx)),
        )
    }

    fn collect_status(
        surface: String,
        cx: wit::CallContext,
    ) -> std::result::Result<Option<wit::StatusItem>, wit::Error> {
        let registry = registry::<S>();
        let cx = Call::from_wit(cx);
        to_wit(
            match registry.status.iter().find(|(name, _)| *name == surface) {
                Some((_, run)) => run(surface, &cx),
                None => Ok(None),
            },
        )
    }

    fn render_tool(
        request: wit::RenderRequest,
        cx: wit::CallContext,
    ) -> std::result::Result<Vec<wit::Segment>, wit::Error> {
        let registry = registry::<S>();
        let cx = Call::from_wit(cx);
        to_wit(
            match registry
                .renderers
                .iter()
                .find(|(tool, _)| *tool == request.name)
            {
                Some((_, run)) => run(Render::from_wit(request), &cx),
                None => Err(unknown("renderer", &request.name)),
            },
        )
    }

    fn collect_menu(cx: wit::CallContext) -> std::result::Result<Option<String>, wit::Error> {
        let registry = registry::<S>();
        let cx = Call::from_wit(cx);
        let menu = registry.menu.as_ref().map_or(Ok(None), |run| run((), &cx));
        to_wit(menu.map(|menu| menu.map(|value| value.to_string())))
    }

    fn on_lifecycle(event: wit::LifecycleEvent) {
        let registry = registry::<S>();
        for (_, run) in registry
            .lifecycle
            .iter()
            .filter(|(kind, _)| *kind == event.kind)
        {
            if let Err(error) = run(&event) {
                let message = format!("{} handler failed: {error}", event.kind.method());
                log(LogLevel::Warning, &message, None);
            }
        }
    }

    fn on_shutdown() -> std::result::Result<(), wit::Error> {
        let registry = registry::<S>();
        to_wit(
            registry
                .shutdown
                .as_ref()
                .map_or(Ok(()), |shutdown| shutdown()),
        )
    }
}
