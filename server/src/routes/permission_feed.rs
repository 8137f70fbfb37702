//! The agents' permission requests as Server-Sent Events, for the board's stream
//! (`GET /v1/board/events`: the "Waiting for you" column) and a queued task's
//! (`GET /v1/tasks/{id}/events`: its page): first a `permissions` message with the
//! pending ones (`GET /v1/permissions`'s body: the page starts over from it, on a
//! reconnection too), then a `permission_requested` message for each new request and a
//! `permission_decided` one when a request is no longer pending — their payload is the
//! run's event's (`{"type", "request"}`), the request as `GET /v1/permissions` shows it.
//!
//! The requests are rows of a store that other processes write too (a queued task's
//! worker, `permissions allow --queue` on another machine), and the store has no change
//! feed: the stream reads the pending ones every [`POLL_MS`] on the server and sends
//! only what changed, so the page gets events instead of polling itself.

use std::collections::{BTreeSet, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event;
use forge_domain::permission::{PermissionId, PermissionOwner, PermissionRequest};
use forge_ports::PermissionRequests;
use futures::Stream;
use serde_json::json;

use super::permissions::request_json;

/// How often the store is read: a request reaches the page within this.
pub const POLL_MS: u64 = 500;

/// What a stream has sent of the store's requests.
pub(crate) struct PermissionFeed {
    store: Arc<dyn PermissionRequests>,
    /// Only this owner's requests (a task's page); every one when `None` (the board).
    owner: Option<PermissionOwner>,
    /// The requests sent as pending and not yet as decided.
    shown: BTreeSet<PermissionId>,
    pending: VecDeque<Event>,
    /// Whether the first message (every pending request) was sent; the later reads are
    /// [`POLL_MS`] apart.
    started: bool,
}

impl PermissionFeed {
    pub(crate) fn new(store: Arc<dyn PermissionRequests>, owner: Option<PermissionOwner>) -> Self {
        Self {
            store,
            owner,
            shown: BTreeSet::new(),
            pending: VecDeque::new(),
            started: false,
        }
    }

    /// The feed as a never-ending stream of messages (it ends with its client).
    pub(crate) fn into_stream(self) -> impl Stream<Item = Result<Event, Infallible>> {
        futures::stream::unfold(self, |mut feed| async move {
            let event = feed.next().await;
            Some((Ok(event), feed))
        })
    }

    async fn next(&mut self) -> Event {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return event;
            }
            if self.started {
                tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
                self.read().await;
            } else if self.read_first().await {
                self.started = true;
            }
        }
    }

    /// The pending requests as the stream opens, in one message; false (an `error`
    /// message sent instead) when the store could not be read.
    async fn read_first(&mut self) -> bool {
        match self.store.pending_permissions(self.owner.as_ref()).await {
            Ok(listed) => {
                self.shown = listed.iter().map(|r| r.id.clone()).collect();
                let listed: Vec<_> = listed.iter().map(request_json).collect();
                let data = json!({"permissions": listed});
                self.pending
                    .push_back(Event::default().event("permissions").data(data.to_string()));
                true
            }
            Err(e) => {
                self.unreachable(&e);
                tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
                false
            }
        }
    }

    fn unreachable(&mut self, e: &forge_domain::ForgeError) {
        let data = json!({"error": "permissions_unreachable", "message": e.to_string()});
        self.pending
            .push_back(Event::default().event("error").data(data.to_string()));
    }

    /// Reads the pending requests once: the new ones are requested, those gone decided
    /// (as the store has them now). A store that cannot be read is said once and tried
    /// again at the next read.
    async fn read(&mut self) {
        let listed = match self.store.pending_permissions(self.owner.as_ref()).await {
            Ok(listed) => listed,
            Err(e) => {
                self.unreachable(&e);
                return;
            }
        };
        let now: BTreeSet<&PermissionId> = listed.iter().map(|r| &r.id).collect();
        let gone: Vec<PermissionId> = self
            .shown
            .iter()
            .filter(|id| !now.contains(id))
            .cloned()
            .collect();
        for request in &listed {
            if self.shown.insert(request.id.clone()) {
                self.pending
                    .push_back(message("permission_requested", request));
            }
        }
        for id in gone {
            match self.store.permission(&id).await {
                Ok(Some(request)) => {
                    self.shown.remove(&id);
                    self.pending
                        .push_back(message("permission_decided", &request));
                }
                // Gone from the store altogether: nothing to show of it.
                Ok(None) => {
                    self.shown.remove(&id);
                }
                // Kept: asked again at the next read.
                Err(_) => {}
            }
        }
    }
}

/// One request's message, shaped as the run's event of the same kind.
fn message(kind: &str, request: &PermissionRequest) -> Event {
    let data = json!({"type": kind, "request": request_json(request)});
    Event::default().event(kind).data(data.to_string())
}
