//! The webhook payloads of the `pulls` group, shaped as GitHub sends them (the fields of
//! `@octokit/openapi-webhooks`' schemas that forge reads, with their neighbours): the
//! repository, the sender, and the object the event is about.

use serde_json::{Value, json};

use super::pulls_env::OWNER_REPO;

fn user(login: &str) -> Value {
    json!({"login": login, "id": login.len() as u64 + 9000, "type": "User"})
}

fn repository() -> Value {
    let (owner, name) = OWNER_REPO.split_once('/').unwrap_or((OWNER_REPO, ""));
    json!({
        "id": 4242,
        "name": name,
        "full_name": OWNER_REPO,
        "private": false,
        "owner": user(owner),
        "html_url": format!("https://github.com/{OWNER_REPO}"),
        "clone_url": format!("https://github.com/{OWNER_REPO}.git"),
        "default_branch": "main",
    })
}

fn pull_request(number: u64, head: &str, draft: bool) -> Value {
    json!({
        "number": number,
        "state": "open",
        "draft": draft,
        "html_url": format!("https://github.com/{OWNER_REPO}/pull/{number}"),
        "head": {"ref": head},
        "base": {"ref": "main"},
        "user": user("forge-bot"),
    })
}

/// `pull_request_review` `submitted`: `login`'s review of pull request `number` in `state`
/// (`approved`, `changes_requested`, `commented`).
pub(super) fn review(number: u64, head: &str, (id, login, state): (u64, &str, &str)) -> Value {
    json!({
        "action": "submitted",
        "review": {"id": id, "user": user(login), "body": null, "state": state,
                   "commit_id": "0000000000000000000000000000000000000000",
                   "html_url": format!("https://github.com/{OWNER_REPO}/pull/{number}#pullrequestreview-{id}")},
        "pull_request": pull_request(number, head, true),
        "repository": repository(),
        "sender": user(login),
    })
}

/// `pull_request_review_comment` `created`: `login`'s inline comment `id` on `path:line`.
pub(super) fn review_comment(
    number: u64,
    head: &str,
    (id, login, path, line): (u64, &str, &str, u32),
    body: &str,
) -> Value {
    json!({
        "action": "created",
        "comment": {"id": id, "pull_request_review_id": id + 1, "user": user(login),
                    "body": body, "path": path, "line": line, "side": "RIGHT",
                    "in_reply_to_id": null,
                    "html_url": format!("https://github.com/{OWNER_REPO}/pull/{number}#discussion_r{id}")},
        "pull_request": pull_request(number, head, false),
        "repository": repository(),
        "sender": user(login),
    })
}

/// `issue_comment` `created`: `login`'s comment on issue `number` (a plain issue).
pub(super) fn issue_comment(number: u64, (id, login): (u64, &str), body: &str) -> Value {
    json!({
        "action": "created",
        "issue": {"number": number, "title": "Answer", "body": "", "state": "open",
                  "user": user(login), "pull_request": null},
        "comment": {"id": id, "user": user(login), "body": body},
        "repository": repository(),
        "sender": user(login),
    })
}

/// `check_run` `completed` with `conclusion` on `head_sha`, for pull request `number`.
pub(super) fn check_run(
    (id, name, conclusion): (u64, &str, &str),
    head_sha: &str,
    number: u64,
) -> Value {
    json!({
        "action": "completed",
        "check_run": {"id": id, "name": name, "head_sha": head_sha, "status": "completed",
                      "conclusion": conclusion,
                      "pull_requests": [{"number": number, "head": {"sha": head_sha}}]},
        "repository": repository(),
        "sender": user("github-actions[bot]"),
    })
}

/// `issues` `labeled`: `login` put `label` on issue `number`.
pub(super) fn labelled(
    number: u64,
    (title, body): (&str, &str),
    label: &str,
    login: &str,
) -> Value {
    json!({
        "action": "labeled",
        "issue": {"number": number, "title": title, "body": body, "state": "open",
                  "user": user(login), "labels": [{"name": label}]},
        "label": {"name": label, "color": "ededed"},
        "repository": repository(),
        "sender": user(login),
    })
}
