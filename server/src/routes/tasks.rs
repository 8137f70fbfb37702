//! `/v1/tasks` (`serve --queue URL`): the queue's tasks, whichever worker runs them — list,
//! show, submit, cancel, and a task's stored events as Server-Sent Events.
//!
//! The events come from the queue, not from this process: a task running on another
//! machine streams as its worker appends them (PostgreSQL: woken by NOTIFY; SQLite: a short
//! poll). `id:` is the event's per-task sequence number, so `Last-Event-ID` (or `?after=N`)
//! resumes after N; once the task is final and every event was sent, a last `task` message
//! carries the task with its report and the stream ends. The task's permission requests
//! come on it too, until it ends (`permission_requested`, `permission_decided`, no `id:`;
//! see [`super::permission_feed`]).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use forge_app::queue::TaskOptions;
use forge_domain::ForgeError;
use forge_domain::queue::{QueueEvent, QueueSubmission, QueuedTask};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};

use super::events::{EventsQuery, KEEP_ALIVE, resume_point};
use super::permission_feed::PermissionFeed;
use crate::error::ApiError;
use crate::state::{Shared, StreamGuard};

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/v1/tasks", post(submit).get(list))
        .route("/v1/tasks/{id}", get(show).delete(cancel))
        .route("/v1/tasks/{id}/events", get(events))
        .route(
            "/v1/tasks/{id}/followups",
            post(super::tasks_followup::followup),
        )
}

/// How long a stream waits for a task's next event before it looks again (a notification
/// lost while the database was away costs at most this).
const EVENT_WAIT_MS: u64 = 1_000;

pub(super) fn queue(state: &Shared) -> Result<Arc<dyn TaskQueue>, ApiError> {
    state.queue.clone().ok_or_else(|| {
        ApiError::not_found("no task queue: start serve with --queue URL (or [queue] url)")
    })
}

pub(super) fn task_id(id: &str) -> Result<TaskId, ApiError> {
    TaskId::new(id).map_err(|e| ApiError::bad_request(format!("task id: {e}")))
}

pub(super) fn queue_error(e: ForgeError) -> ApiError {
    match e {
        ForgeError::InvalidRequest { reason } => ApiError::bad_request(reason),
        other => ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            kind: "queue_unavailable",
            message: other.to_string(),
        },
    }
}

async fn find(queue: &dyn TaskQueue, id: &TaskId) -> Result<QueuedTask, ApiError> {
    queue
        .task(id)
        .await
        .map_err(queue_error)?
        .ok_or_else(|| ApiError::not_found(format!("no task {id} in the queue")))
}

/// A task as listed: everything but its prompt's options and report (`GET /v1/tasks/{id}`
/// has those).
fn summary(task: &QueuedTask) -> Value {
    let mut value = serde_json::to_value(task).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("options");
        map.remove("report");
    }
    value
}

#[cfg(test)]
mod pull_request_tests {
    use super::*;

    #[test]
    fn the_reports_pull_request_is_lifted_once_opened() {
        let opened = json!({"report": {"pull_request": {"url": "https://github.com/o/r/pull/7",
            "number": 7, "state": "open", "draft": true, "closes": 3}}});
        assert_eq!(
            pull_request(&opened),
            Some(
                json!({"url": "https://github.com/o/r/pull/7", "number": 7, "state": "open", "draft": true})
            )
        );
        // Not opened (the forge refused or was down), no report, no pull request: none.
        for task in [
            json!({"report": {"pull_request": {"error": "github down"}}}),
            json!({"report": {}}),
            json!({}),
        ] {
            assert_eq!(pull_request(&task), None, "{task}");
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    pub limit: Option<u32>,
}

/// `GET /v1/tasks?limit=N` (default 100): newest first.
pub async fn list(
    State(state): State<Shared>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let tasks = queue(&state)?
        .tasks(query.limit.unwrap_or(100).min(1_000))
        .await
        .map_err(queue_error)?;
    let tasks: Vec<Value> = tasks.iter().map(summary).collect();
    Ok(Json(json!({"tasks": tasks})))
}

/// `GET /v1/tasks/{id}`: the task with its options and report.
pub async fn show(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = task_id(&id)?;
    let queue = queue(&state)?;
    let task = find(&*queue, &id).await?;
    let mut value = serde_json::to_value(&task).unwrap_or_default();
    if let Some(pull_request) = pull_request(&value) {
        value["pull_request"] = pull_request;
    }
    add_lineage(&mut value, &*queue, &task).await?;
    Ok(Json(value))
}

/// Sets `parent` (the task a follow-up continues) and `followups` (the tasks that continue
/// it, oldest first) on a task's JSON (issue 39).
///
/// # Errors
/// When the queue cannot be read.
pub(crate) async fn add_lineage(
    value: &mut Value,
    queue: &dyn TaskQueue,
    task: &QueuedTask,
) -> Result<(), ApiError> {
    if let Some(of) = forge_app::forges::known::options_of(task).followup {
        value["parent"] = json!(of.parent);
    }
    let all = queue.tasks(2_000).await.map_err(queue_error)?;
    value["followups"] = json!(followups_of(&all, &task.task_id));
    Ok(())
}

/// The ids of the follow-ups of task `id`, oldest first.
fn followups_of(tasks: &[QueuedTask], id: &TaskId) -> Vec<TaskId> {
    let mut found: Vec<&QueuedTask> = tasks
        .iter()
        .filter(|t| {
            forge_app::forges::known::options_of(t)
                .followup
                .is_some_and(|of| &of.parent == id)
        })
        .collect();
    found.sort_by_key(|t| t.submitted_at_ms);
    found.into_iter().map(|t| t.task_id.clone()).collect()
}

/// The task's pull request from its report (issue 39): `{url, number, state, draft}`, once
/// opened.
fn pull_request(task: &Value) -> Option<Value> {
    let pr = task.pointer("/report/pull_request")?;
    let field = |key: &str| pr.get(key).cloned();
    Some(json!({
        "url": field("url")?,
        "number": field("number")?,
        "state": field("state")?,
        "draft": field("draft")?,
    }))
}

/// `POST /v1/tasks`: what `task submit` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubmitBody {
    pub repo: String,
    pub prompt: String,
    #[serde(default)]
    pub options: TaskOptions,
    #[serde(default)]
    pub max_attempts: Option<u32>,
}

/// The submission of a body, or why it is refused (the same rules as `task submit`).
fn submission(body: SubmitBody, task_id: TaskId) -> Result<QueueSubmission, String> {
    forge_app::queue::submission(
        task_id,
        body.repo,
        body.prompt,
        &body.options,
        body.max_attempts,
    )
    .map_err(|e| e.to_string())
}

/// `POST /v1/tasks` → 201 `{task_id, events_url}`.
pub async fn submit(
    State(state): State<Shared>,
    body: Result<Json<SubmitBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(body) = body.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let queue = queue(&state)?;
    let id = TaskId::new(format!("q-{}", state.runtime.ids.run_id()))
        .map_err(|e| ApiError::internal(format!("a new task id: {e}")))?;
    let mut submission = submission(body, id).map_err(ApiError::bad_request)?;
    // A URL, or a repository inside the roots: a token holder points workers nowhere else.
    submission.repo = state
        .roots
        .repository(submission.repo.trim())
        .map_err(|e| {
            ApiError::bad_request(format!(
                "repo: {e} (roots: {}); a task's repository is a URL or a path inside them",
                state.roots.shown()
            ))
        })?
        .into_string();
    let task = queue.submit(&submission).await.map_err(queue_error)?;
    Ok(created(&task, json!({})))
}

/// 201 for a task just queued: where it is (`Location`), its id and its event stream, with
/// `extra`'s fields.
pub(super) fn created(task: &QueuedTask, extra: Value) -> Response {
    let mut body = json!({
        "task_id": task.task_id,
        "events_url": format!("/v1/tasks/{}/events", task.task_id),
    });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    (
        StatusCode::CREATED,
        [("location", format!("/v1/tasks/{}", task.task_id))],
        Json(body),
    )
        .into_response()
}

/// `DELETE /v1/tasks/{id}`: the queue's cancel — a queued task ends at once (200), a running
/// one is stopped by its worker's next heartbeat, on whichever machine (202); a final task
/// is a conflict (409).
pub async fn cancel(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = task_id(&id)?;
    let queue = queue(&state)?;
    let before = find(&*queue, &id).await?;
    if before.state.is_final() {
        return Err(ApiError::conflict(format!(
            "task {id} has already ended: {}",
            before.state
        )));
    }
    let task = queue
        .cancel(&id)
        .await
        .map_err(queue_error)?
        .ok_or_else(|| ApiError::not_found(format!("no task {id} in the queue")))?;
    let status = if task.state.is_final() {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    let body = json!({
        "task_id": task.task_id,
        "state": if task.state.is_final() { task.state.as_str() } else { "cancelling" },
    });
    Ok((status, Json(body)).into_response())
}

/// One SSE message of a stored event.
fn event_message(event: &QueueEvent) -> Event {
    Event::default()
        .id(event.seq.to_string())
        .event(event.kind.clone())
        .data(serde_json::to_string(event).unwrap_or_else(|_| "{}".into()))
}

/// The stream's reader of the queue.
struct Tail {
    queue: Arc<dyn TaskQueue>,
    id: TaskId,
    after: u64,
    pending: VecDeque<Event>,
    done: bool,
    _guard: StreamGuard,
    /// Dropped with the tail: the task's permission requests end with its events.
    _ended: tokio::sync::oneshot::Sender<()>,
}

impl Tail {
    /// The next message: stored events after the resume point, then (the task final and
    /// nothing left) the task itself; `None` after that.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(message) = self.pending.pop_front() {
                return Some(message);
            }
            if self.done {
                return None;
            }
            // The state first: events appended before it turned final are read below.
            let task = match self.queue.task(&self.id).await {
                Ok(Some(task)) => task,
                Ok(None) => return None,
                Err(e) => {
                    self.unavailable(&e).await;
                    continue;
                }
            };
            match self.queue.events(&self.id, self.after).await {
                Ok(events) => {
                    for event in &events {
                        self.after = event.seq;
                        self.pending.push_back(event_message(event));
                    }
                }
                Err(e) => {
                    self.unavailable(&e).await;
                    continue;
                }
            }
            if !self.pending.is_empty() {
                continue;
            }
            if task.state.is_final() {
                self.done = true;
                let data = serde_json::to_string(&task).unwrap_or_else(|_| "{}".into());
                self.pending
                    .push_back(Event::default().event("task").data(data));
                continue;
            }
            if let Err(e) = self.queue.wait_for_events(&self.id, EVENT_WAIT_MS).await {
                self.unavailable(&e).await;
            }
        }
    }

    /// The queue did not answer: say so on the stream, wait, try again (a database
    /// restart is waited out; the client may also reconnect with `Last-Event-ID`).
    async fn unavailable(&mut self, e: &ForgeError) {
        let data = json!({"error": "queue_unavailable", "message": e.to_string()});
        self.pending
            .push_back(Event::default().event("error").data(data.to_string()));
        tokio::time::sleep(std::time::Duration::from_millis(EVENT_WAIT_MS)).await;
    }
}

/// `GET /v1/tasks/{id}/events`.
pub async fn events(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let id = task_id(&id)?;
    let after = resume_point(&headers, query.after)?;
    let queue = queue(&state)?;
    find(&*queue, &id).await?;
    let (ended, end) = tokio::sync::oneshot::channel();
    let permissions = state.permissions.as_ref().map(|watch| {
        let owner = forge_domain::permission::PermissionOwner::Task(id.clone());
        PermissionFeed::new(watch, Some(owner))
            .into_stream()
            .take_until(end)
    });
    let tail = Tail {
        queue,
        id,
        after,
        pending: VecDeque::new(),
        done: false,
        _guard: state.http.stream_opened(),
        _ended: ended,
    };
    let stream = futures::stream::unfold(tail, |mut tail| async move {
        let message = tail.next().await?;
        Some((Ok(message), tail))
    });
    let stream = match permissions {
        Some(permissions) => futures::stream::select(stream, permissions).boxed(),
        None => stream.boxed(),
    };
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

#[cfg(test)]
mod tests {
    use forge_domain::queue::DEFAULT_MAX_ATTEMPTS;

    use super::*;

    fn body(value: Value) -> SubmitBody {
        serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn submissions_follow_task_submits_rules() {
        let check = |value: Value, expected: Result<u32, &str>| {
            let id = TaskId::new("q-1").unwrap_or_else(|e| panic!("{e}"));
            let got = submission(body(value.clone()), id).map(|s| s.max_attempts);
            match (&got, expected) {
                (Ok(n), Ok(m)) => assert_eq!(*n, m, "{value}"),
                (Err(reason), Err(says)) => assert!(reason.contains(says), "{value}: {reason}"),
                _ => panic!("{value}: {got:?}"),
            }
        };
        check(
            json!({"repo": "file:///r", "prompt": "p"}),
            Ok(DEFAULT_MAX_ATTEMPTS),
        );
        check(
            json!({"repo": "file:///r", "prompt": "p", "max_attempts": 1,
                   "options": {"provider": "codex", "base": "main"}}),
            Ok(1),
        );
        check(json!({"repo": " ", "prompt": "p"}), Err("repo"));
        check(json!({"repo": "file:///r", "prompt": ""}), Err("prompt"));
        check(
            json!({"repo": "file:///r", "prompt": "p", "max_attempts": 0}),
            Err("max_attempts"),
        );
        // A URL task is delivered like a local one: --push travels with it.
        check(
            json!({"repo": "file:///r", "prompt": "p", "options": {"push": true}}),
            Ok(DEFAULT_MAX_ATTEMPTS),
        );
    }

    #[test]
    fn unknown_fields_are_refused() {
        for value in [
            json!({"repo": "r", "prompt": "p", "teleport": 1}),
            json!({"repo": "r", "prompt": "p", "options": {"teleport": 1}}),
            json!({"prompt": "p"}),
        ] {
            assert!(
                serde_json::from_value::<SubmitBody>(value.clone()).is_err(),
                "{value}"
            );
        }
    }
}
