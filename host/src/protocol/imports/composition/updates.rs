//! octet's partial results of a composition call (`composition/update`
//! notifications, API 0.4): the `start-call` import that asks for them, and
//! the routing of each notification to the call it belongs to.
//! docs/api-0.4.md#v04-composition-updates.
//!
//! octet is trusted, but what it relays is the called tool's output, and a
//! wrong notification must never stop the extension: every notification
//! that does not fit is dropped, counted and logged, never answered (it is
//! a notification) and never fatal. An update is routed only to a call the
//! shim sent with `updates: true` and that is still waiting for its reply;
//! its `sequence` must be greater than the last one accepted for that call;
//! its `result` must fit the guest-JSON bounds ([`crate::protocol::guest_json`]) and
//! [`MAX_UPDATE_BYTES`](super::state::MAX_UPDATE_BYTES). At most [`MAX_BUFFERED`] updates
//! ([`MAX_BUFFERED_BYTES`] together) wait for the guest per call; past that
//! the oldest gives way (the newest partial result is the most complete,
//! and stdin is never left unread while a guest is slow). The buffer is
//! freed when the guest finishes or drops the call, and when the tool call
//! ends or is cancelled.

use super::state::{MAX_BUFFERED, MAX_BUFFERED_BYTES};

use super::{call_answer, call_params, parent_of, send_with};
use crate::cancel::CancelToken;
use crate::protocol::requests::request_state::RequestState;
use crate::protocol::requests::session::Session;
use crate::runtime::pending::{PendingCall, UpdateQueue};
use crate::runtime::types::GuestError;
use serde_json::{Value, json};
use std::sync::Arc;

/// The notification.
pub const METHOD: &str = "composition/update";
/// A `composition/update` from octet (never answered, never fatal).
pub fn route_update(session: &Session, params: &Value) {
    let routes = &session.services.composition.updates;
    match routes.accept(params, |id| session.child_requests.is_pending(id)) {
        Ok(0) => {}
        Ok(dropped) => routes.overflowed(dropped),
        Err(why) => routes.ignored(&why),
    }
}

/// `composition.start-call`: the call is sent with `updates: true` by a
/// task of its own, and the guest holds the returned handle.
pub(crate) async fn start_call(
    session: Arc<Session>,
    scope: Option<Arc<RequestState>>,
    name: String,
    arguments: String,
    full_outcome: bool,
) -> Result<PendingCall, GuestError> {
    let parent = parent_of(&session, scope, "composition.start-call")?;
    let mut params = call_params(&session, &parent, &name, &arguments, full_outcome)?;
    params["updates"] = json!(true);
    let queue = Arc::new(UpdateQueue::new(MAX_BUFFERED, MAX_BUFFERED_BYTES));
    let (answer, outcome) = tokio::sync::oneshot::channel();
    let abandon = CancelToken::new();
    let cancel = CancelToken::new();
    let call = PendingCall::new(queue.clone(), outcome, abandon.clone());
    tokio::spawn(follow_parent(
        parent.clone(),
        abandon,
        cancel.clone(),
        queue.clone(),
    ));
    tokio::spawn(async move {
        let reply = updating_call(&session, params, &cancel, queue).await;
        session.services.composition.end(&parent);
        let result = match reply {
            Ok(reply) => call_answer(&session, &parent, reply, full_outcome).await,
            Err(error) => Err(error),
        };
        let _ = answer.send(result);
    });
    Ok(call)
}

/// Sends the call and waits for its reply, routing its updates to
/// `queue` meanwhile.
async fn updating_call(
    session: &Session,
    params: Value,
    cancel: &CancelToken,
    queue: Arc<UpdateQueue>,
) -> Result<serde_json::Map<String, Value>, GuestError> {
    const CALL: &str = "composition/call";
    let routes = &session.services.composition.updates;
    let mut routed = None;
    let reply = send_with(session, CALL, params, cancel, |id| {
        routes.open(id, queue.clone());
        routed = Some(id.clone());
    })
    .await;
    if let Some(id) = routed {
        routes.close(&id);
    }
    queue.close();
    reply
}

/// Ends the call (`cancel`) when the tool call does (cancelled, past its
/// deadline or answered) or the guest drops the handle (`abandon`): octet
/// is told with the tool call's reason when it has one (a cancelled tool
/// call also stops its guest, which drops the handle), and the updates not
/// read are freed. After a reply, cancelling changes nothing.
async fn follow_parent(
    parent: Arc<RequestState>,
    abandon: CancelToken,
    cancel: CancelToken,
    queue: Arc<UpdateQueue>,
) {
    let reason = tokio::select! {
        biased;
        () = parent.cancel.cancelled() => parent.cancel.reason().unwrap_or_else(|| "cancelled".into()),
        () = parent.finished.cancelled() => "cancelled".to_owned(),
        () = abandon.cancelled() => "cancelled".to_owned(),
    };
    cancel.cancel(&reason);
    queue.discard();
}
