//! The host side of the imports every WIT version has, written once.
//!
//! Each version's bindings generate their own host traits and types, of
//! the same shape for these interfaces; [`shared_imports!`] implements
//! them by converting the guest's values into the shim's
//! [`types`](super::types), calling the [`Bridge`](super::bridge::Bridge) and
//! converting its answer back. `v0_2` and `v0_4` invoke it with aliases
//! naming their generated modules; what only one version has (0.4's
//! composition) stays in that version's file.

use crate::cancel::CancelToken;

/// `cancellation.sleep`: `true` as soon as the request is cancelled,
/// `false` when the time ran out.
pub(super) async fn sleep(cancel: &CancelToken, ms: u64) -> bool {
    tokio::select! {
        () = cancel.cancelled() => true,
        () = tokio::time::sleep(std::time::Duration::from_millis(ms)) => cancel.is_cancelled(),
    }
}

/// Implements `host`, `artifacts`, `tools-catalog`, `secrets`, `policy`,
/// `presentation`, `agents` and `cancellation` for `StoreState<B>`. The
/// invoking module must have `Bridge`, `StoreState`, `Convert` and its
/// generated `octet` module in scope.
macro_rules! shared_imports {
    (types: $t:ident, host: $h:ident, catalog: $k:ident, policy: $p:ident, agents: $a:ident) => {
        impl<B: Bridge> $t::Host for StoreState<B> {}

        impl<B: Bridge> $h::Host for StoreState<B> {
            async fn log(&mut self, level: $h::LogLevel, message: String, fields: Option<String>) {
                self.bridge.log(level.convert(), message, fields);
            }

            async fn notify(&mut self, notification: $t::Notification) -> Result<(), $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .notify(self.scope(), notification.convert())
                    .await
                    .convert()
            }

            async fn confirm(&mut self, request: $t::Confirmation) -> Result<bool, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .confirm(self.scope(), request.convert())
                    .await
                    .convert()
            }

            async fn request_input(
                &mut self,
                prompt: String,
                secret: bool,
            ) -> Result<Option<String>, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .request_input(self.scope(), prompt, secret)
                    .await
                    .convert()
            }

            async fn progress(&mut self, event: $t::ProgressEvent) -> Result<(), $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .progress(self.scope(), event.convert())
                    .await
                    .convert()
            }

            async fn contribute_context(&mut self, item: $t::ContextItem) -> Result<(), $t::Error> {
                let bridge = self.bridge.clone();
                bridge.contribute_context(item.convert()).await.convert()
            }

            async fn contribute_status(&mut self, item: $t::StatusItem) -> Result<(), $t::Error> {
                let bridge = self.bridge.clone();
                bridge.contribute_status(item.convert()).await.convert()
            }
        }

        impl<B: Bridge> octet::extension::artifacts::Host for StoreState<B> {
            async fn publish(
                &mut self,
                mime_type: String,
                data: Vec<u8>,
            ) -> Result<String, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .publish_artifact(self.scope(), mime_type, data)
                    .await
                    .convert()
            }
        }

        impl<B: Bridge> $k::Host for StoreState<B> {
            async fn register(
                &mut self,
                tools: Vec<$t::ToolDefinition>,
            ) -> Result<$k::CatalogUpdate, $t::Error> {
                let bridge = self.bridge.clone();
                bridge.register_tools(tools.convert()).await.convert()
            }

            async fn unregister(
                &mut self,
                names: Vec<String>,
            ) -> Result<$k::CatalogUpdate, $t::Error> {
                let bridge = self.bridge.clone();
                bridge.unregister_tools(names).await.convert()
            }

            async fn current(&mut self) -> $k::CatalogUpdate {
                self.bridge.current_catalog().convert()
            }
        }

        impl<B: Bridge> octet::extension::secrets::Host for StoreState<B> {
            async fn get(&mut self, name: String) -> Result<String, $t::Error> {
                let bridge = self.bridge.clone();
                bridge.get_secret(self.scope(), name).await.convert()
            }
        }

        impl<B: Bridge> $p::Host for StoreState<B> {
            async fn evaluate(
                &mut self,
                intent: $p::Intent,
                approval_token: Option<String>,
            ) -> Result<$p::Verdict, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .evaluate_policy(self.scope(), intent.convert(), approval_token)
                    .await
                    .convert()
            }
        }

        impl<B: Bridge> octet::extension::presentation::Host for StoreState<B> {
            async fn update(
                &mut self,
                snapshot: String,
                owner: Option<$t::ResourceOwner>,
            ) -> Result<(), $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .update_presentation(self.scope(), snapshot, owner.convert())
                    .await
                    .convert()
            }
        }

        impl<B: Bridge> $a::Host for StoreState<B> {
            async fn spawn(&mut self, request: $a::SpawnRequest) -> Result<$a::Spawned, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .spawn_agent(self.scope(), request.convert())
                    .await
                    .convert()
            }

            async fn send(
                &mut self,
                target: String,
                message: String,
            ) -> Result<$a::Steered, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .steer_agent(self.scope(), target, message)
                    .await
                    .convert()
            }

            async fn follow_up(
                &mut self,
                target: String,
                message: String,
            ) -> Result<$a::FollowedUp, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .follow_up_agent(self.scope(), target, message)
                    .await
                    .convert()
            }

            async fn list_agents(&mut self) -> Result<$a::Snapshot, $t::Error> {
                let bridge = self.bridge.clone();
                bridge.list_agents(self.scope()).await.convert()
            }

            async fn wait(&mut self, timeout_ms: Option<u32>) -> Result<$a::Waited, $t::Error> {
                let bridge = self.bridge.clone();
                bridge.wait_agents(self.scope(), timeout_ms).await.convert()
            }

            async fn interrupt(&mut self, target: String) -> Result<$a::Interrupted, $t::Error> {
                let bridge = self.bridge.clone();
                bridge.interrupt_agent(self.scope(), target).await.convert()
            }

            async fn list_models(
                &mut self,
                query: Option<String>,
                limit: Option<u32>,
            ) -> Result<$a::ModelList, $t::Error> {
                let bridge = self.bridge.clone();
                bridge
                    .list_agent_models(self.scope(), query, limit)
                    .await
                    .convert()
            }
        }

        impl<B: Bridge> octet::extension::cancellation::Host for StoreState<B> {
            async fn is_cancelled(&mut self) -> bool {
                self.cancel.is_cancelled()
            }

            async fn reason(&mut self) -> Option<String> {
                self.cancel.reason()
            }

            async fn sleep(&mut self, ms: u64) -> bool {
                let cancel = self.cancel.clone();
                $crate::runtime::imports::sleep(&cancel, ms).await
            }
        }
    };
}

pub(super) use shared_imports;
