//! `/v1/permissions`: the agents' permission requests over HTTP (issue 41), as
//! `forge-code-agent permissions list | allow | deny` does it — the pending ones, and a
//! person's decision, the first of which stands (409 for a later one, naming the first).
//! The store is the composition's: the queue's on `serve --queue`, so a queued task's
//! request is answered here and its worker sees the answer within a second.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use forge_domain::permission::{PermissionDecision, PermissionId, PermissionRequest, Verdict};
use forge_ports::PermissionRequests;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::state::Shared;

/// Who decides through the API when the body names no one.
const DECIDER: &str = "serve";

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/v1/permissions", get(list))
        .route("/v1/permissions/{id}", post(decide).get(show))
}

/// `POST /v1/permissions/{id}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecideBody {
    pub decision: Verdict,
    /// A deny's message for the agent (refused with an allow, as on the command line).
    #[serde(default)]
    pub message: Option<String>,
    /// Who decides (the page sends the name its user gave); `serve` when absent.
    #[serde(default)]
    pub by: Option<String>,
}

pub(crate) fn store(state: &Shared) -> Result<Arc<dyn PermissionRequests>, ApiError> {
    state.composition.permission_store().ok_or_else(|| {
        ApiError::not_found("this server keeps no permission requests (no store was opened)")
    })
}

fn store_error(e: forge_domain::ForgeError) -> ApiError {
    ApiError::internal(format!("permission store: {e}"))
}

/// A request as the API shows it: as stored, with the line a person reads.
pub(crate) fn request_json(request: &PermissionRequest) -> Value {
    let mut value = serde_json::to_value(request).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("summary".into(), Value::String(request.tool.summary()));
        map.insert(
            "state".into(),
            Value::String(match &request.decision {
                None => "pending".to_owned(),
                Some(d) => d.outcome_word().to_owned(),
            }),
        );
    }
    value
}

/// The pending requests, oldest first (an overdue one is denied by timeout first, so what
/// is listed can still be answered).
pub(crate) async fn pending(state: &Shared) -> Result<Vec<PermissionRequest>, ApiError> {
    let store = store(state)?;
    store.expire_permissions().await.map_err(store_error)?;
    store.pending_permissions(None).await.map_err(store_error)
}

/// `GET /v1/permissions` → `{"permissions": [request…]}`.
async fn list(State(state): State<Shared>) -> Result<Json<Value>, ApiError> {
    let listed: Vec<Value> = pending(&state).await?.iter().map(request_json).collect();
    Ok(Json(json!({"permissions": listed})))
}

fn parse_id(id: &str) -> Result<PermissionId, ApiError> {
    PermissionId::new(id).map_err(|e| ApiError::bad_request(e.to_string()))
}

fn no_such(id: &PermissionId) -> ApiError {
    ApiError::not_found(format!("no permission request {id}"))
}

/// `GET /v1/permissions/{id}`: one request, pending or decided.
async fn show(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id)?;
    let request = store(&state)?
        .permission(&id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| no_such(&id))?;
    Ok(Json(json!({"permission": request_json(&request)})))
}

/// `POST /v1/permissions/{id}` → 200 with the request decided; 409 naming the first
/// decision when another came first; 404 for an unknown id; 400 for a bad body.
async fn decide(
    State(state): State<Shared>,
    Path(id): Path<String>,
    body: Result<Json<DecideBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let id = parse_id(&id)?;
    let by = body
        .by
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| DECIDER.to_owned());
    let decision = PermissionDecision::person(body.decision, body.message, by)
        .map_err(ApiError::bad_request)?;
    let decided = store(&state)?
        .decide_permission(&id, &decision)
        .await
        .map_err(store_error)?
        .ok_or_else(|| no_such(&id))?;
    let request = request_json(decided.request());
    match decided.refusal() {
        None => Ok(Json(json!({"permission": request})).into_response()),
        Some(refusal) => {
            let body = json!({
                "error": "already_decided",
                "message": refusal.to_string(),
                "decision": refusal.first,
                "permission": request,
            });
            Ok((StatusCode::CONFLICT, Json(body)).into_response())
        }
    }
}
