//! `/v1/approvals`: the delivery gate over HTTP, as `forge-code-agent approvals` does it:
//! list, show, approve, reject. The repository (`?repo=`) must lie inside the roots;
//! without one, `serve --queue` answers with the queue's approvals (`queue_approvals.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use forge_app::delivery::{Delivery, DeliveryError};
use forge_domain::delivery::{ApprovalId, ApprovalState, Decision};
use serde::Deserialize;
use serde_json::{Value, json};

use super::queue_approvals;
use crate::cmd::delivery::open_reconciled;
use crate::exit::Failure;
use crate::serve::error::ApiError;
use crate::serve::state::Shared;

#[derive(Debug, Deserialize)]
pub struct RepoQuery {
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub all: bool,
}

#[derive(Debug, Default, Deserialize)]
pub struct RejectBody {
    #[serde(default)]
    pub reason: Option<String>,
}

fn repo(state: &Shared, query: &RepoQuery) -> Result<PathBuf, ApiError> {
    let repo = query.repo.as_deref().ok_or_else(|| {
        ApiError::bad_request(
            "repo: missing (or start serve with --queue for the queue's approvals)",
        )
    })?;
    state
        .roots
        .confine(repo)
        .map_err(|e| ApiError::path("repo", &e))
}

/// The queue whose approvals a request without `?repo=` means, when serving one.
fn queue_of(state: &Shared, query: &RepoQuery) -> Option<Arc<dyn forge_ports::TaskQueue>> {
    query.repo.is_none().then(|| state.queue.clone()).flatten()
}

async fn open(state: &Shared, query: &RepoQuery) -> Result<Delivery, ApiError> {
    let repo = repo(state, query)?;
    open_reconciled(&repo, None).await.map_err(|e| match e {
        Failure::Usage(m) => ApiError::bad_request(m),
        other => ApiError::internal(other.to_string()),
    })
}

fn approval_id(id: &str) -> Result<ApprovalId, ApiError> {
    ApprovalId::new(id).map_err(|e| ApiError::bad_request(format!("approval id: {e}")))
}

fn delivery_error(e: DeliveryError) -> ApiError {
    match e {
        DeliveryError::NoSuchApproval(_) | DeliveryError::NoSuchTask(_) => {
            ApiError::not_found(e.to_string())
        }
        DeliveryError::AlreadyDecided { .. } => ApiError::conflict(e.to_string()),
        other => ApiError::internal(other.to_string()),
    }
}

/// `GET /v1/approvals?repo=[&all=true]`: pending approvals (all with `all`).
pub async fn list(
    State(state): State<Shared>,
    Query(query): Query<RepoQuery>,
) -> Result<Json<Value>, ApiError> {
    if let Some(queue) = queue_of(&state, &query) {
        return queue_approvals::list(queue, query.all).await;
    }
    let delivery = open(&state, &query).await?;
    let filter = (!query.all).then_some(ApprovalState::Pending);
    let approvals = delivery
        .ports()
        .store
        .approvals(filter)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(json!({"approvals": approvals})))
}

/// `GET /v1/approvals/{id}?repo=`: the approval, its task's report and notifications.
pub async fn show(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<RepoQuery>,
) -> Result<Json<Value>, ApiError> {
    let id = approval_id(&id)?;
    if let Some(queue) = queue_of(&state, &query) {
        return queue_approvals::show(queue, &id).await;
    }
    let delivery = open(&state, &query).await?;
    let (approval, outcome) = delivery.approval(&id).await.map_err(delivery_error)?;
    let notifications = delivery
        .ports()
        .store
        .notifications(&id)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(
        json!({"approval": approval, "task": outcome, "notifications": notifications}),
    ))
}

/// `POST /v1/approvals/{id}/approve?repo=`: commit the held change (409 when decided).
pub async fn approve(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<RepoQuery>,
) -> Result<Json<Value>, ApiError> {
    let id = approval_id(&id)?;
    if let Some(queue) = queue_of(&state, &query) {
        return queue_approvals::decide(queue, id, Decision::Approve, None).await;
    }
    let delivery = open(&state, &query).await?;
    let approved = delivery.approve(&id).await.map_err(delivery_error)?;
    Ok(Json(
        json!({"task": approved.outcome, "base_moved": approved.base_moved}),
    ))
}

/// `POST /v1/approvals/{id}/reject?repo=` {reason?}: drop the held change (409 when decided).
pub async fn reject(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<RepoQuery>,
    body: Option<Json<RejectBody>>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let id = approval_id(&id)?;
    let reason = body.and_then(|Json(b)| b.reason);
    if let Some(queue) = queue_of(&state, &query) {
        let decided = queue_approvals::decide(queue, id, Decision::Reject, reason).await?;
        return Ok((StatusCode::OK, decided));
    }
    let delivery = open(&state, &query).await?;
    let outcome = delivery
        .reject(&id, reason.as_deref())
        .await
        .map_err(delivery_error)?;
    Ok((StatusCode::OK, Json(json!({"task": outcome}))))
}
