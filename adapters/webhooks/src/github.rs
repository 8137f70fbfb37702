//! GitHub's webhook payloads (`X-GitHub-Event`), decoded into forge events. Only the actions
//! forge acts on are decoded; any other event or action is [`ForgeEvent::Other`] (answered
//! 202, nothing done).

use forge_domain::forges::{CheckConclusion, ForgeEvent, RepoRef, ReviewComment, ReviewState};
use serde_json::Value;

use crate::DecodeError;

/// Decodes the payload of event `event` (the `X-GitHub-Event` header).
///
/// # Errors
/// [`DecodeError`] when the body is not JSON or lacks a field the event needs.
pub fn decode(event: &str, body: &[u8]) -> Result<ForgeEvent, DecodeError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| DecodeError::NotJson(e.to_string()))?;
    let p = Payload { event, v: &v };
    let action = v.get("action").and_then(Value::as_str).unwrap_or_default();
    let other = || ForgeEvent::Other {
        name: if action.is_empty() {
            event.to_owned()
        } else {
            format!("{event}.{action}")
        },
    };
    Ok(match (event, action) {
        ("issue_comment", "created") => {
            let issue = p.field("issue")?;
            let number = p.u64_at(issue, "number")?;
            let comment = p.field("comment")?;
            let comment_id = p.u64_at(comment, "id")?;
            let author = p.login(comment)?;
            let body = p.text_at(comment, "body");
            if issue.get("pull_request").is_some_and(|pr| !pr.is_null()) {
                ForgeEvent::PullRequestComment {
                    repo: p.repo()?,
                    number,
                    comment_id,
                    author,
                    body,
                }
            } else {
                ForgeEvent::IssueComment {
                    repo: p.repo()?,
                    issue: number,
                    comment_id,
                    author,
                    body,
                }
            }
        }
        ("pull_request_review_comment", "created") => {
            let c = p.field("comment")?;
            ForgeEvent::ReviewComment {
                repo: p.repo()?,
                number: p.u64_at(p.field("pull_request")?, "number")?,
                author: p.login(c)?,
                comment: ReviewComment {
                    id: p.u64_at(c, "id")?,
                    path: p.text_at(c, "path"),
                    line: c
                        .get("line")
                        .and_then(Value::as_u64)
                        .and_then(|l| u32::try_from(l).ok()),
                    body: p.text_at(c, "body"),
                    thread: c
                        .get("in_reply_to_id")
                        .and_then(Value::as_u64)
                        .map(|id| id.to_string()),
                },
            }
        }
        ("pull_request_review", "submitted") => {
            let r = p.field("review")?;
            let state = r
                .get("state")
                .and_then(Value::as_str)
                .and_then(ReviewState::parse)
                .ok_or_else(|| p.missing("review.state"))?;
            ForgeEvent::Review {
                repo: p.repo()?,
                number: p.u64_at(p.field("pull_request")?, "number")?,
                review_id: p.u64_at(r, "id")?,
                author: p.login(r)?,
                state,
                body: p.text_at(r, "body"),
            }
        }
        ("check_run" | "check_suite", "completed") => {
            let c = p.field(event)?;
            let conclusion = c
                .get("conclusion")
                .and_then(Value::as_str)
                .and_then(CheckConclusion::parse)
                .ok_or_else(|| p.missing("conclusion"))?;
            let name = match event {
                "check_run" => p.text_at(c, "name"),
                _ => c
                    .pointer("/app/name")
                    .and_then(Value::as_str)
                    .unwrap_or("check suite")
                    .to_owned(),
            };
            ForgeEvent::CheckCompleted {
                repo: p.repo()?,
                head_sha: p.text_at(c, "head_sha"),
                check_id: p.u64_at(c, "id")?,
                name,
                conclusion,
                pull_requests: c
                    .get("pull_requests")
                    .and_then(Value::as_array)
                    .map(|prs| {
                        prs.iter()
                            .filter_map(|pr| pr.get("number").and_then(Value::as_u64))
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        }
        ("issues", "labeled") => {
            let issue = p.field("issue")?;
            ForgeEvent::IssueLabelled {
                repo: p.repo()?,
                issue: p.u64_at(issue, "number")?,
                label: p.text_at(p.field("label")?, "name"),
                author: p.login(p.field("sender")?)?,
                title: p.text_at(issue, "title"),
                body: p.text_at(issue, "body"),
            }
        }
        ("pull_request", "closed") => {
            let pr = p.field("pull_request")?;
            ForgeEvent::PullRequestClosed {
                repo: p.repo()?,
                number: p.u64_at(pr, "number")?,
                merged: pr.get("merged").and_then(Value::as_bool).unwrap_or(false),
            }
        }
        _ => other(),
    })
}

/// The payload and the accessors that name what is missing.
struct Payload<'v> {
    event: &'v str,
    v: &'v Value,
}

impl<'v> Payload<'v> {
    fn missing(&self, field: &'static str) -> DecodeError {
        DecodeError::Missing {
            event: self.event.to_owned(),
            field,
        }
    }

    fn field(&self, name: &str) -> Result<&'v Value, DecodeError> {
        self.v
            .get(name)
            .filter(|v| v.is_object())
            .ok_or_else(|| self.missing(static_name(name)))
    }

    fn u64_at(&self, object: &Value, key: &'static str) -> Result<u64, DecodeError> {
        object
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| self.missing(key))
    }

    /// A string field; `null` or absent is empty (GitHub sends `"body": null`).
    fn text_at(&self, object: &Value, key: &str) -> String {
        object
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    }

    fn login(&self, object: &Value) -> Result<String, DecodeError> {
        object
            .pointer("/user/login")
            .or_else(|| object.get("login"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| self.missing("user.login"))
    }

    fn repo(&self) -> Result<RepoRef, DecodeError> {
        let url = self
            .v
            .pointer("/repository/html_url")
            .and_then(Value::as_str)
            .ok_or_else(|| self.missing("repository.html_url"))?;
        RepoRef::parse(url).ok_or_else(|| DecodeError::BadRepository {
            event: self.event.to_owned(),
            url: url.to_owned(),
        })
    }
}

/// The names [`Payload::field`] is asked for, as `'static` for the error.
fn static_name(name: &str) -> &'static str {
    match name {
        "issue" => "issue",
        "comment" => "comment",
        "review" => "review",
        "pull_request" => "pull_request",
        "check_run" => "check_run",
        "check_suite" => "check_suite",
        "label" => "label",
        "sender" => "sender",
        _ => "an object",
    }
}

#[cfg(test)]
mod tests;
