//! The board's API over a real SQLite queue, in-process: the cards of tasks in every
//! column (snapshots), the filters, a task's detail, share links opening one task without
//! the token and nothing after a revoke, and an approval decided once (the second decision
//! told who decided first).

use std::path::Path;
use std::sync::Arc;

use forge_adapter_store::SqliteStore;
use forge_domain::delivery::{ApprovalId, ApprovalState};
use forge_domain::queue::{Finish, QueueState, QueueSubmission};
use forge_domain::queue_approval::QueueApproval;
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use serde_json::{Value, json};

use crate::ServerParts;
use crate::testing::{self, parts, serve};

const TOKEN: &str = "s3cret";

struct Server {
    base: String,
    queue: Arc<SqliteStore>,
    /// The server's one root.
    root: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let queue = Arc::new(SqliteStore::open(dir.path().join("queue.db")).unwrap());
    let base = serve(ServerParts {
        queue: Some((queue.clone(), queue.clone())),
        ..parts(&root, Some(TOKEN))
    })
    .await;
    Server {
        base,
        queue,
        root,
        _dir: dir,
    }
}

fn report(id: &str, status: &str, delivery: Value) -> Value {
    json!({
        "task_id": id, "status": status, "stop_reason": "validated", "provider": "claude",
        "task": "Fix the add test\nsecond line", "task_type": "fix", "model": null,
        "branch": format!("forge/{id}"), "worktree": "/w",
        "cycles": [
            {"kind": "main", "run_id": "run-1", "session_id": null, "cost_usd": 0.25,
             "usage": {}, "fresh_session": false,
             "validation": {"passed": false, "steps": [{"name": "test", "command": "sh t.sh",
                "exit_code": 1, "duration_ms": 12, "output_tail": "FAIL add", "timed_out": false}]}},
            {"kind": "validation_fix", "run_id": "run-2", "session_id": null, "cost_usd": 0.5,
             "usage": {}, "fresh_session": false,
             "validation": {"passed": true, "steps": [{"name": "test", "command": "sh t.sh",
                "exit_code": 0, "duration_ms": 10, "output_tail": "ok", "timed_out": false}]}}
        ],
        "tests": [{"step": "test", "already_failing": [], "newly_failing": [],
                   "fixed": ["tests::add"], "regression": false}],
        "review": {"findings": [{"rule": "secrets.env_file", "severity": "critical",
                    "path": ".env", "line": null, "message": "a .env file"}]},
        "risk": {"score": 7, "level": "high", "reasons": ["+6 .env written"]},
        "files": [{"path": "src/add.rs", "change": "modified", "added": 1, "removed": 1}],
        "cost_usd": 0.75, "usage": {}, "duration_ms": 4000, "rollback": "git …",
        "summary": "fixed", "error": null, "delivery": delivery,
    })
}

/// Submits `id` and, for a worker, claims it (the oldest queued task is the one just
/// submitted: every earlier one was claimed or is `t1`, submitted last).
async fn task(queue: &SqliteStore, id: &str, provider: &str, worker: Option<&str>) -> TaskId {
    let task_id = TaskId::new(id).unwrap();
    queue
        .submit(&QueueSubmission {
            task_id: task_id.clone(),
            repo: "file:///srv/app".into(),
            prompt: format!("{id}: make it so\nmore"),
            options: json!({"provider": provider}),
            max_attempts: 3,
        })
        .await
        .unwrap();
    if let Some(worker) = worker {
        let claimed = queue.claim(worker, 30_000).await.unwrap().unwrap();
        assert_eq!(claimed.task_id, task_id);
    }
    task_id
}

async fn finish(queue: &SqliteStore, id: &TaskId, worker: &str, state: QueueState, report: Value) {
    let finish = Finish {
        state,
        exit_code: Some(if state == QueueState::Succeeded { 0 } else { 1 }),
        error: None,
        report: Some(report),
    };
    assert!(queue.finish(id, worker, &finish).await.unwrap());
}

/// Five tasks, one per column: queued, running (in stage `validation`), held, delivered,
/// failed.
async fn five(queue: &SqliteStore) {
    let running = task(queue, "q-running", "codex", Some("w1")).await;
    queue
        .append_event(
            &running,
            "stage",
            &json!({"stage": "agent", "detail": "", "elapsed_ms": 5, "cost_usd": 0.1}),
        )
        .await
        .unwrap();
    queue
        .append_event(
            &running,
            "stage",
            &json!({"stage": "validation", "detail": "sh t.sh", "elapsed_ms": 9, "cost_usd": 0.2}),
        )
        .await
        .unwrap();
    let held = task(queue, "q-held", "claude", Some("w1")).await;
    let delivery = json!({"decision": "pending_approval", "branch": "forge/q-held",
        "commit": null, "pushed": false, "approval_id": "ap-q-held", "notifications": []});
    finish(
        queue,
        &held,
        "w1",
        QueueState::Succeeded,
        report("q-held", "pending_approval", delivery),
    )
    .await;
    queue
        .record_approval(&QueueApproval {
            approval_id: ApprovalId::new("ap-q-held").unwrap(),
            task_id: held,
            worker: "w1".into(),
            risk_score: 7,
            reasons: vec!["+6 .env written".into()],
            files: vec![".env".into()],
            summary: None,
            push: false,
            state: ApprovalState::Pending,
            requested_at_ms: 0,
            decided_by: None,
            reason: None,
            decided_at_ms: None,
            outcome: None,
        })
        .await
        .unwrap();
    let done = task(queue, "q-done", "gemini", Some("w2")).await;
    let delivery = json!({"decision": "committed", "branch": "forge/q-done",
        "commit": "abc123", "pushed": true, "notifications": []});
    finish(
        queue,
        &done,
        "w2",
        QueueState::Succeeded,
        report("q-done", "committed", delivery),
    )
    .await;
    let failed = task(queue, "q-failed", "claude", Some("w2")).await;
    finish(
        queue,
        &failed,
        "w2",
        QueueState::Failed,
        report("q-failed", "failed", Value::Null),
    )
    .await;
    task(queue, "q-queued", "claude", None).await;
}

/// Times differ from run to run: each `*_ms` number (and a day) is replaced.
fn scrub(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if key.ends_with("_ms") && v.is_number() {
                    *v = json!("[ms]");
                } else {
                    scrub(v);
                }
            }
        }
        Value::Array(items) => {
            if let [Value::String(day), Value::Number(_)] = items.as_slice()
                && day.len() == 10
                && day.as_bytes().get(4) == Some(&b'-')
            {
                items[0] = json!("[day]");
            }
            items.iter_mut().for_each(scrub);
        }
        _ => {}
    }
}

async fn call(
    method: reqwest::Method,
    url: String,
    token: bool,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new().request(method, url);
    if token {
        request = request.bearer_auth(TOKEN);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    testing::call(request).await
}

async fn get(server: &Server, path: &str) -> (u16, Value) {
    call(
        reqwest::Method::GET,
        format!("{}{path}", server.base),
        true,
        None,
    )
    .await
}

#[tokio::test]
async fn the_board_has_a_card_per_task_in_its_column() {
    let server = start().await;
    five(&server.queue).await;
    let (status, mut board) = get(&server, "/v1/board").await;
    assert_eq!(status, 200, "{board}");
    scrub(&mut board);
    insta::assert_json_snapshot!("board", board);

    let check = |board: &Value, expected: &[&str]| {
        let ids: Vec<&str> = board["cards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["task_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, expected, "{board}");
    };
    let (_, by_worker) = get(&server, "/v1/board?worker=w1").await;
    check(&by_worker, &["q-held", "q-running"]);
    let (_, by_provider) = get(&server, "/v1/board?provider=claude").await;
    check(&by_provider, &["q-queued", "q-failed", "q-held"]);
    let (_, both) = get(&server, "/v1/board?provider=claude&worker=w2").await;
    check(&both, &["q-failed"]);
    // Look-alikes: a repository no task has, a worker's prefix.
    let (_, none) = get(&server, "/v1/board?repo=file:///srv/ap").await;
    check(&none, &[]);
    let (_, none) = get(&server, "/v1/board?worker=w").await;
    check(&none, &[]);

    // The token is needed.
    let (status, _) = call(
        reqwest::Method::GET,
        format!("{}/v1/board", server.base),
        false,
        None,
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_task_detail_has_its_stages_cycles_findings_risk_and_files() {
    let server = start().await;
    five(&server.queue).await;
    let (status, mut held) = get(&server, "/v1/board/tasks/q-held").await;
    assert_eq!(status, 200, "{held}");
    scrub(&mut held);
    insta::assert_json_snapshot!("detail_held", held);
    let (_, mut running) = get(&server, "/v1/board/tasks/q-running").await;
    scrub(&mut running);
    insta::assert_json_snapshot!("detail_running", running);
    let (status, missing) = get(&server, "/v1/board/tasks/q-nope").await;
    assert_eq!(status, 404, "{missing}");
    let (status, _) = get(&server, "/v1/board/tasks/..%2Fx").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_share_link_opens_its_task_only_and_nothing_once_revoked() {
    let server = start().await;
    five(&server.queue).await;
    let url = |path: &str| format!("{}{path}", server.base);
    let (status, made) = call(
        reqwest::Method::POST,
        url("/v1/board/tasks/q-done/shares"),
        true,
        None,
    )
    .await;
    assert_eq!(status, 201, "{made}");
    let token = made["token"].as_str().unwrap().to_owned();
    assert_eq!(made["url"], format!("/share/{token}"));
    // Without the server's token: the task and its events, nothing else.
    let (status, shared) = call(
        reqwest::Method::GET,
        url(&format!("/v1/shared/{token}")),
        false,
        None,
    )
    .await;
    assert_eq!(status, 200, "{shared}");
    assert_eq!(shared["card"]["task_id"], "q-done");
    assert_eq!(shared["shared"], true);
    let events = reqwest::get(url(&format!("/v1/shared/{token}/events")))
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let text = events.text().await.unwrap();
    assert!(
        text.contains("event: claimed") && text.contains("event: task"),
        "{text}"
    );
    for path in [
        "/v1/board/tasks/q-held",
        "/v1/board",
        "/v1/tasks/q-held",
        "/v1/approvals",
    ] {
        let (status, _) = call(reqwest::Method::GET, url(path), false, None).await;
        assert_eq!(status, 401, "{path}");
    }
    // Look-alikes of the token: another secret, the id alone, another id.
    let (id, secret) = token.split_once('.').unwrap();
    let wrong = format!("{id}.{}", secret.chars().rev().collect::<String>());
    for bad in [wrong.as_str(), id, &format!("sh-0000.{secret}")] {
        let (status, _) = call(
            reqwest::Method::GET,
            url(&format!("/v1/shared/{bad}")),
            false,
            None,
        )
        .await;
        assert_eq!(status, 404, "{bad}");
    }
    // Listed without the token's secret; revoked by the owner, it opens nothing.
    let (_, listed) = get(&server, "/v1/board/tasks/q-done/shares").await;
    assert_eq!(listed["shares"][0]["share_id"], id);
    assert!(!listed.to_string().contains(secret));
    let (status, revoked) = call(
        reqwest::Method::DELETE,
        url(&format!("/v1/shares/{id}")),
        true,
        None,
    )
    .await;
    assert_eq!(status, 200, "{revoked}");
    assert_eq!(revoked["link"]["active"], false);
    let (status, _) = call(
        reqwest::Method::GET,
        url(&format!("/v1/shared/{token}")),
        false,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = call(
        reqwest::Method::DELETE,
        url(&format!("/v1/shares/{id}")),
        false,
        None,
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn an_approval_is_decided_once_and_the_second_is_told_who_decided() {
    let server = start().await;
    five(&server.queue).await;
    let url = |path: &str| format!("{}{path}", server.base);
    let (status, first) = call(
        reqwest::Method::POST,
        url("/v1/approvals/ap-q-held/approve"),
        true,
        Some(json!({"by": "alice", "push": true})),
    )
    .await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["approval"]["decided_by"], "alice");
    for (action, body) in [
        ("approve", json!({"by": "bob"})),
        ("reject", json!({"by": "bob", "reason": "no"})),
    ] {
        let (status, mut second) = call(
            reqwest::Method::POST,
            url(&format!("/v1/approvals/ap-q-held/{action}")),
            true,
            Some(body),
        )
        .await;
        assert_eq!(status, 409, "{second}");
        scrub(&mut second);
        insta::assert_json_snapshot!(format!("second_{action}"), second);
    }
    // The card moved: approved, waiting for its worker to carry it out.
    let (_, board) = get(&server, "/v1/board").await;
    let card = board["cards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["task_id"] == "q-held")
        .unwrap()
        .clone();
    assert_eq!(card["column"], "delivered", "{card}");
    assert_eq!(card["outcome"], "approved", "{card}");
}

#[tokio::test]
async fn providers_are_listed_with_what_doctor_says() {
    let server = start().await;
    let (status, body) = get(&server, "/v1/providers").await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> = body["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for cli in ["claude", "codex", "gemini"] {
        assert!(names.contains(&cli), "{names:?}");
    }
    for provider in body["providers"].as_array().unwrap() {
        for field in ["found", "usable", "hints", "supported_range", "kind"] {
            assert!(provider.get(field).is_some(), "{field}: {provider}");
        }
    }
}

#[test]
fn local_stores_are_found_in_the_roots_and_their_children() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let make = |p: &Path| {
        std::fs::create_dir_all(p.join(".forgecode")).unwrap();
        std::fs::write(p.join(".forgecode/forge.db"), b"").unwrap();
    };
    make(&root);
    make(&root.join("app"));
    make(&root.join("app/nested"));
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let found: Vec<_> = crate::board::local::stores(
        std::slice::from_ref(&root),
        forge_adapter_store::DEFAULT_FILE,
    )
    .into_iter()
    .map(|(repo, _)| repo)
    .collect();
    // Two levels down is not looked into.
    assert_eq!(found, [root.clone(), root.join("app")]);
}

#[tokio::test]
async fn a_task_run_locally_is_on_the_board_beside_the_queues() {
    use forge_domain::delivery::TaskRecord;
    use forge_domain::task::TaskStatus;
    use forge_ports::TaskStore;

    let server = start().await;
    five(&server.queue).await;
    let repo = server.root.join("app");
    std::fs::create_dir_all(repo.join(".forgecode")).unwrap();
    let store = SqliteStore::open(repo.join(".forgecode/forge.db")).unwrap();
    let record = TaskRecord {
        task_id: TaskId::new("t-local").unwrap(),
        status: TaskStatus::PendingApproval,
        title: "Fix the add test".into(),
        repo: repo.display().to_string(),
        branch: "forge/t-local".into(),
        worktree: None,
        risk_score: 7,
        created_at_ms: 1,
        updated_at_ms: 4_001,
        report: report(
            "t-local",
            "pending_approval",
            json!({"decision": "pending_approval",
            "branch": "forge/t-local", "commit": null, "pushed": false,
            "approval_id": "ap-t-local", "notifications": []}),
        ),
    };
    TaskStore::save_task(&store, &record, &[]).await.unwrap();
    let (_, board) = get(&server, "/v1/board").await;
    let cards = board["cards"].as_array().unwrap();
    assert_eq!(cards.len(), 6, "{board}");
    let local = cards.iter().find(|c| c["task_id"] == "t-local").unwrap();
    let mut local = local.clone();
    local["repo"] = json!("[repo]");
    insta::assert_json_snapshot!("local_card", local);
    let (status, detail) = get(&server, "/v1/board/tasks/t-local").await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(detail["card"]["source"], "local");
    assert_eq!(detail["risk"]["score"], 7);
}

/// The first `card` message of the board's stream at `path` (the data of its block).
async fn first_card(base: &str, path: &str) -> Value {
    let mut response = reqwest::Client::new()
        .get(format!("{base}{path}"))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut text = String::new();
    // A guard against a stream that never sends, not a measure.
    let read = async {
        loop {
            let chunk = response.chunk().await.unwrap().unwrap();
            text.push_str(&String::from_utf8_lossy(&chunk));
            if let Some(block) = text.split("\n\n").find(|b| b.contains("event: card")) {
                let data = block
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .unwrap();
                return serde_json::from_str::<Value>(data).unwrap();
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), read)
        .await
        .expect("a card message")
}

#[tokio::test]
async fn the_live_stream_starts_from_the_board_the_page_received() {
    let server = start().await;
    five(&server.queue).await;
    let (_, plain) = get(&server, "/v1/board").await;
    assert!(
        plain.get("snapshot").is_none(),
        "kept only when asked: {plain}"
    );
    let (_, board) = get(&server, "/v1/board?snapshot=1").await;
    let from = board["snapshot"].as_str().unwrap().to_owned();
    // A stream from the snapshot sends what changed after it, not the five cards again.
    let stream = tokio::spawn({
        let (base, path) = (server.base.clone(), format!("/v1/board/events?from={from}"));
        async move { first_card(&base, &path).await }
    });
    task(&server.queue, "q-new", "codex", None).await;
    let card = stream.await.unwrap();
    assert_eq!(card["task_id"], "q-new", "{card}");
    assert_eq!(card["column"], "queued", "{card}");

    // The snapshot is taken once: a second stream from it (a reconnection) and a stream
    // without one start from every card.
    let again = first_card(&server.base, &format!("/v1/board/events?from={from}")).await;
    assert_ne!(
        again["task_id"], "q-new",
        "every card first, newest last: {again}"
    );
    let fresh = first_card(&server.base, "/v1/board/events").await;
    assert_eq!(fresh["task_id"], again["task_id"]);
}

#[tokio::test]
async fn a_stage_stored_between_two_reads_of_the_board_is_on_the_second() {
    let server = start().await;
    five(&server.queue).await;
    let stage = |board: &Value| {
        board["cards"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["task_id"] == "q-running")
            .map(|c| c["stage"].clone())
            .unwrap()
    };
    let (_, first) = get(&server, "/v1/board").await;
    assert_eq!(stage(&first), "validation");
    // Nothing stored since: the same stage (its events not read again).
    let (_, same) = get(&server, "/v1/board").await;
    assert_eq!(stage(&same), "validation");
    let running = TaskId::new("q-running").unwrap();
    server
        .queue
        .append_event(
            &running,
            "stage",
            &json!({"stage": "review", "detail": "", "elapsed_ms": 12, "cost_usd": 0.3}),
        )
        .await
        .unwrap();
    let (_, second) = get(&server, "/v1/board").await;
    assert_eq!(stage(&second), "review", "{second}");
}

#[tokio::test]
async fn the_page_opens_on_the_board_with_a_queue_and_on_the_chat_without() {
    let page = |base: String| async move {
        reqwest::get(format!("{base}/"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let with_queue = start().await;
    let text = page(with_queue.base.clone()).await;
    assert!(text.contains(r#"<body data-home="board">"#), "{text}");

    let dir = tempfile::tempdir().unwrap();
    let base = serve(parts(dir.path(), None)).await;
    let text = page(base).await;
    assert!(text.contains(r#"<body data-home="chat">"#), "{text}");
    assert!(!text.contains("data-home=\"board\""), "{text}");
}
