//! `forge poll` on GitLab: the notes of forge's open merge requests, read back through
//! their discussions (`GET /projects/:id/merge_requests/:iid/discussions`), in the shape
//! the Note Hook decodes to — a DiffNote an inline comment whose thread is its discussion,
//! any other note a comment in the conversation; GitLab's own system notes are not
//! comments. The discussions API takes no `since`: notes older than the cursor are left
//! out here, and one read twice is the same event (its id) and acts once.
//!
//! Not read by polling (webhooks only, said in docs/pull-requests.md): pipelines, approvals
//! and labelled issues.

use forge_domain::ForgeError;
use forge_domain::forges::{
    ForgeEvent, PolledEvents, PolledPull, RepoRef, ReviewComment, at_or_after, later_cursor,
};
use serde_json::Value;

use crate::forge::GitlabForge;

fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl GitlabForge {
    pub(crate) async fn poll(
        &self,
        repo: &RepoRef,
        pulls: &[PolledPull],
        cursor: Option<&str>,
    ) -> Result<PolledEvents, ForgeError> {
        let mut read = PolledEvents::default();
        for pull in pulls {
            for discussion in self.discussions(repo, pull.number).await? {
                let thread = discussion.get("id").and_then(Value::as_str);
                let notes = discussion
                    .get("notes")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for note in &notes {
                    let at = ["created_at", "updated_at"]
                        .iter()
                        .filter_map(|f| note.get(*f).and_then(Value::as_str))
                        .max();
                    if !at_or_after(at, cursor) {
                        continue;
                    }
                    read.cursor = later_cursor(read.cursor.take(), at);
                    if let Some(event) = note_event(repo, pull.number, thread, note) {
                        read.events.push(event);
                    }
                }
            }
        }
        Ok(read)
    }
}

/// A note as the Note Hook decodes it; `None` for a system note or one without an id.
fn note_event(
    repo: &RepoRef,
    number: u64,
    thread: Option<&str>,
    note: &Value,
) -> Option<ForgeEvent> {
    if note.get("system").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let id = note.get("id").and_then(Value::as_u64)?;
    let author = note
        .pointer("/author/username")
        .and_then(Value::as_str)
        .unwrap_or("ghost")
        .to_owned();
    let body = text(note, "body");
    Some(
        if note.get("type").and_then(Value::as_str) == Some("DiffNote") {
            let position = note.get("position").cloned().unwrap_or(Value::Null);
            ForgeEvent::ReviewComment {
                repo: repo.clone(),
                number,
                author,
                comment: ReviewComment {
                    id,
                    path: text(&position, "new_path"),
                    line: position
                        .get("new_line")
                        .and_then(Value::as_u64)
                        .and_then(|l| u32::try_from(l).ok()),
                    body,
                    thread: thread.map(str::to_owned),
                },
            }
        } else {
            ForgeEvent::PullRequestComment {
                repo: repo.clone(),
                number,
                comment_id: id,
                author,
                body,
            }
        },
    )
}
