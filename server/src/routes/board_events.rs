//! `GET /v1/board/events`: the board live, as Server-Sent Events — a `card` message each
//! time a task's card changes (new, moved to another column, a new stage, cost, attempt),
//! so the page moves cards without polling.
//!
//! The stream waits on the queue's change notifications ([`TaskQueue::wait_for_changes`]:
//! PostgreSQL's `LISTEN`; SQLite's change counter, see docs/board.md), reads the queue's
//! newest tasks only after a change, and sends only the cards that differ from what it
//! sent before. Local tasks (`task run`) come with the page's first `GET /v1/board`; they
//! are final when stored.
//!
//! The agents' permission requests come on the same stream ([`PermissionFeed`]:
//! `permission_requested`, `permission_decided`), for the "Waiting for you" column — on
//! a server without a queue too, whose stream then carries them alone.
//!
//! [`TaskQueue::wait_for_changes`]: forge_ports::TaskQueue::wait_for_changes

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;

use super::board::{StageCache, queue_cards};
use super::events::KEEP_ALIVE;
use super::permission_feed::PermissionFeed;
use crate::board::card::{Card, Filter};
use crate::board::snapshots::comparable;
use crate::error::ApiError;
use crate::state::Shared;

/// This area's routes (`routes/mod.rs` merges every area's).
pub(super) fn routes() -> axum::Router<Shared> {
    use axum::routing::get;
    axum::Router::new().route("/v1/board/events", get(board_events))
}

/// The longest wait for a change before the stream reads the queue anyway (a lost
/// notification costs at most this).
pub const WAIT_MS: u64 = 30_000;
/// The pause after the queue could not be reached.
const RETRY_MS: u64 = 1_000;

#[derive(Debug, Deserialize)]
pub struct BoardEventsQuery {
    #[serde(flatten)]
    pub filter: Filter,
    pub limit: Option<u32>,
    /// The `snapshot` of the page's `GET /v1/board`: the stream starts from the cards the
    /// page holds and sends what changed since (else every card first).
    pub from: Option<String>,
}

struct Watch {
    state: Shared,
    filter: Filter,
    limit: u32,
    sent: HashMap<String, Card>,
    stages: StageCache,
    pending: Vec<Event>,
    /// The queue's change counter when the cards were last read (0: never).
    seen: u64,
}

impl Watch {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.pending.pop() {
                return Some(event);
            }
            let queue = self.state.queue.clone()?;
            // The counter is taken before the read: a change during the read wakes the
            // next wait at once.
            match queue.wait_for_changes(self.seen, WAIT_MS).await {
                Ok(counter) => self.seen = counter,
                Err(e) => {
                    tokio::time::sleep(Duration::from_millis(RETRY_MS)).await;
                    let data = json!({"error": "queue_unreachable", "message": e.to_string()});
                    return Some(Event::default().event("error").data(data.to_string()));
                }
            }
            match queue_cards(&*queue, self.limit, &mut self.stages, true).await {
                Ok(cards) => {
                    // Oldest first out of `pending` (it is popped from the end).
                    for card in cards.into_iter().filter(|c| self.filter.keeps(c)) {
                        // The elapsed time of a running task changes every tick; the page
                        // counts it on by itself.
                        let seen = comparable(&card);
                        if self.sent.get(&card.task_id) != Some(&seen) {
                            let data = serde_json::to_string(&card).unwrap_or_else(|_| "{}".into());
                            self.pending.push(Event::default().event("card").data(data));
                            self.sent.insert(card.task_id.clone(), seen);
                        }
                    }
                }
                Err(e) => {
                    let data = json!({"error": e.kind, "message": e.message});
                    self.pending
                        .push(Event::default().event("error").data(data.to_string()));
                }
            }
        }
    }
}

/// The stream's messages: the queue's cards and the permission requests, each when this
/// server has them.
type Messages = BoxStream<'static, Result<Event, Infallible>>;

/// `GET /v1/board/events?repo=&provider=&worker=&limit=`.
pub async fn board_events(
    State(state): State<Shared>,
    Query(query): Query<BoardEventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let permissions = state
        .permissions
        .as_ref()
        .map(|watch| PermissionFeed::new(watch, None).into_stream());
    let guard = state.http.stream_opened();
    let cards = state.queue.is_some().then(|| card_messages(state, query));
    let stream: Messages = match (cards, permissions) {
        (Some(cards), Some(permissions)) => futures::stream::select(cards, permissions).boxed(),
        (Some(cards), None) => cards.boxed(),
        (None, Some(permissions)) => permissions.boxed(),
        (None, None) => {
            return Err(ApiError::not_found(
                "no task queue and no permission requests: the board is live with serve --queue URL",
            ));
        }
    };
    // Counted open for as long as the client keeps it.
    let stream = stream
        .map(move |message| {
            let _open = &guard;
            message
        })
        .boxed();
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// The queue's changed cards, from the snapshot the page holds (`from=`).
fn card_messages(state: Shared, query: BoardEventsQuery) -> Messages {
    let snapshot = query
        .from
        .as_deref()
        .and_then(|id| {
            state
                .board_snapshots
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take(id)
        })
        .unwrap_or_default();
    let watch = Watch {
        filter: query.filter,
        limit: query.limit.unwrap_or(1_000).min(5_000),
        sent: snapshot.cards,
        stages: snapshot.stages,
        pending: Vec::new(),
        seen: snapshot.counter,
        state,
    };
    futures::stream::unfold(watch, |mut watch| async move {
        let event = watch.next().await?;
        Some((Ok(event), watch))
    })
    .boxed()
}
