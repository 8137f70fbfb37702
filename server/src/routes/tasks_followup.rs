//! `POST /v1/tasks/{id}/followups` (issue 39): a follow-up of a queued task asked by hand,
//! as `task submit --follow-up` asks it — `{"prompt": "…"}` → 201 with the new task's id; its
//! branch and agent session are the task's (the session travels through the queue to
//! whichever worker takes it). 404 for an unknown task, 409 for one that delivered nothing
//! pushed yet.

use axum::Json;
use axum::extract::{Path, State};

use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use super::tasks::{queue, queue_error, task_id};
use crate::error::ApiError;
use crate::state::Shared;

/// The follow-up's request body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FollowupBody {
    pub prompt: String,
    #[serde(default)]
    pub max_attempts: Option<u32>,
}

pub async fn followup(
    State(state): State<Shared>,
    Path(id): Path<String>,
    body: Result<Json<FollowupBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let queue = queue(&state)?;
    let parent_id = task_id(&id)?;
    let parent = queue
        .task(&parent_id)
        .await
        .map_err(queue_error)?
        .ok_or_else(|| ApiError::not_found(format!("no task {parent_id}")))?;
    let (repo, options) = forge_app::queue::followup_options(&parent)
        .map_err(|e| ApiError::conflict(e.to_string()))?;
    let id = forge_domain::task::TaskId::new(format!("q-{}", state.runtime.ids.run_id()))
        .map_err(|e| ApiError::internal(format!("a new task id: {e}")))?;
    let attempts = body.max_attempts.or(Some(parent.max_attempts));
    let submission = forge_app::queue::submission(id, repo, body.prompt, &options, attempts)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let task = queue.submit(&submission).await.map_err(queue_error)?;
    Ok(super::tasks::created(&task, json!({"parent": parent_id})))
}
