//! What the fake GitHub holds: pull requests, comments, reviews, check runs, permissions,
//! every request it received, and the contract violations among them.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Value, json};

/// A pull request on the fake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakePull {
    /// `owner/name`.
    pub repo: String,
    pub number: u64,
    pub node_id: String,
    pub head: String,
    pub base: String,
    pub title: String,
    pub body: String,
    pub draft: bool,
    /// `open` or `closed`.
    pub state: String,
    pub merged: bool,
}

/// A comment in a conversation (issue or pull request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeComment {
    pub id: u64,
    pub repo: String,
    pub number: u64,
    pub author: String,
    pub body: String,
}

/// An inline review comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeReviewComment {
    pub id: u64,
    pub repo: String,
    pub number: u64,
    pub review_id: Option<u64>,
    pub path: String,
    pub line: Option<u32>,
    pub body: String,
    pub in_reply_to: Option<u64>,
    pub author: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeReview {
    pub id: u64,
    pub repo: String,
    pub number: u64,
    pub author: String,
    /// GitHub's word: `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`.
    pub state: String,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeCheckRun {
    pub id: u64,
    pub repo: String,
    pub name: String,
    pub head_sha: String,
    pub conclusion: String,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    /// `(path, start_line, end_line, level, message)`.
    pub annotations: Vec<(String, u32, u32, String, String)>,
}

/// A label put on an issue (an `issues/events` entry of event `labeled`); the issue's
/// title and body travel with it, as GitHub's issue event embeds the issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeLabel {
    pub id: u64,
    pub repo: String,
    pub issue: u64,
    pub label: String,
    /// Who put the label on.
    pub actor: String,
    pub title: String,
    pub body: String,
}

/// One request as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub method: String,
    /// With the query.
    pub path: String,
    pub body: String,
}

/// An answer the fake gives instead of serving the next request (a forge down, a 422, a
/// rate limit): status, headers, body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

#[derive(Debug, Default)]
pub struct GithubState {
    pub pulls: Vec<FakePull>,
    pub comments: Vec<FakeComment>,
    pub review_comments: Vec<FakeReviewComment>,
    pub reviews: Vec<FakeReview>,
    pub check_runs: Vec<FakeCheckRun>,
    /// Labels put on issues (`GET …/issues/events`).
    pub labels: Vec<FakeLabel>,
    /// `(repo, login)` → `admin`, `write`, `read`, `none`; absent: no collaborator (404).
    pub permissions: BTreeMap<(String, String), String>,
    pub requests: Vec<Recorded>,
    pub violations: Vec<String>,
    pub faults: VecDeque<Fault>,
    /// The last number per repository (issues and pull requests share them, as on GitHub).
    numbers: BTreeMap<String, u64>,
    next_id: u64,
}

impl GithubState {
    /// A fresh id for a comment, review or check run.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        1000 + self.next_id
    }

    /// The next issue or pull request number of `repo`.
    pub fn number(&mut self, repo: &str) -> u64 {
        let n = self.numbers.entry(repo.to_owned()).or_insert(0);
        *n += 1;
        *n
    }
}

/// The fake's clock: the time GitHub would stamp on object `id` (ids grow with time, so
/// the later object has the later time, one second apart). What `since` compares.
pub fn stamp(id: u64) -> String {
    let day = 1 + (id / 86_400) % 28;
    let (h, m, s) = ((id / 3600) % 24, (id / 60) % 60, id % 60);
    format!("2026-11-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

/// The JSON GitHub answers for a pull request (the fields a client reads, shaped as the
/// `pull-request` schema has them).
pub fn pull_json(p: &FakePull) -> Value {
    let owner = p.repo.split('/').next().unwrap_or_default();
    json!({
        "id": p.number + 100_000,
        "node_id": p.node_id,
        "number": p.number,
        "url": format!("https://api.github.com/repos/{}/pulls/{}", p.repo, p.number),
        "html_url": format!("https://github.com/{}/pull/{}", p.repo, p.number),
        "state": p.state,
        "draft": p.draft,
        "merged": p.merged,
        "merged_at": if p.merged { json!("2026-11-27T00:00:00Z") } else { Value::Null },
        "title": p.title,
        "body": p.body,
        "head": {"ref": p.head, "label": format!("{owner}:{}", p.head)},
        "base": {"ref": p.base, "label": format!("{owner}:{}", p.base)},
        "user": {"login": "forge-bot"},
    })
}

pub fn comment_json(c: &FakeComment) -> Value {
    json!({"id": c.id, "body": c.body, "user": {"login": c.author}})
}

pub fn review_comment_json(c: &FakeReviewComment) -> Value {
    json!({
        "id": c.id,
        "pull_request_review_id": c.review_id,
        "path": c.path,
        "line": c.line,
        "body": c.body,
        "in_reply_to_id": c.in_reply_to,
        "user": {"login": c.author},
    })
}

pub fn review_json(r: &FakeReview) -> Value {
    json!({"id": r.id, "state": r.state, "body": r.body, "user": {"login": r.author}})
}

pub fn check_run_json(c: &FakeCheckRun) -> Value {
    json!({
        "id": c.id,
        "name": c.name,
        "head_sha": c.head_sha,
        "status": "completed",
        "conclusion": c.conclusion,
        "output": {"title": c.title, "summary": c.summary, "text": c.text,
                   "annotations_count": c.annotations.len()},
    })
}
