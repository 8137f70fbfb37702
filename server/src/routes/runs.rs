//! `/v1/runs`: start, inspect, list and cancel runs.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::live::{Item, LiveRun};
use crate::start::{RunBody, start};
use crate::state::Shared;
use crate::stored;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/v1/runs", post(create).get(list))
        .route("/v1/runs/{id}", get(show).delete(cancel))
}

/// `POST /v1/runs` → 201 `{run_id, events_url}`.
pub async fn create(
    State(state): State<Shared>,
    body: Result<Json<RunBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let run = start(&state, body)?;
    let events_url = format!("/v1/runs/{}/events", run.run_id);
    let body = json!({"run_id": run.run_id, "events_url": events_url});
    Ok((
        StatusCode::CREATED,
        [("location", format!("/v1/runs/{}", run.run_id))],
        Json(body),
    )
        .into_response())
}

#[derive(Debug, Deserialize)]
pub struct WorkdirQuery {
    pub workdir: Option<String>,
}

fn live_view(run: &LiveRun) -> Value {
    let result = run.result();
    json!({
        "run_id": run.run_id,
        "provider": run.provider,
        "workdir": run.workdir,
        "started_at_ms": run.started_at_ms,
        "state": if result.is_some() { "finished" } else { "running" },
        "events": run.event_count(),
        "subscribers": run.subscribers(),
        "result": result.as_deref(),
    })
}

/// `GET /v1/runs/{id}`: state and result, from memory or from the bundle.
pub async fn show(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<WorkdirQuery>,
) -> Result<Json<Value>, ApiError> {
    let run_id = stored::run_id(&id)?;
    if let Some(run) = state.runs.get(run_id.as_str()) {
        return Ok(Json(live_view(&run)));
    }
    let found = stored::load(&state, &run_id, query.workdir.as_deref()).await?;
    let events = found
        .items
        .iter()
        .filter(|i| matches!(i, Item::Event(_)))
        .count();
    let result = found.items.iter().find_map(|i| match i {
        Item::Result(r) => Some(r.clone()),
        Item::Event(_) => None,
    });
    Ok(Json(json!({
        "run_id": run_id.as_str(),
        "workdir": found.workdir,
        // A bundle without a result whose run is not in memory: its forge went away.
        "state": if result.is_some() { "finished" } else { "abandoned" },
        "events": events,
        "result": result.as_deref(),
    })))
}

/// `GET /v1/runs?workdir=`: the bundles under a workdir (newest first), else the runs of
/// this server.
pub async fn list(
    State(state): State<Shared>,
    Query(query): Query<WorkdirQuery>,
) -> Result<Json<Value>, ApiError> {
    let Some(dir) = query.workdir else {
        let runs: Vec<Value> = state.runs.all().iter().map(|r| live_view(r)).collect();
        return Ok(Json(json!({"runs": runs})));
    };
    let workdir = state
        .roots
        .confine(&dir)
        .map_err(|e| ApiError::path("workdir", &e))?;
    let runs = state
        .runtime
        .artifacts
        .list_runs(&workdir)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let runs: Vec<Value> = runs
        .into_iter()
        .map(|summary| {
            let live = state.runs.get(summary.record.run_id.as_str());
            let mut value = serde_json::to_value(&summary).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value {
                let state = match (&live, summary.has_result) {
                    (Some(run), _) if !run.is_finished() => "running",
                    (_, true) => "finished",
                    (_, false) => "abandoned",
                };
                map.insert("state".into(), state.into());
            }
            value
        })
        .collect();
    Ok(Json(json!({"workdir": workdir, "runs": runs})))
}

/// `DELETE /v1/runs/{id}`: cancel through the kill ladder → 202; the event stream then
/// ends with the cancelled result.
pub async fn cancel(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let run_id = stored::run_id(&id)?;
    let Some(run) = state.runs.get(run_id.as_str()) else {
        return Err(ApiError::not_found(format!(
            "no running run {}",
            run_id.as_str()
        )));
    };
    if !run.cancel() {
        return Err(ApiError::conflict(format!(
            "run {} has already finished",
            run.run_id
        )));
    }
    let body = json!({"run_id": run.run_id, "state": "cancelling"});
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}
