//! The permission requests live on the board's and a task's Server-Sent Events streams,
//! over a real SQLite store another handle writes (as another process would): the pending
//! ones first, then each new request and each decision as it comes — on a server without
//! a queue too; a task's stream carries its own requests only.

use std::sync::Arc;

use forge_adapter_store::SqliteStore;
use forge_domain::permission::{PermissionDecision, PermissionId, Verdict};
use forge_domain::queue::QueueSubmission;
use forge_domain::task::TaskId;
use forge_ports::{PermissionRequests, TaskQueue};
use forge_testkit::permission_contract::{request, run, task};
use serde_json::{Value, json};

use crate::ServerParts;
use crate::testing::{self, TestComposition, parts, serve};

const TOKEN: &str = "s3cret";

struct Server {
    base: String,
    /// The server's store; the tests write through a second handle on its file.
    other: SqliteStore,
    _dir: tempfile::TempDir,
}

/// A server keeping requests in a SQLite store, with that store as its queue or none;
/// with no store at all when `permissions` is false.
async fn start(queue: bool, permissions: bool) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let file = dir.path().join("forge.db");
    let store = Arc::new(SqliteStore::open(&file).unwrap());
    let base = serve(ServerParts {
        composition: Arc::new(TestComposition {
            permissions: permissions.then(|| store.clone() as Arc<dyn PermissionRequests>),
            ..TestComposition::default()
        }),
        queue: queue.then(|| {
            let links: Arc<dyn forge_ports::ShareLinks> = store.clone();
            (store.clone() as Arc<dyn TaskQueue>, links)
        }),
        ..parts(&root, Some(TOKEN))
    })
    .await;
    Server {
        base,
        other: SqliteStore::open(&file).unwrap(),
        _dir: dir,
    }
}

/// An open stream, read one message at a time.
struct Messages {
    response: reqwest::Response,
    text: String,
}

impl Messages {
    async fn open(server: &Server, path: &str) -> Self {
        let response = reqwest::Client::new()
            .get(format!("{}{path}", server.base))
            .bearer_auth(TOKEN)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        Self {
            response,
            text: String::new(),
        }
    }

    /// The next message about permissions: its event and its data (cards, keep-alives
    /// and the task's own events skipped).
    async fn next(&mut self) -> (String, Value) {
        // A guard against a stream that never sends, not a measure.
        let read = async {
            loop {
                while let Some(end) = self.text.find("\n\n") {
                    let block: String = self.text.drain(..end + 2).collect();
                    let field = |name: &str| {
                        block
                            .lines()
                            .find_map(|l| l.strip_prefix(name))
                            .map(str::to_owned)
                    };
                    let (Some(event), Some(data)) = (field("event: "), field("data: ")) else {
                        continue;
                    };
                    if event.starts_with("permission") {
                        return (event, serde_json::from_str::<Value>(&data).unwrap());
                    }
                }
                let chunk = self.response.chunk().await.unwrap().unwrap();
                self.text.push_str(&String::from_utf8_lossy(&chunk));
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), read)
            .await
            .expect("a permissions message")
    }
}

fn ids(message: &Value) -> Vec<&str> {
    message["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect()
}

async fn ask(store: &SqliteStore, id: &str, owner: forge_domain::permission::PermissionOwner) {
    let asked = request(id, owner, &format!("touch {id}"));
    store.ask_permission(&asked, 3_600_000).await.unwrap();
}

async fn decide(server: &Server, id: &str, body: Value) {
    let request = reqwest::Client::new()
        .post(format!("{}/v1/permissions/{id}", server.base))
        .bearer_auth(TOKEN)
        .json(&body);
    assert_eq!(testing::call(request).await.0, 200);
}

#[tokio::test]
async fn the_board_stream_carries_the_pending_requests_then_each_new_one_and_each_decision() {
    let server = start(true, true).await;
    ask(&server.other, "perm-a", run("run-1")).await;
    let mut stream = Messages::open(&server, "/v1/board/events").await;
    let (event, first) = stream.next().await;
    assert_eq!(
        (event.as_str(), ids(&first)),
        ("permissions", vec!["perm-a"])
    );
    assert_eq!(first["permissions"][0]["summary"], "Bash: touch perm-a");

    // Asked in another process: the board is told, as the run's stream tells it.
    ask(&server.other, "perm-b", task("q-1")).await;
    let (event, asked) = stream.next().await;
    assert_eq!(event, "permission_requested");
    assert_eq!(asked["type"], "permission_requested");
    assert_eq!(asked["request"]["id"], "perm-b");
    assert_eq!(asked["request"]["state"], "pending");
    assert_eq!(asked["request"]["owner"], json!({"task": "q-1"}));

    // Answered through the API, then from the other process: each decision comes once.
    decide(&server, "perm-a", json!({"decision": "allow", "by": "ana"})).await;
    let (event, decided) = stream.next().await;
    assert_eq!(event, "permission_decided");
    assert_eq!(decided["request"]["id"], "perm-a");
    assert_eq!(decided["request"]["state"], "allow");
    assert_eq!(decided["request"]["decision"]["by"]["name"], "ana");
    let deny = PermissionDecision::person(Verdict::Deny, Some("not now".into()), "bo").unwrap();
    let b = PermissionId::new("perm-b").unwrap();
    server.other.decide_permission(&b, &deny).await.unwrap();
    let (event, decided) = stream.next().await;
    assert_eq!(event, "permission_decided");
    assert_eq!(decided["request"]["id"], "perm-b");
    assert_eq!(decided["request"]["decision"]["message"], "not now");

    // A reconnection starts from what is pending now.
    let mut again = Messages::open(&server, "/v1/board/events").await;
    let (event, now) = again.next().await;
    assert_eq!(
        (event.as_str(), ids(&now)),
        ("permissions", Vec::<&str>::new())
    );
}

#[tokio::test]
async fn without_a_queue_the_board_stream_carries_the_requests_alone() {
    let server = start(false, true).await;
    ask(&server.other, "perm-a", run("run-1")).await;
    let mut stream = Messages::open(&server, "/v1/board/events").await;
    let (event, first) = stream.next().await;
    assert_eq!(
        (event.as_str(), ids(&first)),
        ("permissions", vec!["perm-a"])
    );

    // Neither a queue nor a store: nothing to be live about.
    let bare = start(false, false).await;
    let request = reqwest::Client::new()
        .get(format!("{}/v1/board/events", bare.base))
        .bearer_auth(TOKEN);
    assert_eq!(testing::call(request).await.0, 404);
}

#[tokio::test]
async fn a_tasks_stream_carries_its_own_requests_only() {
    let server = start(true, true).await;
    for id in ["q-1", "q-2"] {
        server
            .other
            .submit(&QueueSubmission {
                task_id: TaskId::new(id).unwrap(),
                repo: "file:///srv/app".into(),
                prompt: "make it so".into(),
                options: json!({"provider": "claude"}),
                max_attempts: 1,
            })
            .await
            .unwrap();
    }
    ask(&server.other, "perm-mine", task("q-1")).await;
    ask(&server.other, "perm-run", run("run-1")).await;
    ask(&server.other, "perm-other", task("q-2")).await;
    let mut stream = Messages::open(&server, "/v1/tasks/q-1/events").await;
    let (event, first) = stream.next().await;
    assert_eq!(
        (event.as_str(), ids(&first)),
        ("permissions", vec!["perm-mine"])
    );

    // Another task's request first, then this one's: only this one's comes.
    ask(&server.other, "perm-other-2", task("q-2")).await;
    ask(&server.other, "perm-mine-2", task("q-1")).await;
    let (event, asked) = stream.next().await;
    assert_eq!(
        (event.as_str(), &asked["request"]["id"]),
        ("permission_requested", &json!("perm-mine-2"))
    );
}
