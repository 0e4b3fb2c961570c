//! The conversions every WIT version shares, listed once: the records and
//! variants whose shape is the same in each version and in the shim's own
//! [`types`](super::types). A version module adds what differs (0.2.0's
//! tool definitions and hook results, 0.4.0's additions).

/// Writes [`Convert`](super::convert::Convert) both ways between the
/// shared shapes of the invoking version (its generated modules named by
/// the aliases) and `shim` (the shim's types, in scope as `shim`).
macro_rules! shared_shapes {
    (types: $t:ident, host: $h:ident, catalog: $k:ident, policy: $p:ident, agents: $a:ident) => {
        // ----- values the guest hands the shim ---------------------------------

        $crate::runtime::convert::records! {
            $t::Description => shim::Description {
                name, tools, commands, hooks, context, status_surfaces, renderers, menu, lifecycle,
                max_concurrency, features,
            }
            $t::CommandDefinition => shim::CommandDefinition { name, description, usage }
            $t::RpcError => shim::GuestRpcError { code, message, data }
            $t::ToolResult => shim::ToolResult { content, structured_content, is_error, metadata }
            $t::ImagePart => shim::ImagePart { artifact_id, mime_type, alt }
            $t::AudioPart => shim::AudioPart { artifact_id, mime_type, transcript }
            $t::CommandResult => shim::CommandResult { text, notifications, context }
            $t::Notification => shim::Notification { level, title, message }
            $t::ContextItem => shim::ContextItem { label, content, placement }
            $t::PersistenceMetadata => shim::PersistenceMetadata { value, public }
            $t::StatusItem => shim::StatusItem { surface, text, style_role, priority }
            $t::Segment => shim::Segment { text, style_role }
            $t::Confirmation => shim::Confirmation { prompt, detail, destructive, default }
            $t::ProgressStatus => shim::ProgressStatus { message, current, total, unit }
            $t::ProgressOutput => shim::ProgressOutput { stream, data }
            $t::ProgressDecoration => shim::ProgressDecoration { label, detail }
            $t::ResourceOwner => shim::ResourceOwner {
                session_id, extension_instance_id, process_generation,
            }
            $p::Intent => shim::Intent { kind, operation, target, data_classes, read_only, destructive }
            $a::SpawnRequest => shim::SpawnRequest {
                task_name, profile, fingerprint, message, idempotency_key, policy,
            }
            $a::SpawnPolicy => shim::SpawnPolicy {
                tools, max_concurrent_children, max_turns, max_tokens, max_cost_microdollars,
                max_output_bytes, timeout_ms, model_selection,
            }
            $a::ModelSelection => shim::ModelSelection { provider, model, reasoning }
        }

        $crate::runtime::convert::cases! {
            $t::LifecycleKind => shim::LifecycleKind {
                SessionStarted, SessionSettled, TurnStarted, TurnSettled, ToolStarted, ToolSettled,
            }
            $t::Error => shim::GuestError { InvalidParams(text), Cancelled, Failed(text), Rpc(error) }
            $t::ContentPart => shim::ContentPart { Text(text), Image(image), Audio(audio) }
            $t::NotifyLevel => shim::NotifyLevel { Info, Success, Warning, Error }
            $t::Placement => shim::Placement { SystemPrefix, SystemSuffix, PromptPrefix, PromptSuffix }
            $t::Disposition => shim::Disposition { Continue, Deny(reason) }
            $t::RetryDecision => shim::RetryDecision { Retry, Stop, Delay(ms) }
            $t::RescanDecision => shim::RescanDecision { NoRescan, RequestRescan(ids) }
            $t::ProgressEvent => shim::ProgressEvent { Status(s), Output(o), Decoration(d) }
            $t::OutputStream => shim::OutputStream { Stdout, Stderr }
            $h::LogLevel => shim::LogLevel { Debug, Info, Warning, Error }
            $a::AgentTool => shim::AgentTool { Read, Search, Edit, Write, Bash }
        }

        // ----- values the shim hands the guest ---------------------------------

        $crate::runtime::convert::records! {
            shim::InitParams => $t::InitParams { api_version, features, workspace, initialize }
            shim::ToolCall => $t::ToolCall { name, arguments, catalog_revision }
            shim::CallContext => $t::CallContext {
                request_id, workspace, execution_scope, resource_owner, host,
            }
            shim::ResourceOwner => $t::ResourceOwner {
                session_id, extension_instance_id, process_generation,
            }
            shim::RenderRequest => $t::RenderRequest { name, arguments, output, is_error }
            shim::LifecycleEvent => $t::LifecycleEvent {
                kind, session_id, run_id, turn_id, tool_call_id, tool_name, outcome, duration_ms, reason,
            }
            shim::GuestRpcError => $t::RpcError { code, message, data }
            shim::CatalogUpdate => $k::CatalogUpdate { revision, tools }
            shim::Verdict => $p::Verdict { decision, approval_token }
            shim::Spawned => $a::Spawned { agent_id, agent_path, status, details }
            shim::AgentStatus => $a::AgentStatus { state, output, error }
            shim::Steered => $a::Steered { delivered_to, delivery }
            shim::FollowedUp => $a::FollowedUp { agent_id, agent_path, delivery }
            shim::AgentSnapshot => $a::Snapshot { principal, resource_owner, persistence_error, agents }
            shim::AgentRecord => $a::AgentRecord { agent_id, agent_path, status, details }
            shim::Waited => $a::Waited { timed_out, snapshot }
            shim::Interrupted => $a::Interrupted {
                agent_id, agent_path, previous_status, interrupt_requested,
            }
            shim::ModelList => $a::ModelList { models, truncated }
            shim::ModelInfo => $a::ModelInfo {
                model, provider, display_name, reasoning, context_window, max_output_tokens,
            }
        }

        $crate::runtime::convert::cases! {
            shim::LifecycleKind => $t::LifecycleKind {
                SessionStarted, SessionSettled, TurnStarted, TurnSettled, ToolStarted, ToolSettled,
            }
            shim::GuestError => $t::Error { InvalidParams(text), Cancelled, Failed(text), Rpc(error) }
            shim::Decision => $p::Decision { Allow, Ask, Deny }
            shim::SteeringDelivery => $a::SteeringDelivery { Steering, Queued }
            shim::FollowUpDelivery => $a::FollowUpDelivery { FollowUp, NewRun }
        }
    };
}

pub(super) use shared_shapes;
