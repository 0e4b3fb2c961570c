//! The calls of a guest's exports, written once for every WIT version.
//!
//! Each version's bindings generate their own `Guest` with the same
//! functions; [`shared_exports!`] defines that version's `Exports` over
//! them, converting the shim's [`types`](super::types) into the version's
//! and the guest's answer back. What a version cannot express is the
//! converters' business (`v0_2`'s hand-written ones), not this file's.

/// Defines `Exports` (a live guest of the invoking version) and its calls.
/// The invoking module must have its generated `Extension` and `exports`,
/// `Store`, `Convert` and the shim's types as `shim` in scope.
macro_rules! shared_exports {
    (types: $t:ident) => {
        /// The guest's answer in the shim's types.
        type Answer<T> = wasmtime::Result<Result<T, shim::GuestError>>;

        /// Calls of a guest's exports in this WIT version, with the shim's types on both sides.
        pub struct Exports(pub(super) Extension);

        impl Exports {
            fn guest(&self) -> &exports::octet::extension::guest::Guest {
                self.0.octet_extension_guest()
            }

            pub async fn describe<T: Send>(
                &self,
                store: &mut Store<T>,
            ) -> wasmtime::Result<shim::Description> {
                Ok(self.guest().call_describe(store).await?.convert())
            }

            pub async fn init<T: Send>(
                &self,
                store: &mut Store<T>,
                params: &shim::InitParams,
            ) -> Answer<()> {
                let params: $t::InitParams = params.clone().convert();
                Ok(self.guest().call_init(store, &params).await?.convert())
            }

            pub async fn call_tool<T: Send>(
                &self,
                store: &mut Store<T>,
                call: shim::ToolCall,
                cx: shim::CallContext,
            ) -> Answer<shim::ToolResult> {
                let (call, cx): ($t::ToolCall, $t::CallContext) = (call.convert(), cx.convert());
                Ok(self
                    .guest()
                    .call_call_tool(store, &call, &cx)
                    .await?
                    .convert())
            }

            pub async fn execute_command<T: Send>(
                &self,
                store: &mut Store<T>,
                name: &str,
                arguments: &[String],
                cx: shim::CallContext,
            ) -> Answer<shim::CommandResult> {
                let cx: $t::CallContext = cx.convert();
                Ok(self
                    .guest()
                    .call_execute_command(store, name, arguments, &cx)
                    .await?
                    .convert())
            }

            pub async fn run_hook<T: Send>(
                &self,
                store: &mut Store<T>,
                hook: &str,
                payload: String,
                cx: shim::CallContext,
            ) -> Answer<shim::HookResult> {
                let cx: $t::CallContext = cx.convert();
                Ok(self
                    .guest()
                    .call_run_hook(store, hook, &payload, &cx)
                    .await?
                    .convert())
            }

            pub async fn collect_context<T: Send>(
                &self,
                store: &mut Store<T>,
                prompt: Option<&str>,
                cx: shim::CallContext,
            ) -> Answer<Vec<shim::ContextItem>> {
                let cx: $t::CallContext = cx.convert();
                Ok(self
                    .guest()
                    .call_collect_context(store, prompt, &cx)
                    .await?
                    .convert())
            }

            pub async fn collect_status<T: Send>(
                &self,
                store: &mut Store<T>,
                surface: &str,
                cx: shim::CallContext,
            ) -> Answer<Option<shim::StatusItem>> {
                let cx: $t::CallContext = cx.convert();
                Ok(self
                    .guest()
                    .call_collect_status(store, surface, &cx)
                    .await?
                    .convert())
            }

            pub async fn render_tool<T: Send>(
                &self,
                store: &mut Store<T>,
                request: shim::RenderRequest,
                cx: shim::CallContext,
            ) -> Answer<Vec<shim::Segment>> {
                let (request, cx): ($t::RenderRequest, $t::CallContext) =
                    (request.convert(), cx.convert());
                Ok(self
                    .guest()
                    .call_render_tool(store, &request, &cx)
                    .await?
                    .convert())
            }

            pub async fn collect_menu<T: Send>(
                &self,
                store: &mut Store<T>,
                cx: shim::CallContext,
            ) -> Answer<Option<String>> {
                let cx: $t::CallContext = cx.convert();
                Ok(self.guest().call_collect_menu(store, &cx).await?.convert())
            }

            pub async fn on_lifecycle<T: Send>(
                &self,
                store: &mut Store<T>,
                event: shim::LifecycleEvent,
            ) -> wasmtime::Result<()> {
                let event: $t::LifecycleEvent = event.convert();
                self.guest().call_on_lifecycle(store, &event).await
            }

            pub async fn on_shutdown<T: Send>(&self, store: &mut Store<T>) -> Answer<()> {
                Ok(self.guest().call_on_shutdown(store).await?.convert())
            }
        }
    };
}

pub(super) use shared_exports;
