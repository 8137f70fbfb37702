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
    let missing = |field: &'static str| DecodeError::Missing {
        event: event.to_owned(),
        field,
    };
    let repo = || -> Result<RepoRef, DecodeError> {
        let url = v
            .pointer("/project/web_url")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("project.web_url"))?;
        RepoRef::parse(url).ok_or_else(|| DecodeError::BadRepository {
            event: event.to_owned(),
            url: url.to_owned(),
        })
    };
    let user = || {
        v.pointer("/user/username")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| missing("user.username"))
    };
    let attrs = v
        .get("object_attributes")
        .filter(|a| a.is_object())
        .ok_or_else(|| missing("object_attributes"));
    let text = |o: &Value, key: &str| {
        o.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let num = |o: &Value, key: &'static str| {
        o.get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| missing(key))
    };
    let other = |name: String| Ok(vec![ForgeEvent::Other { name }]);
    match event {
        "Note Hook" => {
            let a = attrs?;
            let id = num(a, "id")?;
            let body = text(a, "note");
            match a.get("noteable_type").and_then(Value::as_str) {
                Some("MergeRequest") => {
                    let number = v
                        .pointer("/merge_request/iid")
                        .and_then(Value::as_u64)
                        .ok_or_else(|| missing("merge_request.iid"))?;
                    let inline = a.get("type").and_then(Value::as_str) == Some("DiffNote");
                    let event = if inline {
                        let position = a.get("position").cloned().unwrap_or(Value::Null);
                        ForgeEvent::ReviewComment {
                            repo: repo()?,
                            number,
                            author: user()?,
                            comment: ReviewComment {
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
                            },
                        }
                    } else {
                        ForgeEvent::PullRequestComment {
                            repo: repo()?,
                            number,
                            comment_id: id,
                            author: user()?,
                            body,
                        }
                    };
                    Ok(vec![event])
                }
                Some("Issue") => Ok(vec![ForgeEvent::IssueComment {
                    repo: repo()?,
                    issue: v
                        .pointer("/issue/iid")
                        .and_then(Value::as_u64)
                        .ok_or_else(|| missing("issue.iid"))?,
                    comment_id: id,
                    author: user()?,
                    body,
                }]),
                other_type => other(format!(
                    "Note Hook on {}",
                    other_type.unwrap_or("something else")
                )),
            }
        }
        "Merge Request Hook" => {
            let a = attrs?;
            let number = num(a, "iid")?;
            match a.get("action").and_then(Value::as_str) {
                Some("approved") => Ok(vec![ForgeEvent::Review {
                    repo: repo()?,
                    number,
                    review_id: num(a, "id")?,
                    author: user()?,
                    state: ReviewState::Approved,
                    body: String::new(),
                }]),
                Some(action @ ("close" | "merge")) => Ok(vec![ForgeEvent::PullRequestClosed {
                    repo: repo()?,
                    number,
                    merged: action == "merge",
                }]),
                action => other(format!("Merge Request Hook.{}", action.unwrap_or(""))),
            }
        }
        "Issue Hook" => {
            let a = attrs?;
            let names = |pointer: &str| -> Vec<String> {
                v.pointer(pointer)
                    .and_then(Value::as_array)
                    .map(|labels| {
                        labels
                            .iter()
                            .filter_map(|l| l.get("title").and_then(Value::as_str))
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let before = names("/changes/labels/previous");
            let added: Vec<String> = names("/changes/labels/current")
                .into_iter()
                .filter(|l| !before.contains(l))
                .collect();
            if added.is_empty() {
                return other("Issue Hook".to_owned());
            }
            let (repo, author, issue) = (repo()?, user()?, num(a, "iid")?);
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
        "Pipeline Hook" => {
            let a = attrs?;
            let conclusion = match a.get("status").and_then(Value::as_str) {
                Some("failed") => CheckConclusion::Failure,
                Some("success") => CheckConclusion::Success,
                Some("canceled") => CheckConclusion::Cancelled,
                Some("skipped") => CheckConclusion::Skipped,
                status => return other(format!("Pipeline Hook.{}", status.unwrap_or(""))),
            };
            Ok(vec![ForgeEvent::CheckCompleted {
                repo: repo()?,
                head_sha: text(a, "sha"),
                check_id: num(a, "id")?,
                name: "pipeline".to_owned(),
                conclusion,
                pull_requests: v
                    .pointer("/merge_request/iid")
                    .and_then(Value::as_u64)
                    .into_iter()
                    .collect(),
            }])
        }
        _ => other(event.to_owned()),
    }
}

#[cfg(test)]
mod tests;
