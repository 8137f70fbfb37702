use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::*;

fn project() -> Value {
    json!({"id": 5, "web_url": "https://gitlab.example.com/group/sub/project"})
}

fn repo() -> RepoRef {
    RepoRef::parse("https://gitlab.example.com/group/sub/project").unwrap()
}

fn decoded(event: &str, payload: &Value) -> Vec<ForgeEvent> {
    decode(event, payload.to_string().as_bytes()).unwrap()
}

#[test]
fn notes_on_merge_requests_and_issues() {
    let mut payload = json!({
        "object_kind": "note",
        "user": {"username": "dev"},
        "project": project(),
        "object_attributes": {"id": 21, "note": "@forge add a test", "noteable_type": "MergeRequest",
                              "type": null},
        "merge_request": {"iid": 4}
    });
    assert_eq!(
        decoded("Note Hook", &payload),
        vec![ForgeEvent::PullRequestComment {
            repo: repo(),
            number: 4,
            comment_id: 21,
            author: "dev".into(),
            body: "@forge add a test".into()
        }]
    );
    payload["object_attributes"]["type"] = json!("DiffNote");
    payload["object_attributes"]["discussion_id"] = json!("6a9c1750");
    payload["object_attributes"]["position"] = json!({"new_path": "src/a.rs", "new_line": 9});
    assert_eq!(
        decoded("Note Hook", &payload),
        vec![ForgeEvent::ReviewComment {
            repo: repo(),
            number: 4,
            author: "dev".into(),
            comment: ReviewComment {
                id: 21,
                path: "src/a.rs".into(),
                line: Some(9),
                body: "@forge add a test".into(),
                thread: Some("6a9c1750".into())
            }
        }]
    );
    let payload = json!({
        "user": {"username": "dev"}, "project": project(),
        "object_attributes": {"id": 22, "note": "@forge do it", "noteable_type": "Issue"},
        "issue": {"iid": 8}
    });
    assert_eq!(
        decoded("Note Hook", &payload),
        vec![ForgeEvent::IssueComment {
            repo: repo(),
            issue: 8,
            comment_id: 22,
            author: "dev".into(),
            body: "@forge do it".into()
        }]
    );
    // A note on a commit or a snippet is nothing forge acts on.
    let payload = json!({"user": {"username": "dev"}, "project": project(),
        "object_attributes": {"id": 23, "note": "@forge", "noteable_type": "Commit"}});
    assert_eq!(
        decoded("Note Hook", &payload),
        vec![ForgeEvent::Other {
            name: "Note Hook on Commit".into()
        }]
    );
}

#[test]
fn merge_requests_labels_and_pipelines() {
    let mr = |action: &str| {
        json!({"user": {"username": "lead"}, "project": project(),
               "object_attributes": {"id": 99, "iid": 4, "action": action}})
    };
    assert_eq!(
        decoded("Merge Request Hook", &mr("approved")),
        vec![ForgeEvent::Review {
            repo: repo(),
            number: 4,
            review_id: 99,
            author: "lead".into(),
            state: ReviewState::Approved,
            body: String::new()
        }]
    );
    assert_eq!(
        decoded("Merge Request Hook", &mr("merge")),
        vec![ForgeEvent::PullRequestClosed {
            repo: repo(),
            number: 4,
            merged: true
        }]
    );
    assert_eq!(
        decoded("Merge Request Hook", &mr("update")),
        vec![ForgeEvent::Other {
            name: "Merge Request Hook.update".into()
        }]
    );
    let issue = json!({
        "user": {"username": "dev"}, "project": project(),
        "object_attributes": {"iid": 8, "title": "Empty input", "description": "panics"},
        "changes": {"labels": {"previous": [{"title": "bug"}],
                               "current": [{"title": "bug"}, {"title": "forge"}]}}
    });
    assert_eq!(
        decoded("Issue Hook", &issue),
        vec![ForgeEvent::IssueLabelled {
            repo: repo(),
            issue: 8,
            label: "forge".into(),
            author: "dev".into(),
            title: "Empty input".into(),
            body: "panics".into()
        }]
    );
    // A label taken off is not a label put on.
    let removed = json!({
        "user": {"username": "dev"}, "project": project(),
        "object_attributes": {"iid": 8},
        "changes": {"labels": {"previous": [{"title": "forge"}], "current": []}}
    });
    assert_eq!(
        decoded("Issue Hook", &removed),
        vec![ForgeEvent::Other {
            name: "Issue Hook".into()
        }]
    );
    let pipeline = json!({
        "project": project(),
        "object_attributes": {"id": 31, "sha": "abc", "status": "failed"},
        "merge_request": {"iid": 4}
    });
    assert_eq!(
        decoded("Pipeline Hook", &pipeline),
        vec![ForgeEvent::CheckCompleted {
            repo: repo(),
            head_sha: "abc".into(),
            check_id: 31,
            name: "pipeline".into(),
            conclusion: CheckConclusion::Failure,
            pull_requests: vec![4]
        }]
    );
}

#[test]
fn malformed_payloads() {
    assert_eq!(
        decode("Note Hook", b"{}").unwrap_err().to_string(),
        "the Note Hook payload has no object_attributes"
    );
    assert_eq!(
        decode(
            "Note Hook",
            br#"{"object_attributes":{"id":1,"noteable_type":"MergeRequest"},"user":{"username":"d"},"project":{"web_url":"x"}}"#
        )
        .unwrap_err()
        .to_string(),
        "the Note Hook payload has no merge_request.iid"
    );
    assert!(matches!(
        decode("Note Hook", b"[").unwrap_err(),
        DecodeError::NotJson(_)
    ));
}
