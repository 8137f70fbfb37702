//! GitLab's webhook payloads (`X-Gitlab-Event`: Note Hook, Merge Request Hook, Issue Hook,
//! Pipeline Hook), decoded into forge events. A merge request's `iid` is its number; a
//! DiffNote's discussion is its thread.

use forge_domain::forges::{CheckConclusion, ForgeEvent, RepoRef, ReviewComment, ReviewState};
use serde_json::Value;

use crate::DecodeError;

/// Decodes the payload of `event` (the `X-Gitlab-Event` header). One delivery can be several
/// events (an issue given two labels at once); most are one.
///
/// # Errors
/// [`DecodeError`] when the body is not JSON or lacks a field the event needs.
pub fn decode(event: &str, body: &[u8]) -> Result<Vec<ForgeEvent>, DecodeError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| DecodeError::NotJson(e.to_string()))?;
    let payload = Payload { event, v: &v };
    match event {
        "Note Hook" => payload.note(),
        "Merge Request Hook" => payload.merge_request(),
        "Issue Hook" => payload.issue(),
        "Pipeline Hook" => payload.pipeline(),
        _ => other(event.to_owned()),
    }
}

fn other(name: String) -> Result<Vec<ForgeEvent>, DecodeError> {
    Ok(vec![ForgeEvent::Other { name }])
}

/// Text at `key` of an object; empty when absent (a note without text is still a note).
fn text(o: &Value, key: &str) -> String {
    o.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// One delivery's JSON and the event it claims to be, with the fields every hook shares.
struct Payload<'a> {
    event: &'a str,
    v: &'a Value,
}

impl Payload<'_> {
    fn missing(&self, field: &'static str) -> DecodeError {
        DecodeError::Missing {
            event: self.event.to_owned(),
            field,
        }
    }

    fn repo(&self) -> Result<RepoRef, DecodeError> {
        let url = self
            .v
            .pointer("/project/web_url")
            .and_then(Value::as_str)
            .ok_or_else(|| self.missing("project.web_url"))?;
        RepoRef::parse(url).ok_or_else(|| DecodeError::BadRepository {
            event: self.event.to_owned(),
            url: url.to_owned(),
        })
    }

    fn user(&self) -> Result<String, DecodeError> {
        self.v
            .pointer("/user/username")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.missing("user.username"))
    }

    fn attrs(&self) -> Result<&Value, DecodeError> {
        self.v
            .get("object_attributes")
            .filter(|a| a.is_object())
            .ok_or_else(|| self.missing("object_attributes"))
    }

    fn num(&self, o: &Value, key: &'static str) -> Result<u64, DecodeError> {
        o.get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.missing(key))
    }

    fn iid_at(&self, pointer: &str, field: &'static str) -> Result<u64, DecodeError> {
        self.v
            .pointer(pointer)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.missing(field))
    }

    /// A note on a merge request (inline when a DiffNote) or on an issue.
    fn note(&self) -> Result<Vec<ForgeEvent>, DecodeError> {
        let a = self.attrs()?;
        let id = self.num(a, "id")?;
        let body = text(a, "note");
        let event = match a.get("noteable_type").and_then(Value::as_str) {
            Some("MergeRequest") => {
                let number = self.iid_at("/merge_request/iid", "merge_request.iid")?;
                if a.get("type").and_then(Value::as_str) == Some("DiffNote") {
                    ForgeEvent::ReviewComment {
                        repo: self.repo()?,
                        number,
                        author: self.user()?,
                        comment: diff_note(a, id, body),
                    }
                } else {
                    ForgeEvent::PullRequestComment {
                        repo: self.repo()?,
                        number,
                        comment_id: id,
                        author: self.user()?,
                        body,
                    }
                }
            }
            Some("Issue") => ForgeEvent::IssueComment {
                repo: self.repo()?,
                issue: self.iid_at("/issue/iid", "issue.iid")?,
                comment_id: id,
                author: self.user()?,
                body,
            },
            other_type => {
                return other(format!(
                    "Note Hook on {}",
                    other_type.unwrap_or("something else")
                ));
            }
        };
        Ok(vec![event])
    }

    /// An approval (a review) or a merge request closed or merged.
    fn merge_request(&self) -> Result<Vec<ForgeEvent>, DecodeError> {
        let a = self.attrs()?;
        let number = self.num(a, "iid")?;
        match a.get("action").and_then(Value::as_str) {
            Some("approved") => Ok(vec![ForgeEvent::Review {
                repo: self.repo()?,
                number,
                review_id: self.num(a, "id")?,
                author: self.user()?,
                state: ReviewState::Approved,
                body: String::new(),
            }]),
            Some(action @ ("close" | "merge")) => Ok(vec![ForgeEvent::PullRequestClosed {
                repo: self.repo()?,
                number,
                merged: action == "merge",
            }]),
            action => other(format!("Merge Request Hook.{}", action.unwrap_or(""))),
        }
    }

    /// An issue's labels changed: one event for each label added.
    fn issue(&self) -> Result<Vec<ForgeEvent>, DecodeError> {
        let a = self.attrs()?;
        let before = self.label_titles("/changes/labels/previous");
        let added: Vec<String> = self
            .label_titles("/changes/labels/current")
            .into_iter()
            .filter(|l| !before.contains(l))
            .collect();
        if added.is_empty() {
            return other("Issue Hook".to_owned());
        }
        let (repo, author, issue) = (self.repo()?, self.user()?, self.num(a, "iid")?);
        Ok(added
            .into_iter()
            .map(|label| ForgeEvent::IssueLabelled {
                repo: repo.clone(),
                issue,
                label,
                author: author.clone(),
                title: text(a, "title"),
                body: text(a, "description"),
            })
            .collect())
    }

    fn label_titles(&self, pointer: &str) -> Vec<String> {
        self.v
            .pointer(pointer)
            .and_then(Value::as_array)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|l| l.get("title").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A pipeline that finished: a check on its commit.
    fn pipeline(&self) -> Result<Vec<ForgeEvent>, DecodeError> {
        let a = self.attrs()?;
        let conclusion = match a.get("status").and_then(Value::as_str) {
            Some("failed") => CheckConclusion::Failure,
            Some("success") => CheckConclusion::Success,
            Some("canceled") => CheckConclusion::Cancelled,
            Some("skipped") => CheckConclusion::Skipped,
            status => return other(format!("Pipeline Hook.{}", status.unwrap_or(""))),
        };
        Ok(vec![ForgeEvent::CheckCompleted {
            repo: self.repo()?,
            head_sha: text(a, "sha"),
            check_id: self.num(a, "id")?,
            name: "pipeline".to_owned(),
            conclusion,
            pull_requests: self
                .v
                .pointer("/merge_request/iid")
                .and_then(Value::as_u64)
                .into_iter()
                .collect(),
        }])
    }
}

/// An inline note: its file and line on the new side, its discussion the thread.
fn diff_note(a: &Value, id: u64, body: String) -> ReviewComment {
    let position = a.get("position").cloned().unwrap_or(Value::Null);
    ReviewComment {
        id,
        path: text(&position, "new_path"),
        line: position
            .get("new_line")
            .and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok()),
        body,
        thread: a
            .get("discussion_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
    }
}

#[cfg(test)]
mod tests;
