//! `/v1/approvals`: the delivery gate over HTTP, as `forge-code-agent approvals` does it:
//! list, show, approve, reject. The repository (`?repo=`) must lie inside the roots;
//! without one, `serve --queue` answers with the queue's approvals (`queue_approvals.rs`).

use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use forge_app::delivery::{Delivery, DeliveryError};
use forge_domain::delivery::{ApprovalId, ApprovalState, Decision};
use forge_domain::queue_approval::QueueDecision;
use serde::Deserialize;
use serde_json::{Value, json};

use super::queue_approvals;
use crate::composition::OpenError;
use crate::error::ApiError;
use crate::state::Shared;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/v1/approvals", get(list))
        .route("/v1/approvals/{id}", get(show))
        .route("/v1/approvals/{id}/approve", post(approve))
        .route("/v1/approvals/{id}/reject", post(reject))
}

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
    /// Who decides (the page sends the name its user gave); `serve` when absent.
    #[serde(default)]
    pub by: Option<String>,
}

/// `POST /v1/approvals/{id}/approve` may carry `{push, by}` (the queue's approvals).
#[derive(Debug, Default, Deserialize)]
pub struct ApproveBody {
    /// Push too, even if the task did not ask to.
    #[serde(default)]
    pub push: bool,
    #[serde(default)]
    pub by: Option<String>,
}

/// The decider's name: given and not blank, else `serve`.
fn decider(by: Option<String>) -> String {
    by.map(|b| b.trim().chars().take(80).collect::<String>())
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| queue_approvals::DECIDER.to_owned())
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
    state
        .composition
        .delivery(&repo)
        .await
        .map_err(|e| match e {
            OpenError::Refused(m) => ApiError::bad_request(m),
            OpenError::Failed(m) => ApiError::internal(m),
        })
}

fn approval_id(id: &str) -> Result<ApprovalId, ApiError> {
    ApprovalId::new(id).map_err(|e| ApiError::bad_request(format!("approval id: {e}")))
}

fn delivery_error(e: DeliveryError) -> Response {
    if let DeliveryError::AlreadyDecided { state, by, .. } = &e {
        let (state, by) = (state.as_str(), by.clone());
        return queue_approvals::already_decided(e.to_string(), state, by.as_deref(), None);
    }
    delivery_api_error(e).into_response()
}

fn delivery_api_error(e: DeliveryError) -> ApiError {
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
    let (approval, outcome) = delivery.approval(&id).await.map_err(delivery_api_error)?;
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

/// `POST /v1/approvals/{id}/approve?repo=` [{push, by}]: commit the held change (409 with
/// who decided first when decided).
pub async fn approve(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<RepoQuery>,
    body: Option<Json<ApproveBody>>,
) -> Result<Response, ApiError> {
    let id = approval_id(&id)?;
    let body = body.map(|Json(b)| b).unwrap_or_default();
    if let Some(queue) = queue_of(&state, &query) {
        let decision = QueueDecision {
            decision: Decision::Approve,
            by: decider(body.by),
            reason: None,
            push: body.push,
        };
        return queue_approvals::decide(queue, id, decision).await;
    }
    if body.push {
        return Err(ApiError::bad_request(
            "push: approving a local repository's change pushes as its task asked; \
             `approvals approve --push` there pushes otherwise",
        ));
    }
    let delivery = open(&state, &query).await?;
    match delivery.approve(&id).await {
        Ok(approved) => Ok(Json(
            json!({"task": approved.outcome, "base_moved": approved.base_moved}),
        )
        .into_response()),
        Err(e) => Ok(delivery_error(e)),
    }
}

/// `POST /v1/approvals/{id}/reject?repo=` {reason?, by?}: drop the held change (409 with
/// who decided first when decided).
pub async fn reject(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<RepoQuery>,
    body: Option<Json<RejectBody>>,
) -> Result<Response, ApiError> {
    let id = approval_id(&id)?;
    let body = body.map(|Json(b)| b).unwrap_or_default();
    if let Some(queue) = queue_of(&state, &query) {
        let decision = QueueDecision {
            decision: Decision::Reject,
            by: decider(body.by),
            reason: body.reason,
            push: false,
        };
        return queue_approvals::decide(queue, id, decision).await;
    }
    let delivery = open(&state, &query).await?;
    match delivery.reject(&id, body.reason.as_deref()).await {
        Ok(outcome) => Ok((StatusCode::OK, Json(json!({"task": outcome}))).into_response()),
        Err(e) => Ok(delivery_error(e)),
    }
}
