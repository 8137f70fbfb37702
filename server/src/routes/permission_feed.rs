//! The agents' permission requests as Server-Sent Events, for the board's stream
//! (`GET /v1/board/events`: the "Waiting for you" column) and a queued task's
//! (`GET /v1/tasks/{id}/events`: its page): first a `permissions` message with the
//! pending ones (`GET /v1/permissions`'s body: the page starts over from it, on a
//! reconnection too), then a `permission_requested` message for each new request and a
//! `permission_decided` one when a request is no longer pending — their payload is the
//! run's event's (`{"type", "request"}`), the request as `GET /v1/permissions` shows it.
//!
//! The store is read by one poller for every open stream ([`PermissionWatch`], every
//! [`POLL_MS`](crate::permission_watch::POLL_MS)); each stream compares its readings with
//! what it has sent and sends only what changed, so the page gets events instead of
//! polling itself.

use std::collections::{BTreeSet, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;

use axum::response::sse::Event;
use forge_domain::permission::{PermissionId, PermissionOwner, PermissionRequest};
use futures::Stream;
use serde_json::json;
use tokio::sync::watch;

use super::permissions::request_json;
use crate::permission_watch::{PermissionWatch, Reading};

/// What a stream has sent of the store's requests.
pub(crate) struct PermissionFeed {
    watch: Arc<PermissionWatch>,
    readings: watch::Receiver<Reading>,
    /// Only this owner's requests (a task's page); every one when `None` (the board).
    owner: Option<PermissionOwner>,
    /// The requests sent as pending and not yet as decided.
    shown: BTreeSet<PermissionId>,
    pending: VecDeque<Event>,
    /// Whether the current reading was handled (the next one is waited for).
    looked: bool,
    /// Whether the first message (every pending request) was sent.
    first_sent: bool,
}

impl PermissionFeed {
    pub(crate) fn new(watch: &Arc<PermissionWatch>, owner: Option<PermissionOwner>) -> Self {
        Self {
            watch: Arc::clone(watch),
            readings: watch.subscribe(),
            owner,
            shown: BTreeSet::new(),
            pending: VecDeque::new(),
            looked: false,
            first_sent: false,
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
            if self.looked && self.readings.changed().await.is_err() {
                // The poller is gone (it stops only when no stream watches): a new one.
                self.readings = self.watch.subscribe();
                self.looked = false;
                continue;
            }
            self.looked = true;
            let reading = self.readings.borrow_and_update().clone();
            match reading {
                Reading::NotYet => {}
                Reading::Unreachable(message) => {
                    let data = json!({"error": "permissions_unreachable", "message": message});
                    self.pending
                        .push_back(Event::default().event("error").data(data.to_string()));
                }
                Reading::Pending(listed) => {
                    let mine: Vec<&PermissionRequest> = listed
                        .iter()
                        .filter(|r| self.owner.as_ref().is_none_or(|o| &r.owner == o))
                        .collect();
                    if self.first_sent {
                        self.changed(&mine).await;
                    } else {
                        self.first(&mine);
                    }
                }
            }
        }
    }

    /// The pending requests as the stream opens, in one message.
    fn first(&mut self, listed: &[&PermissionRequest]) {
        self.shown = listed.iter().map(|r| r.id.clone()).collect();
        let listed: Vec<_> = listed.iter().map(|r| request_json(r)).collect();
        let data = json!({"permissions": listed});
        self.pending
            .push_back(Event::default().event("permissions").data(data.to_string()));
        self.first_sent = true;
    }

    /// A new reading: the new requests are requested, those gone decided (as the store has
    /// them now; one it cannot tell of yet is asked again at the next change).
    async fn changed(&mut self, listed: &[&PermissionRequest]) {
        let now: BTreeSet<&PermissionId> = listed.iter().map(|r| &r.id).collect();
        let gone: Vec<PermissionId> = self
            .shown
            .iter()
            .filter(|id| !now.contains(id))
            .cloned()
            .collect();
        for request in listed {
            if self.shown.insert(request.id.clone()) {
                self.pending
                    .push_back(message("permission_requested", request));
            }
        }
        for id in gone {
            match self.watch.store().permission(&id).await {
                Ok(Some(request)) => {
                    self.shown.remove(&id);
                    self.pending
                        .push_back(message("permission_decided", &request));
                }
                // Gone from the store altogether: nothing to show of it.
                Ok(None) => {
                    self.shown.remove(&id);
                }
                // Kept: asked again at the next change.
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
