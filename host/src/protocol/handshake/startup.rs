//! Start-up: loading the component (read, pinned digest, compiled cache)
//! while the host's `initialize` is on its way, then the handshake: the
//! guest's instantiation, `describe` and `init`, all inside the 27 s the
//! shim allows within octet's 30 s (docs/protocol.md#initialize-ordering).

use super::initialize;
use super::sandbox::sandbox_from;
use crate::log::Level;
use crate::protocol::deadlines::Deadlines;
use crate::protocol::imports::tools_catalog::definitions;
use crate::protocol::requests::deadline_timer::Watch;
use crate::protocol::requests::lanes::{self, LaneContext, Lanes};
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::{Session, Setup};
use crate::protocol::requests::work::Guest;
use crate::runtime::Limits;
use crate::runtime::cache::Cache;
use crate::runtime::component_file::ComponentFile;
use crate::runtime::types::InitParams;
use crate::runtime::{LoadSource, Runtime};
use crate::wire::message::RpcError;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How the shim was started.
#[derive(Debug, Clone)]
pub struct Options {
    pub component: PathBuf,
    pub limits: Limits,
    pub deadlines: Deadlines,
    pub cache: Option<Cache>,
    /// Refuse the component unless its SHA-256 is this (lowercase hex).
    pub sha256: Option<String>,
}

/// octet waits 30 s for the `initialize` answer
/// (docs/protocol.md#initialize-ordering) and kills the extension after
/// that. Loading the component, the guest's `describe` and its `init` all
/// happen inside that wait, so together they get 27 s from process start: a
/// guest spinning or blocked in either is answered with an initialize error
/// the host can show, 3 s before the host would give up on its own.
pub(crate) const INITIALIZE_BUDGET: Duration = Duration::from_millis(27_000);

/// What a ready session runs with: the lanes that run guest code, their
/// shared context and the one timer of every request deadline.
pub(crate) struct Running {
    pub(crate) lanes: Lanes,
    pub(crate) context: Arc<LaneContext>,
    /// The one timer of every request deadline.
    pub(crate) deadlines: Arc<Watch>,
}

/// Loads the component `run` read (and hashed, and whose metadata section
/// chose the limits), or reports why it could not be read; the bytes are
/// dropped once loaded.
pub(crate) fn start_loading(
    options: Options,
    component: Result<ComponentFile, String>,
) -> tokio::task::JoinHandle<Result<Arc<Runtime<Session>>, String>> {
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        // One SHA-256 per start, made while the file was read: it is
        // checked against the pin and names the cache entry.
        let file = component?;
        if let Some(expected) = &options.sha256 {
            let actual = file.digest.hex();
            if !actual.eq_ignore_ascii_case(expected) {
                return Err(format!(
                    "{} does not match its pinned digest: expected sha256 {expected}, found {actual}; refusing to run it (rebuild the pin with `octet-wasm manifest` or fix --sha256)",
                    options.component.display()
                ));
            }
        }
        let (runtime, source) = Runtime::load(
            &file,
            &options.component,
            options.limits.clone(),
            options.cache.as_ref(),
        )
        .map_err(|err| format!("{err:#}"))?;
        crate::log!(Level::Info, "component loaded",
            "source" => source.as_str(),
            "path" => options.component.display().to_string(),
            "bytes" => file.bytes.len(),
            "elapsed_ms" => started.elapsed().as_secs_f64() * 1000.0,
            "cache" => options.cache.as_ref().map(|c| c.dir().display().to_string()));
        if source == LoadSource::Compiled && options.cache.is_none() {
            crate::log!(
                Level::Warning,
                "compiled without a cache (--no-cache, or the user's cache was refused: see the warning above); every start compiles"
            );
        }
        Ok(Arc::new(runtime))
    })
}

/// Runs `step` of the guest's start-up unless `deadline` passes first.
async fn within<T>(
    deadline: Instant,
    step: &str,
    future: impl std::future::Future<Output = Result<T, RpcError>>,
) -> Result<T, RpcError> {
    tokio::time::timeout_at(deadline, future)
        .await
        .unwrap_or_else(|_| {
            Err(RpcError::internal(format!(
                "cannot start the extension: the guest's {step} did not return within the {} s the shim allows inside octet's 30 s initialize timeout (it is spinning or blocked)",
                INITIALIZE_BUDGET.as_secs()
            )))
        })
}

pub(crate) async fn initialize(
    session: &Arc<Session>,
    options: &Options,
    runtime: Result<Arc<Runtime<Session>>, String>,
    params: &Value,
    deadline: Instant,
) -> Result<(Value, Box<Running>), RpcError> {
    let env_version = std::env::var("OCTET_EXTENSION_API_VERSION").ok();
    let offer = initialize::check_params(params, env_version.as_deref())?;
    let runtime = runtime
        .map_err(|err| RpcError::internal(format!("cannot load the extension component: {err}")))?;
    let sandbox = sandbox_from(&offer, &options.limits)
        .map_err(|err| RpcError::internal(format!("cannot build the sandbox: {err}")))?;
    let start = |err: String| RpcError::internal(format!("cannot start the extension: {err}"));
    // Receipts, when the user's policy asks, unless the guest can reach them.
    crate::receipts::start(&sandbox);
    let mut primary = within(deadline, "instantiation", async {
        runtime
            .instantiate(session.clone(), &sandbox)
            .await
            .map_err(|f| start(f.to_string()))
    })
    .await?;
    let description = within(deadline, "describe", async {
        primary.describe().await.map_err(|f| start(f.to_string()))
    })
    .await?;
    let catalog = definitions::build(offer.api, &description).map_err(|err| {
        RpcError::internal(format!("the extension's description is invalid: {err}"))
    })?;
    initialize::check_registration(&offer, &description)?;
    let negotiated = initialize::negotiate(&offer, &description);
    let reply = initialize::reply(offer.api, &description, &negotiated).map_err(|err| {
        RpcError::internal(format!("the extension's description is invalid: {err}"))
    })?;
    let init = InitParams {
        api_version: offer.api.as_str().into(),
        features: negotiated.features.clone(),
        workspace: sandbox
            .guest_workspace()
            .unwrap_or_else(|| offer.workspace.clone().unwrap_or_default()),
        initialize: params.to_string(),
    };
    within(deadline, "init", async {
        match primary.init(&init).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(start(format!(
                "the guest's init failed: {}",
                crate::protocol::results::encode::guest_error_text(&error)
            ))),
            Err(fault) => Err(start(fault.to_string())),
        }
    })
    .await?;
    let pool = negotiated.max_concurrent;
    crate::log!(Level::Info, "extension ready",
        "api_version" => offer.api.as_str(), "features" => negotiated.features.clone(),
        "max_concurrent_requests" => pool, "tools" => description.tools.len());
    let artifacts = negotiated.has(crate::protocol::handshake::feature::Feature::Artifacts);
    session.services.configure(&offer.capabilities);
    let dynamic = session.services.tools.clone();
    if offer.api.negotiates() {
        let initial = crate::protocol::imports::tools_catalog::snapshots::Snapshot::build(
            description.tools.clone(),
        )
        .map_err(|err| {
            RpcError::internal(format!("the extension's description is invalid: {err}"))
        })?;
        dynamic.reset(initial);
    }
    session.set_setup(Setup {
        api: offer.api,
        negotiated,
        contributes: offer.contributes.clone(),
    });
    let context = Arc::new(LaneContext {
        runtime,
        session: session.clone(),
        sandbox,
        init,
        guest: Guest {
            description,
            catalog,
            dynamic,
        },
        deadlines: options.deadlines.clone(),
        api: offer.api,
        artifacts,
    });
    let lanes = Lanes::start(context.clone(), primary, pool);
    let deadlines = Arc::new(Watch::default());
    let expiring = context.clone();
    tokio::spawn(deadlines.clone().run(session.clone(), move |request| {
        let context = expiring.clone();
        async move { expire(&context, request).await }
    }));
    Ok((
        reply,
        Box::new(Running {
            lanes,
            context,
            deadlines,
        }),
    ))
}

/// Answers `request` for the guest: its deadline has passed (the
/// [`Watch`] found it still active).
async fn expire(context: &LaneContext, request: Arc<RequestState>) {
    let limit = context.deadlines.for_kind(request.kind);
    crate::log!(Level::Warning, "request deadline passed; answering for the guest",
        "request_id" => request.id, "deadline_ms" => limit.as_millis() as u64);
    request
        .expired
        .store(true, std::sync::atomic::Ordering::Release);
    context
        .session
        .cancel(
            &request,
            "timeout",
            lanes::deadline_answer(context.api, request.kind, limit),
        )
        .await;
}
