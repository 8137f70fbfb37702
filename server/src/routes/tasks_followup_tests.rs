//! `POST /v1/tasks/{id}/followups` over a real SQLite queue, in-process: a follow-up of a
//! pushed task is queued on its branch with its session and provider (201, `Location`, the
//! parent named); a task that failed, one whose commit was never pushed, an unknown id, a bad
//! body and a missing token are refused, each saying why, and queue nothing.

use std::sync::Arc;

use forge_adapter_store::SqliteStore;
use forge_domain::queue::{Finish, QueueState, QueueSubmission};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use serde_json::{Value, json};

use crate::ServerParts;
use crate::testing::{self, parts, serve};

const TOKEN: &str = "s3cret";

struct Server {
    base: String,
    queue: Arc<SqliteStore>,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let queue = Arc::new(SqliteStore::open(dir.path().join("queue.db")).unwrap());
    let base = serve(ServerParts {
        queue: Some((queue.clone(), queue.clone())),
        ..parts(dir.path(), Some(TOKEN))
    })
    .await;
    Server {
        base,
        queue,
        _dir: dir,
    }
}

/// A task run by a worker to `state`; its options push (or not) and its last cycle's session
/// is `sess-{id}` of claude.
async fn finished(queue: &SqliteStore, id: &str, push: bool, state: QueueState) {
    let task_id = TaskId::new(id).unwrap();
    queue
        .submit(&QueueSubmission {
            task_id: task_id.clone(),
            repo: "https://example.test/app.git".into(),
            prompt: "add a greeting".into(),
            options: json!({"provider": "claude", "push": push}),
            max_attempts: 2,
        })
        .await
        .unwrap();
    queue.claim("w1", 30_000).await.unwrap().unwrap();
    let report = json!({
        "provider": "claude",
        "cycles": [{"kind": "agent", "session_id": format!("sess-{id}")}],
        "delivery": {"decision": "committed", "branch": format!("forge/{id}"),
                     "commit": "abc123", "pushed": push},
    });
    let finish = Finish {
        state,
        exit_code: Some(i32::from(state != QueueState::Succeeded)),
        error: None,
        report: Some(report),
    };
    assert!(queue.finish(&task_id, "w1", &finish).await.unwrap());
}

async fn post(server: &Server, id: &str, body: Value, token: bool) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/v1/tasks/{id}/followups", server.base))
        .json(&body);
    if token {
        request = request.bearer_auth(TOKEN);
    }
    testing::call(request).await
}

#[tokio::test]
async fn a_follow_up_of_a_pushed_task_is_queued_on_its_branch_in_its_session() {
    let s = start().await;
    finished(&s.queue, "q-done", true, QueueState::Succeeded).await;

    let response = reqwest::Client::new()
        .post(format!("{}/v1/tasks/q-done/followups", s.base))
        .bearer_auth(TOKEN)
        .json(&json!({"prompt": "also greet in French", "max_attempts": 5}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let body: Value = response.json().await.unwrap();
    let id = body["task_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("q-") && id != "q-done", "{body}");
    assert_eq!(body["parent"], "q-done");
    assert_eq!(location, format!("/v1/tasks/{id}"));
    assert_eq!(body["events_url"], format!("/v1/tasks/{id}/events"));

    let queued = s
        .queue
        .task(&TaskId::new(id).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(queued.state, QueueState::Queued);
    assert_eq!(queued.prompt, "also greet in French");
    assert_eq!(queued.repo, "https://example.test/app.git");
    assert_eq!(queued.max_attempts, 5);
    let options = &queued.options;
    assert_eq!(options["base"], "forge/q-done", "{options}");
    assert_eq!(options["provider"], "claude", "{options}");
    assert_eq!(options["followup"]["parent"], "q-done", "{options}");
    assert_eq!(options["followup"]["branch"], "forge/q-done", "{options}");
    assert_eq!(options["followup"]["session"], "sess-q-done", "{options}");
}

#[tokio::test]
async fn a_follow_up_that_cannot_continue_its_task_is_refused_and_queues_nothing() {
    let s = start().await;
    finished(&s.queue, "q-failed", true, QueueState::Failed).await;
    finished(&s.queue, "q-local", false, QueueState::Succeeded).await;
    let prompt = json!({"prompt": "more"});
    let cases: [(&str, Value, bool, u16, &str); 6] = [
        ("q-failed", prompt.clone(), true, 409, "q-failed"),
        ("q-local", prompt.clone(), true, 409, "q-local"),
        ("q-missing", prompt.clone(), true, 404, "no task q-missing"),
        (
            "q-local",
            json!({"prompt": "more", "push": true}),
            true,
            400,
            "push",
        ),
        ("q-local", json!({}), true, 400, "prompt"),
        ("q-local", prompt.clone(), false, 401, ""),
    ];
    for (id, body, token, status, says) in cases {
        let (got, answer) = post(&s, id, body.clone(), token).await;
        assert_eq!(got, status, "{id} {body}: {answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{id} {body}: {answer}");
    }
    assert_eq!(TaskQueue::tasks(&*s.queue, 100).await.unwrap().len(), 2);
}
