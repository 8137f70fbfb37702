//! GitHub's answers read into forge's values: only the fields forge uses, each one's absence
//! an error that names it.

use forge_domain::ForgeError;
use forge_domain::forges::{
    Annotation, CheckRunOutput, GithubRole, Permission, PullRequestInfo, PullRequestState,
    ReviewComment, ThreadComment,
};
use serde_json::Value;

fn missing(what: &str, field: &str) -> ForgeError {
    ForgeError::Io {
        context: format!("github: reading {what}"),
        message: format!("the answer has no {field}"),
    }
}

pub(crate) fn u64_field(v: &Value, what: &str, field: &str) -> Result<u64, ForgeError> {
    v.get(field)
        .and_then(Value::as_u64)
        .ok_or_else(|| missing(what, field))
}

pub(crate) fn str_field<'v>(v: &'v Value, what: &str, field: &str) -> Result<&'v str, ForgeError> {
    v.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| missing(what, field))
}

/// A string that GitHub may send as `null`.
pub(crate) fn text(v: &Value, field: &str) -> String {
    v.get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(crate) fn login(v: &Value) -> String {
    v.pointer("/user/login")
        .and_then(Value::as_str)
        .unwrap_or("ghost")
        .to_owned()
}

/// A `pull-request` (or `pull-request-simple`) object.
pub(crate) fn pull_request(v: &Value) -> Result<PullRequestInfo, ForgeError> {
    let what = "a pull request";
    let merged = v.get("merged_at").is_some_and(|m| !m.is_null())
        || v.get("merged").and_then(Value::as_bool) == Some(true);
    let state = match str_field(v, what, "state")? {
        "open" => PullRequestState::Open,
        _ if merged => PullRequestState::Merged,
        _ => PullRequestState::Closed,
    };
    Ok(PullRequestInfo {
        url: str_field(v, what, "html_url")?.to_owned(),
        number: u64_field(v, what, "number")?,
        state,
        draft: v.get("draft").and_then(Value::as_bool).unwrap_or(false),
    })
}

/// A `pull-request-review-comment` object.
pub(crate) fn review_comment(v: &Value) -> Result<ReviewComment, ForgeError> {
    Ok(ReviewComment {
        id: u64_field(v, "a review comment", "id")?,
        path: text(v, "path"),
        line: v
            .get("line")
            .and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok()),
        body: text(v, "body"),
        thread: v
            .get("in_reply_to_id")
            .and_then(Value::as_u64)
            .map(|id| id.to_string()),
    })
}

/// A comment (review or issue) as one entry of a thread.
pub(crate) fn thread_comment(v: &Value) -> Result<ThreadComment, ForgeError> {
    Ok(ThreadComment {
        id: u64_field(v, "a comment", "id")?,
        author: login(v),
        body: text(v, "body"),
    })
}

/// The thread comment `id` belongs to among a pull request's review comments: its root (the
/// comment it replies to, or itself) and every reply to that root, oldest first. `None` when
/// `id` is not a review comment.
pub(crate) fn thread_of(comments: &[Value], id: u64) -> Option<Vec<&Value>> {
    let of = |c: &Value, key: &str| c.get(key).and_then(Value::as_u64);
    let this = comments.iter().find(|c| of(c, "id") == Some(id))?;
    let root = of(this, "in_reply_to_id").unwrap_or(id);
    let mut thread: Vec<&Value> = comments
        .iter()
        .filter(|c| of(c, "id") == Some(root) || of(c, "in_reply_to_id") == Some(root))
        .collect();
    thread.sort_by_key(|c| of(c, "id"));
    Some(thread)
}

/// A `check-run` object and its `check-annotation`s.
pub(crate) fn check_run(v: &Value, annotations: &[Value]) -> Result<CheckRunOutput, ForgeError> {
    let what = "a check run";
    let output = v.get("output").cloned().unwrap_or_default();
    let opt = |field: &str| output.get(field).and_then(Value::as_str).map(str::to_owned);
    let line = |a: &Value, field: &str| {
        a.get(field)
            .and_then(Value::as_u64)
            .and_then(|l| u32::try_from(l).ok())
            .unwrap_or(0)
    };
    Ok(CheckRunOutput {
        id: u64_field(v, what, "id")?,
        name: str_field(v, what, "name")?.to_owned(),
        title: opt("title"),
        summary: opt("summary"),
        text: opt("text"),
        annotations: annotations
            .iter()
            .map(|a| Annotation {
                path: text(a, "path"),
                start_line: line(a, "start_line"),
                end_line: line(a, "end_line"),
                level: text(a, "annotation_level"),
                message: text(a, "message"),
            })
            .collect(),
    })
}

/// `repository-collaborator-permission`: its `permission` (`admin`, `write`, `read`, `none`;
/// GitHub folds `maintain` into `write` and `triage` into `read` there, and a custom role
/// into the base role it extends), which is what steering needs; `role_name` only when the
/// legacy field is absent.
pub(crate) fn permission(v: &Value) -> Permission {
    let word = v
        .get("permission")
        .and_then(Value::as_str)
        .or_else(|| v.get("role_name").and_then(Value::as_str))
        .unwrap_or("none");
    Permission::Github(GithubRole::parse(word))
}
