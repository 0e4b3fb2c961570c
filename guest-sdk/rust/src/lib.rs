//! Write octet extensions in Rust that octet-wasm runs as sandboxed
//! WebAssembly components.
//!
//! An extension is a setup function that registers handlers, and one macro
//! that exports it:
//!
//! ```ignore
//! use octet_guest::prelude::*;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Args { name: String }
//!
//! fn setup(ext: &mut Extension) {
//!     ext.tool(Tool::new("hello", "Greet someone"), |args: Args| format!("Hello, {}!", args.name));
//! }
//!
//! octet_guest::extension!(setup);
//! ```
//!
//! Build it as a `cdylib` with `cargo build --target wasm32-wasip2`: the
//! output is already a component, ready for `octet-wasm run`.
//!
//! What the SDK does:
//! - builds the registry once per instance (the setup function runs on the
//!   first export call, which is `describe`) and answers `describe` from it:
//!   tools, commands, hooks, context, status surfaces, renderers, menu,
//!   lifecycle kinds, concurrency and features;
//! - deserialises tool arguments and hook payloads into the handler's type
//!   (a mismatch is `-32602`), converts what handlers return, and maps
//!   [`Error`] to the protocol;
//! - wraps the host's imports as plain functions ([`notify`], [`confirm`],
//!   [`progress`], [`log`], [`is_cancelled`], [`sleep`]...).
//!
//! What it leaves to the shim: the protocol's bounds (names, sizes, parts,
//! schemas), negotiation with the host, and everything about the wire.
//!
//! Features are explicit: declare what you use with
//! [`Extension::uses_feature`] (or [`Extension::uses_progress`],
//! [`Extension::uses_progress_decoration`]). The SDK adds two by itself:
//! `lifecycle_events` when a lifecycle handler is registered, so the
//! subscription always matches the handlers, and `tool_prompt_metadata_v1`
//! (API 0.4) when a tool carries prompt metadata. The two required features
//! (`request_cancellation`, `content_parts`) are always spoken by the shim.
//!
//! State: handlers are `'static` closures, so keep state in an
//! `Rc<RefCell<..>>` captured by the handlers that share it. It lives as long
//! as the instance: across requests, but not across a trap (the shim then
//! replaces the instance) nor between the instances of a pool
//! ([`Extension::max_concurrency`] above 1).

#![warn(missing_docs)]

pub mod agents;
pub mod artifacts;
#[doc(hidden)]
#[allow(missing_docs)]
pub mod bindings;
mod call;
mod cancel;
pub mod composition;
mod definition;
mod dispatch;
mod error;
mod handler;
mod hook_result;
pub mod hooks;
mod host;
pub mod policy;
pub mod presentation;
mod registry;
pub mod secrets;
mod tool_result;
pub mod tools_catalog;
mod values;

pub use call::{
    Call, ResourceOwner, api_version, features, guest_workspace, has_feature, initialize_params,
};
pub use cancel::{cancellation_reason, check_cancelled, is_cancelled, sleep};
pub use definition::{Command, Render, Tool};
pub use error::{Error, Result};
pub use handler::{
    Handler, IntoCommandResult, IntoContextItems, IntoMenu, IntoOutcome, IntoSegments, IntoStatus,
};
pub use hook_result::{
    CacheWarmingAction, HookResult, IntoHookResult, RescanDecision, RetryDecision,
};
pub use host::{
    LogLevel, confirm, contribute_context, contribute_status, log, notify, notify_titled, progress,
    progress_decoration, progress_output, request_input, send_notification,
};
pub use registry::Extension;
pub use serde_json::{Value, json};
pub use tool_result::{AudioPart, ContentPart, ImagePart, IntoToolResult, ToolResult};
pub use values::{
    CommandResult, Confirmation, ContextItem, LifecycleEvent, LifecycleKind, Notification,
    NotifyLevel, OutputStream, Placement, ProgressEvent, ProgressStatus, Segment, StatusItem,
};

/// Everything a typical extension names, for `use octet_guest::prelude::*`.
pub mod prelude {
    pub use crate::{
        Call, Command, CommandResult, ContextItem, Error, Extension, HookResult, LifecycleEvent,
        LifecycleKind, Notification, NotifyLevel, Placement, ProgressStatus, Render, Result,
        Segment, StatusItem, Tool, ToolResult, Value, json,
    };
}

/// Items the [`extension!`] macro expands to; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use crate::dispatch::{Exported, Setup};
}

/// Exports the extension whose handlers `setup` registers.
///
/// `setup` is a `fn(&mut Extension)`; it runs once per instance. The
/// extension's name defaults to the crate's package name (override it with
/// [`Extension::name`]). Invoke the macro once, in the `cdylib` crate.
#[macro_export]
macro_rules! extension {
    ($setup:path) => {
        const _: () = {
            struct OctetGuestSetup;

            impl $crate::__private::Setup for OctetGuestSetup {
                const NAME: &'static str = ::core::env!("CARGO_PKG_NAME");

                fn setup(extension: &mut $crate::Extension) {
                    $setup(extension)
                }
            }

            type OctetGuestExtension = $crate::__private::Exported<OctetGuestSetup>;

    $crate::bindings::export!(OctetGuestExtension with_types_in $crate::bindings);
        };
    };
}

#[cfg(test)]
mod prelude_tests {
    //! The prelude alone is enough for what the README's examples name.

    use crate::ProgressEvent;
    use crate::prelude::*;

    #[test]
    fn progress_status_comes_from_the_prelude_and_converts_to_an_event() {
        let status = ProgressStatus::new("Indexing").step(3, 10).unit("files");
        let ProgressEvent::Status(sent) = ProgressEvent::from(status) else {
            panic!("a status converts to a status event");
        };
        assert_eq!(sent.message, "Indexing");
        assert_eq!((sent.current, sent.total), (Some(3), Some(10)));
        assert_eq!(sent.unit.as_deref(), Some("files"));
    }
}
