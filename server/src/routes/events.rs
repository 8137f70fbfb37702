//! `GET /v1/runs/{id}/events`: the run's canonical events as Server-Sent Events.
//!
//! `id:` is the event's sequence (its line in `events.jsonl`), `event:` its kind, `data:`
//! its JSON; the last event is `result` with the ExecutionResult. `Last-Event-ID` (or
//! `?after=N`) resumes after N, from memory for this server's runs and from the bundle for
//! the others (finished earlier, or before a restart).

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use serde::Deserialize;

use crate::error::ApiError;
use crate::live::{Item, Subscription};
use crate::state::{Shared, StreamGuard};
use crate::stored;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::get;
    axum::Router::new().route("/v1/runs/{id}/events", get(events))
}

/// Comment lines this often keep proxies from closing an idle stream, and let the server
/// notice a client that went away.
pub const KEEP_ALIVE: Duration = Duration::from_secs(1);

#[derive(Debug, Deserialize)]
pub struct EventsQuery {
    pub after: Option<u64>,
    pub workdir: Option<String>,
}

/// Where a stream's items come from.
enum Source {
    Live(Subscription),
    Stored(std::vec::IntoIter<Item>),
}

impl Source {
    async fn next(&mut self) -> Option<Item> {
        match self {
            Source::Live(sub) => sub.next().await,
            Source::Stored(items) => items.next(),
        }
    }
}

/// The resume point: the `Last-Event-ID` header, else `?after=`, else 0.
///
/// # Errors
/// 400 when the header is not a sequence number.
pub fn resume_point(headers: &HeaderMap, after: Option<u64>) -> Result<u64, ApiError> {
    match headers.get("last-event-id") {
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| ApiError::bad_request("Last-Event-ID: not a sequence number")),
        None => Ok(after.unwrap_or(0)),
    }
}

pub async fn events(
    State(state): State<Shared>,
    Path(id): Path<String>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let run_id = stored::run_id(&id)?;
    let after = resume_point(&headers, query.after)?;
    let source = match state.runs.get(run_id.as_str()) {
        Some(run) => Source::Live(run.subscribe(after)),
        None => {
            let found = stored::load(&state, &run_id, query.workdir.as_deref()).await?;
            let items: Vec<Item> = found
                .items
                .into_iter()
                .filter(|item| match item {
                    Item::Event(frame) => frame.seq > after,
                    Item::Result(_) => true,
                })
                .collect();
            Source::Stored(items.into_iter())
        }
    };
    let guard = state.http.stream_opened();
    let stream = futures::stream::unfold(
        (source, guard),
        |(mut source, guard): (Source, StreamGuard)| async move {
            let item = source.next().await?;
            Some((Ok(sse_event(&item)), (source, guard)))
        },
    );
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// One SSE message of an item.
pub fn sse_event(item: &Item) -> Event {
    match item {
        Item::Event(frame) => Event::default()
            .id(frame.seq.to_string())
            .event(frame.event.kind())
            .data(&*frame.json),
        Item::Result(result) => Event::default()
            .event("result")
            .data(serde_json::to_string(&**result).unwrap_or_else(|_| "{}".into())),
    }
}
