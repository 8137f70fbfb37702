use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

fn repository() -> Value {
    json!({"id": 1, "full_name": "octo/hello", "html_url": "https://github.com/octo/hello"})
}

fn repo() -> RepoRef {
    RepoRef::parse("https://github.com/octo/hello").unwrap()
}

fn decoded(event: &str, payload: &Value) -> Result<ForgeEvent, DecodeError> {
    decode(event, payload.to_string().as_bytes())
}

#[test]
fn comments_on_pull_requests_and_issues() {
    let mut payload = json!({
        "action": "created",
        "issue": {"number": 7, "pull_request": {"url": "https://api.github.com/repos/octo/hello/pulls/7"}},
        "comment": {"id": 11, "body": "@forge add a test", "user": {"login": "alice"}},
        "repository": repository(),
        "sender": {"login": "alice"}
    });
    assert_eq!(
        decoded("issue_comment", &payload).unwrap(),
        ForgeEvent::PullRequestComment {
            repo: repo(),
            number: 7,
            comment_id: 11,
            author: "alice".into(),
            body: "@forge add a test".into()
        }
    );
    payload["issue"]
        .as_object_mut()
        .unwrap()
        .remove("pull_request");
    assert_eq!(
        decoded("issue_comment", &payload).unwrap(),
        ForgeEvent::IssueComment {
            repo: repo(),
            issue: 7,
            comment_id: 11,
            author: "alice".into(),
            body: "@forge add a test".into()
        }
    );
    // An edited comment is not a new request.
    payload["action"] = json!("edited");
    assert_eq!(
        decoded("issue_comment", &payload).unwrap(),
        ForgeEvent::Other {
            name: "issue_comment.edited".into()
        }
    );
}

#[test]
fn review_comments_and_reviews() {
    let payload = json!({
        "action": "created",
        "pull_request": {"number": 7},
        "comment": {"id": 12, "path": "src/add.rs", "line": 3, "body": "@forge off by one",
                    "in_reply_to_id": 10, "user": {"login": "alice"}},
        "repository": repository()
    });
    assert_eq!(
        decoded("pull_request_review_comment", &payload).unwrap(),
        ForgeEvent::ReviewComment {
            repo: repo(),
            number: 7,
            author: "alice".into(),
            comment: ReviewComment {
                id: 12,
                path: "src/add.rs".into(),
                line: Some(3),
                body: "@forge off by one".into(),
                thread: Some("10".into())
            }
        }
    );
    let payload = json!({
        "action": "submitted",
        "pull_request": {"number": 7},
        "review": {"id": 13, "state": "approved", "body": null, "user": {"login": "bob"}},
        "repository": repository()
    });
    assert_eq!(
        decoded("pull_request_review", &payload).unwrap(),
        ForgeEvent::Review {
            repo: repo(),
            number: 7,
            review_id: 13,
            author: "bob".into(),
            state: ReviewState::Approved,
            body: String::new()
        }
    );
}

#[test]
fn checks_labels_and_closing() {
    let payload = json!({
        "action": "completed",
        "check_run": {"id": 14, "name": "test", "head_sha": "abc", "conclusion": "failure",
                      "pull_requests": [{"number": 7}]},
        "repository": repository()
    });
    assert_eq!(
        decoded("check_run", &payload).unwrap(),
        ForgeEvent::CheckCompleted {
            repo: repo(),
            head_sha: "abc".into(),
            check_id: 14,
            name: "test".into(),
            conclusion: CheckConclusion::Failure,
            pull_requests: vec![7]
        }
    );
    let payload = json!({
        "action": "labeled",
        "issue": {"number": 3, "title": "Empty input", "body": null, "user": {"login": "reader"}},
        "label": {"name": "forge"},
        "sender": {"login": "alice"},
        "repository": repository()
    });
    // The labeller is the actor, not the issue's author.
    assert_eq!(
        decoded("issues", &payload).unwrap(),
        ForgeEvent::IssueLabelled {
            repo: repo(),
            issue: 3,
            label: "forge".into(),
            author: "alice".into(),
            title: "Empty input".into(),
            body: String::new()
        }
    );
    let payload = json!({"action": "closed", "pull_request": {"number": 7, "merged": true},
                         "repository": repository()});
    assert_eq!(
        decoded("pull_request", &payload).unwrap(),
        ForgeEvent::PullRequestClosed {
            repo: repo(),
            number: 7,
            merged: true
        }
    );
}

#[test]
fn malformed_payloads_say_what_is_missing() {
    let check = |event: &str, body: &[u8], want: &str| {
        assert_eq!(decode(event, body).unwrap_err().to_string(), want);
    };
    check(
        "ping",
        b"{not json",
        "the body is not JSON: key must be a string at line 1 column 2",
    );
    check(
        "issue_comment",
        br#"{"action":"created","comment":{"id":1}}"#,
        "the issue_comment payload has no issue",
    );
    check(
        "pull_request_review",
        br#"{"action":"submitted","pull_request":{"number":7},"review":{"id":1,"state":"weird","user":{"login":"a"}}}"#,
        "the pull_request_review payload has no review.state",
    );
    check(
        "issues",
        br#"{"action":"labeled","issue":{"number":3},"label":{"name":"forge"},"sender":{"login":"a"},"repository":{"html_url":"file:///x"}}"#,
        "the issues payload's repository URL \"file:///x\" names no repository",
    );
    // An event forge does not act on is not malformed.
    assert_eq!(
        decode("ping", br#"{"zen":"Keep it logically awesome."}"#).unwrap(),
        ForgeEvent::Other {
            name: "ping".into()
        }
    );
}
