//! `/v1/approvals` without `?repo=` on `serve --queue`: the queue's approvals, as
//! `approvals … --queue` does it — list, show, approve, reject, decided once (409 for the
//! loser). The worker holding the change carries the decision out and records the outcome.

use std::sync::Arc;

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use forge_app::delivery::DeliveryError;
use forge_app::queue::approval_json;
use forge_domain::delivery::ApprovalId;
use forge_domain::queue_approval::{Decided, QueueDecision};
use forge_ports::TaskQueue;
use serde_json::{Value, json};

use super::tasks::queue_error;
use crate::error::ApiError;

/// Who decides through the API when the request names no one (the audit names it).
pub(super) const DECIDER: &str = "serve";

/// A second decision: 409, saying who decided first and how — the page shows it as an
/// answer, not as an error page.
pub(super) fn already_decided(
    message: String,
    state: &str,
    by: Option<&str>,
    at_ms: Option<u64>,
) -> Response {
    let body = json!({
        "error": "already_decided",
        "message": message,
        "state": state,
        "decided_by": by,
        "decided_at_ms": at_ms,
    });
    (StatusCode::CONFLICT, Json(body)).into_response()
}

pub(super) async fn list(queue: Arc<dyn TaskQueue>, all: bool) -> Result<Json<Value>, ApiError> {
    let approvals = queue.approvals(all).await.map_err(queue_error)?;
    let listed: Vec<Value> = approvals.iter().map(approval_json).collect();
    Ok(Json(json!({"approvals": listed})))
}

pub(super) async fn show(
    queue: Arc<dyn TaskQueue>,
    id: &ApprovalId,
) -> Result<Json<Value>, ApiError> {
    let approval = queue
        .approval(id)
        .await
        .map_err(queue_error)?
        .ok_or_else(|| no_such(id))?;
    let task = queue.task(&approval.task_id).await.map_err(queue_error)?;
    Ok(Json(
        json!({"approval": approval_json(&approval), "task": task}),
    ))
}

pub(super) async fn decide(
    queue: Arc<dyn TaskQueue>,
    id: ApprovalId,
    decision: QueueDecision,
) -> Result<Response, ApiError> {
    match queue
        .decide_approval(&id, &decision)
        .await
        .map_err(queue_error)?
    {
        None => Err(no_such(&id)),
        Some(Decided::Already(standing)) => Ok(already_decided(
            DeliveryError::AlreadyDecided {
                id,
                state: standing.state,
                by: standing.decided_by.clone(),
            }
            .to_string(),
            standing.state.as_str(),
            standing.decided_by.as_deref(),
            standing.decided_at_ms,
        )),
        Some(Decided::Now(decided)) => {
            Ok(Json(json!({"approval": approval_json(&decided)})).into_response())
        }
    }
}

fn no_such(id: &ApprovalId) -> ApiError {
    ApiError::not_found(format!("no approval with id {id} in the queue"))
}
