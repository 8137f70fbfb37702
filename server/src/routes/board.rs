//! The board's API: `GET /v1/providers` (what `doctor` says of each configured provider),
//! `GET /v1/board` (every task as a card, with the charts' numbers), `GET
//! /v1/board/tasks/{id}` (a task's detail), share links (`POST|GET
//! /v1/board/tasks/{id}/shares`, `DELETE /v1/shares/{share_id}`) and what a share link
//! opens without the server's token: `GET /v1/shared/{token}` and its `/events`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use forge_app::queue::approval_json;
use forge_domain::ForgeError;
use forge_domain::delivery::ApprovalId;
use forge_domain::queue_approval::QueueApproval;
use forge_domain::share::ShareLink;
use forge_domain::task::TaskId;
use forge_ports::{ShareLinks, TaskQueue};
use futures::Stream;
use serde::Deserialize;
use serde_json::{Value, json};

use super::events::EventsQuery;
use super::tasks::queue_error;
use crate::board::card::{Card, Filter, Source, local_card, queue_card};
use crate::board::snapshots::{Snapshot, comparable};
use crate::board::{detail, diff, local, share, stats};
use crate::composition::ConfigOverrides;
use crate::error::ApiError;
use crate::state::Shared;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::{delete, get, post};
    axum::Router::new()
        .route("/v1/providers", get(providers))
        .route("/v1/board", get(board))
        .route("/v1/board/tasks/{id}", get(task))
        .route(
            "/v1/board/tasks/{id}/shares",
            post(create_share).get(list_shares),
        )
        .route("/v1/shares/{share_id}", delete(revoke_share))
        .route("/v1/shared/{token}", get(shared))
        .route("/v1/shared/{token}/events", get(shared_events))
}

/// The most cards a board shows (newest first).
const MAX_CARDS: u32 = 5_000;

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn internal(e: ForgeError) -> ApiError {
    ApiError::internal(e.to_string())
}

fn task_id(id: &str) -> Result<TaskId, ApiError> {
    TaskId::new(id).map_err(|e| ApiError::bad_request(format!("task id: {e}")))
}

/// `GET /v1/providers`: the CLIs and every `[providers.NAME]` (ACP ones included), each
/// with what `doctor` says of it.
pub async fn providers(State(state): State<Shared>) -> Result<Json<Value>, ApiError> {
    let config = state
        .composition
        .config(&ConfigOverrides::default())
        .map_err(|e| ApiError::internal(format!("configuration: {e}")))?;
    let registry = state.composition.registry();
    let names = forge_app::doctor::provider_names(&config, &registry);
    let env = state.composition.environment();
    let runner = state.runtime.runner.as_ref();
    let detections = forge_app::doctor::detect(&config, &registry, runner, &names, &env)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let default = config.default_provider.value.clone();
    let listed: Vec<Value> = detections
        .iter()
        .map(|d| {
            let kind = config
                .providers
                .get(&d.provider)
                .and_then(|p| p.kind.as_ref())
                .map_or_else(|| "cli".to_owned(), |k| k.value.clone());
            json!({
                "name": d.provider,
                "kind": kind,
                "default": d.provider == default,
                "usable": d.usable(),
                "found": d.path.is_some(),
                "path": d.path,
                "version": d.version,
                "supported_range": d.supported_range,
                "version_supported": d.version_supported,
                "authenticated": d.authenticated,
                "auth_detail": d.auth_detail,
                "hints": d.hints,
            })
        })
        .collect();
    Ok(Json(json!({"default": default, "providers": listed})))
}

#[derive(Debug, Deserialize)]
pub struct BoardQuery {
    #[serde(flatten)]
    pub filter: Filter,
    pub limit: Option<u32>,
    /// `1`: keep what this answer holds for the page's live stream (`snapshot` in the
    /// answer, `from=` of `GET /v1/board/events`).
    pub snapshot: Option<u8>,
}

/// What a reader knows of a running task's events: the last seq read and its last stage.
pub(crate) type StageCache = HashMap<String, (u64, Option<Value>)>;

/// What `GET /v1/board` keeps between requests: the running tasks' events read so far, and
/// the queue's change counter read before they were. While the counter stays, no event was
/// stored (every stored event moves it), so none is read again.
#[derive(Debug, Default)]
pub struct BoardStages {
    pub counter: Option<u64>,
    pub stages: StageCache,
}

/// A running task, the last seq read of its events and its last stage.
type Running = (TaskId, u64, Option<Value>);

/// How many running tasks' events are read at once.
const READ_AT_ONCE: usize = 16;

/// The queue's cards: its newest `limit` tasks, the running ones with their last stage
/// (read after what `stages` already holds, several at once, and remembered there).
/// `new_events: false` (no event stored since `stages` was filled) reads the events only of
/// a running task `stages` does not hold.
pub(super) async fn queue_cards(
    queue: &dyn TaskQueue,
    limit: u32,
    stages: &mut StageCache,
    new_events: bool,
) -> Result<Vec<Card>, ApiError> {
    use futures::StreamExt;
    let tasks = queue.tasks(limit).await.map_err(queue_error)?;
    let approvals: HashMap<String, QueueApproval> = queue
        .approvals(true)
        .await
        .map_err(queue_error)?
        .into_iter()
        .map(|a| (a.task_id.as_str().to_owned(), a))
        .collect();
    // A final task's card shows no stage; a task never claimed has no events yet.
    let live: std::collections::HashSet<&str> = tasks
        .iter()
        .filter(|t| !t.state.is_final())
        .map(|t| t.task_id.as_str())
        .collect();
    stages.retain(|id, _| live.contains(id.as_str()));
    let running: Vec<Running> = tasks
        .iter()
        .filter(|t| !t.state.is_final() && t.attempts > 0)
        .filter(|t| new_events || !stages.contains_key(t.task_id.as_str()))
        .map(|t| {
            let (after, stage) = stages.get(t.task_id.as_str()).cloned().unwrap_or((0, None));
            (t.task_id.clone(), after, stage)
        })
        .collect();
    let read: Vec<Result<Running, ApiError>> = futures::stream::iter(running)
        .map(|(id, after, stage)| async move {
            let events = queue.events(&id, after).await.map_err(queue_error)?;
            let last = events.last().map_or(after, |e| e.seq);
            let newest = events
                .into_iter()
                .rev()
                .find(|e| e.kind == "stage")
                .map(|e| e.data);
            Ok((id, last, newest.or(stage)))
        })
        .buffered(READ_AT_ONCE)
        .collect()
        .await;
    for read in read {
        let (id, last, stage) = read?;
        stages.insert(id.as_str().to_owned(), (last, stage));
    }
    let now = now_ms();
    Ok(tasks
        .iter()
        .map(|task| {
            let stage = stages
                .get(task.task_id.as_str())
                .filter(|_| !task.state.is_final())
                .and_then(|(_, s)| s.as_ref());
            queue_card(task, approvals.get(task.task_id.as_str()), stage, now)
        })
        .collect())
}

/// `GET /v1/board?repo=&provider=&worker=&limit=`: every task as a card (the queue's and
/// the local ones under the roots), newest first, the filters' choices, and the charts'
/// numbers.
pub async fn board(
    State(state): State<Shared>,
    Query(query): Query<BoardQuery>,
) -> Result<Json<Value>, ApiError> {
    let limit = query.limit.unwrap_or(1_000).min(MAX_CARDS);
    let mut snapshot = None;
    let mut cards = match &state.queue {
        Some(queue) => {
            // The counter before the read (a wait of 0 ms returns it): a change after it
            // is seen by the next request and wakes the page's stream at once.
            let counter = queue.wait_for_changes(0, 0).await.ok();
            let mut known = state.board_stages.lock().await;
            let new_events = counter.is_none() || known.counter != counter;
            let cards = queue_cards(&**queue, limit, &mut known.stages, new_events).await?;
            known.counter = counter;
            snapshot = counter
                .filter(|_| query.snapshot == Some(1))
                .map(|counter| Snapshot {
                    counter,
                    cards: HashMap::new(),
                    stages: known.stages.clone(),
                });
            cards
        }
        None => Vec::new(),
    };
    let (records, problems) = local::tasks(state.composition.as_ref(), state.roots.dirs()).await;
    cards.extend(records.iter().map(|(record, _)| local_card(record)));
    cards.sort_by_key(|c| std::cmp::Reverse(c.submitted_at_ms));
    let facet = |pick: fn(&Card) -> Option<&str>| {
        let mut values: Vec<&str> = cards.iter().filter_map(pick).collect();
        values.sort_unstable();
        values.dedup();
        values.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let facets = json!({
        "repos": facet(|c| Some(c.repo.as_str())),
        "providers": facet(|c| c.provider.as_deref()),
        "workers": facet(|c| c.worker.as_deref()),
    });
    let shown: Vec<Card> = cards
        .into_iter()
        .filter(|c| query.filter.keeps(c))
        .take(limit as usize)
        .collect();
    let snapshot = snapshot.map(|mut snapshot| {
        snapshot.cards = shown
            .iter()
            .filter(|c| c.source == Source::Queue)
            .map(|c| (c.task_id.clone(), comparable(c)))
            .collect();
        state
            .board_snapshots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .keep(snapshot)
    });
    let mut body = json!({
        "queue": state.queue.is_some(),
        "facets": facets,
        "stats": stats::stats(&shown),
        "cards": shown,
        "problems": problems,
    });
    if let Some(id) = snapshot {
        body["snapshot"] = json!(id);
    }
    Ok(Json(body))
}

/// The diff of a delivered commit in a repository on this machine inside the roots, or
/// why there is none to show.
async fn commit_diff(
    state: &Shared,
    repo: Option<PathBuf>,
    from: Option<String>,
    commit: Option<&str>,
) -> (Option<String>, Option<String>) {
    let Some(commit) = commit else {
        return (
            None,
            Some("no commit yet: the change is held in its work tree (the files above are its lines)".into()),
        );
    };
    let Some(repo) = repo else {
        return (
            None,
            Some("the repository is not on this machine inside the roots".into()),
        );
    };
    let Some(vcs) = &state.runtime.vcs else {
        return (None, Some("no git here".into()));
    };
    let from = from.unwrap_or_else(|| format!("{commit}~1"));
    match vcs.diff(&repo, &from, commit).await {
        Ok(text) => (Some(text), None),
        Err(e) => (None, Some(format!("the diff could not be read: {e}"))),
    }
}

/// A queued task's repository as a directory inside the roots (a path or a `file://` URL).
fn local_repo(state: &Shared, repo: &str) -> Option<PathBuf> {
    let path = repo.strip_prefix("file://").unwrap_or(repo);
    state.roots.confine(path).ok().filter(|p| p.is_dir())
}

/// The detail of task `id`, from the queue or from a local store.
async fn task_detail(state: &Shared, id: &TaskId) -> Result<Value, ApiError> {
    if let Some(queue) = &state.queue
        && let Some(task) = queue.task(id).await.map_err(queue_error)?
    {
        let events = queue.events(id, 0).await.map_err(queue_error)?;
        let approval = queue
            .approvals(true)
            .await
            .map_err(queue_error)?
            .into_iter()
            .find(|a| a.task_id == *id);
        let stage = events
            .iter()
            .rev()
            .find(|e| e.kind == "stage")
            .map(|e| e.data.clone());
        let card = queue_card(&task, approval.as_ref(), stage.as_ref(), now_ms());
        let report = task.report.as_ref();
        let commit = report
            .and_then(|r| r.pointer("/delivery/commit"))
            .and_then(Value::as_str)
            .or_else(|| {
                approval
                    .as_ref()
                    .and_then(|a| match &a.outcome {
                        Some(forge_domain::queue_approval::ApprovalOutcome::Done { report }) => {
                            report.pointer("/delivery/commit")
                        }
                        _ => None,
                    })
                    .and_then(Value::as_str)
            });
        let pushed = report
            .and_then(|r| r.pointer("/delivery/pushed"))
            .and_then(Value::as_bool)
            == Some(true);
        let (text, note) = if !task.state.is_final() {
            (
                None,
                Some("the task has not ended: its change is still being made".into()),
            )
        } else if commit.is_some() && !pushed {
            (
                None,
                Some(format!(
                    "committed in the cache of worker {} and not pushed: the files above are its lines",
                    task.worker.as_deref().unwrap_or("?")
                )),
            )
        } else {
            commit_diff(state, local_repo(state, &task.repo), None, commit).await
        };
        let files = diff::files(report, text.as_deref());
        let stages = detail::stages(&events, task.finished_at_ms);
        let mut value = detail::detail(
            &card,
            &task.prompt,
            report,
            stages,
            approval.as_ref().map(approval_json),
            &files,
            note,
        );
        super::tasks::add_lineage(&mut value, queue.as_ref(), &task).await?;
        return Ok(value);
    }
    let (record, store, repo) = local::find(state.composition.as_ref(), state.roots.dirs(), id)
        .await
        .map_err(internal)?
        .ok_or_else(|| {
            ApiError::not_found(format!("no task {id} in the queue or under the roots"))
        })?;
    let card = local_card(&record);
    let approval = match card.approval_id.as_deref().map(ApprovalId::new) {
        Some(Ok(aid)) => store
            .approval(&aid)
            .await
            .map_err(internal)?
            .map(|a| serde_json::to_value(a).unwrap_or_default()),
        _ => None,
    };
    let change = store.change(id).await.map_err(internal)?;
    let (text, note) = match &change {
        Some(change) => {
            commit_diff(
                state,
                Some(repo),
                change.base.clone(),
                change.commit.as_deref(),
            )
            .await
        }
        None => (None, Some("no change recorded".into())),
    };
    let files = diff::files(Some(&record.report), text.as_deref());
    let prompt = record
        .report
        .get("task")
        .and_then(Value::as_str)
        .unwrap_or(&record.title)
        .to_owned();
    Ok(detail::detail(
        &card,
        &prompt,
        Some(&record.report),
        Vec::new(),
        approval,
        &files,
        note,
    ))
}

/// `GET /v1/board/tasks/{id}`: the task's detail.
pub async fn task(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = task_id(&id)?;
    Ok(Json(task_detail(&state, &id).await?))
}

fn shares_of(state: &Shared) -> Result<Arc<dyn ShareLinks>, ApiError> {
    state.shares.clone().ok_or_else(|| {
        ApiError::not_found(
            "share links are kept in the queue's database: start serve with --queue URL",
        )
    })
}

fn link_json(link: &ShareLink) -> Value {
    json!({
        "share_id": link.share_id,
        "task_id": link.task_id,
        "created_by": link.created_by,
        "created_at_ms": link.created_at_ms,
        "revoked_at_ms": link.revoked_at_ms,
        "active": link.is_active(),
    })
}

/// `POST /v1/board/tasks/{id}/shares` → 201 `{token, url, link}`: a read-only link to the
/// task (the token is shown this once).
pub async fn create_share(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = task_id(&id)?;
    let shares = shares_of(&state)?;
    // Only a task that exists is shared.
    task_detail(&state, &id).await?;
    let (link, token) =
        share::mint(&id, "serve").map_err(|e| ApiError::internal(format!("random: {e}")))?;
    let link = shares.create_share(&link).await.map_err(internal)?;
    let body = json!({
        "token": token,
        "url": format!("/share/{token}"),
        "link": link_json(&link),
    });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// `GET /v1/board/tasks/{id}/shares`: the task's links (never their tokens).
pub async fn list_shares(
    State(state): State<Shared>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = task_id(&id)?;
    let links = shares_of(&state)?.shares(&id).await.map_err(internal)?;
    let links: Vec<Value> = links.iter().map(link_json).collect();
    Ok(Json(json!({"shares": links})))
}

/// `DELETE /v1/shares/{share_id}`: revokes the link; it opens nothing from now on.
pub async fn revoke_share(
    State(state): State<Shared>,
    Path(share_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let link = shares_of(&state)?
        .revoke_share(&share_id)
        .await
        .map_err(internal)?
        .ok_or_else(|| ApiError::not_found(format!("no share link {share_id}")))?;
    Ok(Json(json!({"link": link_json(&link)})))
}

/// The task a share token opens; 404 for any token that does not (unknown, wrong secret,
/// revoked — told apart for nobody).
async fn shared_task(state: &Shared, token: &str) -> Result<TaskId, ApiError> {
    let refused = || ApiError::not_found("no such share link (or it was revoked)");
    let (share_id, secret) = share::parse(token).ok_or_else(refused)?;
    let link = shares_of(state)?
        .share(share_id)
        .await
        .map_err(internal)?
        .ok_or_else(refused)?;
    if share::opens(&link, secret) {
        Ok(link.task_id)
    } else {
        Err(refused())
    }
}

/// `GET /v1/shared/{token}`: the shared task's detail, without the server's token.
pub async fn shared(
    State(state): State<Shared>,
    Path(token): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = shared_task(&state, &token).await?;
    let mut detail = task_detail(&state, &id).await?;
    detail["shared"] = json!(true);
    Ok(Json(detail))
}

/// `GET /v1/shared/{token}/events`: the shared task's stored events as Server-Sent Events.
pub async fn shared_events(
    State(state): State<Shared>,
    Path(token): Path<String>,
    query: Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>>, ApiError> {
    let id = shared_task(&state, &token).await?;
    super::tasks::events(State(state), Path(id.as_str().to_owned()), query, headers).await
}
