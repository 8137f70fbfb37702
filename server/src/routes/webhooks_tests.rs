//! The webhook routes over a real SQLite queue and an in-memory forge: no bearer token, but
//! the forge's signature; a forged or missing one is 401 and nothing is queued; a malformed
//! payload 400; a repository no forge serves 202; a redelivery acts once.

use std::sync::Arc;

use forge_adapter_store::SqliteStore;
use forge_adapter_webhooks::{Webhooks, github_signature};
use forge_app::forges::{FeedbackParts, FeedbackSettings, ForgeEndpoint, ForgeFeedback};
use forge_domain::forges::{GithubRole, Permission, default_github};
use forge_ports::TaskQueue;
use forge_testkit::fakes::{MemoryForge, SequentialIds};
use serde_json::{Value, json};

use crate::ServerParts;
use crate::testing::{self, TestComposition, parts, serve};

const SECRET: &[u8] = b"hook-s3cret";

struct Server {
    base: String,
    queue: Arc<SqliteStore>,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let queue = Arc::new(SqliteStore::open(dir.path().join("queue.db")).unwrap());
    let forge = Arc::new(MemoryForge::new());
    forge.set_permission("alice", Permission::Github(GithubRole::Admin));
    forge.set_permission("rita", Permission::Github(GithubRole::Triage));
    let feedback = ForgeFeedback::new(FeedbackParts {
        endpoints: vec![ForgeEndpoint {
            settings: default_github(),
            forge,
            webhook_secret: Some(SECRET.to_vec()),
        }],
        queue: queue.clone(),
        deliveries: queue.clone(),
        ids: Arc::new(SequentialIds::default()),
        codec: Arc::new(Webhooks),
        settings: FeedbackSettings::default(),
    });
    let base = serve(ServerParts {
        composition: Arc::new(TestComposition {
            feedback: Some(Arc::new(feedback)),
            ..TestComposition::default()
        }),
        queue: Some((queue.clone(), queue.clone())),
        ..parts(dir.path(), Some("api-token"))
    })
    .await;
    Server {
        base,
        queue,
        _dir: dir,
    }
}

fn labelled(host: &str, sender: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "action": "labeled",
        "issue": {"number": 12, "title": "Greet in French", "body": "Bonjour"},
        "label": {"name": "forge"},
        "sender": {"login": sender},
        "repository": {"html_url": format!("https://{host}/octo/hello")}
    }))
    .unwrap()
}

/// POSTs `body` as GitHub event `event`, signed with `secret` (none: unsigned).
async fn post(
    server: &Server,
    event: &str,
    delivery: &str,
    body: &[u8],
    secret: Option<&[u8]>,
) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{}/v1/webhooks/github", server.base))
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .body(body.to_vec());
    if let Some(secret) = secret {
        request = request.header("x-hub-signature-256", github_signature(secret, body));
    }
    testing::call(request).await
}

async fn queued(server: &Server) -> usize {
    TaskQueue::tasks(&*server.queue, 100).await.unwrap().len()
}

#[tokio::test]
async fn a_forged_or_unsigned_delivery_is_refused_and_changes_nothing() {
    let s = start().await;
    let body = labelled("github.com", "alice");
    for secret in [None, Some(&b"guessed"[..])] {
        let (status, answer) = post(&s, "issues", "d-1", &body, secret).await;
        assert_eq!(status, 401, "{answer}");
        assert_eq!(answer["error"], "unauthorized");
    }
    assert_eq!(queued(&s).await, 0);
    // The refused attempts did not use the delivery id up.
    let (status, answer) = post(&s, "issues", "d-1", &body, Some(SECRET)).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["outcomes"][0]["outcome"], "issue_task_queued");
}

#[tokio::test]
async fn a_writers_labelled_issue_is_queued_once() {
    let s = start().await;
    let body = labelled("github.com", "alice");
    let (status, answer) = post(&s, "issues", "d-1", &body, Some(SECRET)).await;
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["outcomes"][0]["issue"], 12);
    let (status, answer) = post(&s, "issues", "d-1", &body, Some(SECRET)).await;
    assert_eq!(
        (status, answer["outcomes"][0]["outcome"].clone()),
        (202, json!("replayed"))
    );
    assert_eq!(queued(&s).await, 1);
}

#[tokio::test]
async fn what_asks_nothing_is_accepted_and_what_is_malformed_is_not() {
    let s = start().await;
    for (event, delivery, body, status, outcome) in [
        (
            "ping",
            "p-1",
            br#"{"zen": "hi"}"#.to_vec(),
            202,
            json!("ignored"),
        ),
        (
            "issues",
            "p-2",
            labelled("git.example.com", "alice"),
            202,
            json!("no_forge"),
        ),
        (
            "issues",
            "p-3",
            labelled("github.com", "rita"),
            202,
            json!("not_allowed"),
        ),
        ("issues", "p-4", b"{not json".to_vec(), 400, Value::Null),
        (
            "issues",
            "p-5",
            br#"{"action": "labeled"}"#.to_vec(),
            400,
            Value::Null,
        ),
    ] {
        let (got, answer) = post(&s, event, delivery, &body, Some(SECRET)).await;
        assert_eq!(got, status, "{event} {delivery}: {answer}");
        assert_eq!(answer["outcomes"][0]["outcome"], outcome, "{answer}");
    }
    assert_eq!(queued(&s).await, 0);
}
