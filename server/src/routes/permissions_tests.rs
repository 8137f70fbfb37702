//! `/v1/permissions` over a real SQLite store, in-process: the pending requests listed
//! (snapshot), a decision taken once and a second refused with 409 naming the first, an
//! unknown id 404, a bad body 400, no token 401, an overdue request denied by timeout, and
//! a run in `ask` with a provider that cannot ask refused before it starts.

use std::sync::Arc;

use forge_adapter_store::SqliteStore;
use forge_ports::PermissionRequests;
use forge_testkit::permission_contract::{request, run, task};
use serde_json::{Value, json};

use crate::ServerParts;
use crate::testing::{self, TestComposition, parts, serve};

const TOKEN: &str = "s3cret";

struct Server {
    base: String,
    store: Arc<SqliteStore>,
    root: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

async fn start() -> Server {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let store = Arc::new(SqliteStore::open(dir.path().join("forge.db")).unwrap());
    let base = serve(ServerParts {
        composition: Arc::new(TestComposition {
            permissions: Some(store.clone() as Arc<dyn PermissionRequests>),
            ..TestComposition::default()
        }),
        ..parts(&root, Some(TOKEN))
    })
    .await;
    Server {
        base,
        store,
        root,
        _dir: dir,
    }
}

/// Times differ from run to run: each `*_ms` number is replaced.
fn scrub(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if key.ends_with("_ms") && v.is_number() {
                        *v = json!("[ms]");
                    } else {
                        walk(v);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

async fn call(server: &Server, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    call_as(server, method, path, body, true).await
}

async fn call_as(
    server: &Server,
    method: &str,
    path: &str,
    body: Option<Value>,
    token: bool,
) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", server.base));
    if token {
        request = request.bearer_auth(TOKEN);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    testing::call(request).await
}

/// Two pending requests (a run's and a queued task's) and one already decided.
async fn seed(store: &SqliteStore) {
    for r in [
        request("perm-a", run("run-1"), "cargo test"),
        request("perm-b", task("q-1"), "touch made.txt"),
        request("perm-c", run("run-1"), "ls"),
    ] {
        store.ask_permission(&r, 3_600_000).await.unwrap();
    }
    let rule = forge_domain::permission::PermissionDecision::rule(
        forge_domain::permission::Verdict::Allow,
        "Bash(ls)",
    );
    store
        .decide_permission(
            &forge_domain::permission::PermissionId::new("perm-c").unwrap(),
            &rule,
        )
        .await
        .unwrap();
}

#[tokio::test]
async fn the_pending_requests_are_listed_with_their_tool_owner_and_expiry() {
    let server = start().await;
    seed(&server.store).await;
    let (status, body) = call(&server, "GET", "/v1/permissions", None).await;
    assert_eq!(status, 200, "{body}");
    insta::assert_json_snapshot!("permissions_pending", scrub(body));
    let (status, _) = call_as(&server, "GET", "/v1/permissions", None, false).await;
    assert_eq!(status, 401, "the token is required");
}

#[tokio::test]
async fn a_decision_is_taken_once_and_a_second_is_refused_naming_the_first() {
    let server = start().await;
    seed(&server.store).await;
    let allow = json!({"decision": "allow", "by": "ana"});
    let (status, first) = call(&server, "POST", "/v1/permissions/perm-a", Some(allow)).await;
    assert_eq!(status, 200, "{first}");
    insta::assert_json_snapshot!("permissions_allowed", scrub(first));
    let deny = json!({"decision": "deny", "message": "not now"});
    let (status, second) = call(&server, "POST", "/v1/permissions/perm-a", Some(deny)).await;
    assert_eq!(status, 409, "{second}");
    insta::assert_json_snapshot!("permissions_second", scrub(second));
    // A rule's decision stands against a person too.
    let deny = json!({"decision": "deny"});
    let (status, by_rule) = call(&server, "POST", "/v1/permissions/perm-c", Some(deny)).await;
    assert_eq!(status, 409, "{by_rule}");
    assert_eq!(
        by_rule["decision"]["by"],
        json!({"source": "rule", "rule": "Bash(ls)"})
    );
    // Decided ones are no longer listed.
    let (_, listed) = call(&server, "GET", "/v1/permissions", None).await;
    let ids: Vec<&str> = listed["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["perm-b"]);
    // A deny with a message, as the agent will be told.
    let deny = json!({"decision": "deny", "message": "use make"});
    let (status, denied) = call(&server, "POST", "/v1/permissions/perm-b", Some(deny)).await;
    assert_eq!(status, 200, "{denied}");
    assert_eq!(denied["permission"]["decision"]["message"], "use make");
    assert_eq!(denied["permission"]["decision"]["by"]["name"], "serve");
}

#[tokio::test]
async fn bad_bodies_and_unknown_ids_are_refused() {
    let server = start().await;
    seed(&server.store).await;
    let check = |body: Value, path: &'static str, status: u16, says: &'static str| {
        let server = &server;
        async move {
            let (got, answer) = call(server, "POST", path, Some(body.clone())).await;
            assert_eq!(got, status, "{body} → {answer}");
            let message = answer["message"].as_str().unwrap_or_default();
            assert!(message.contains(says), "{body}: {message:?} lacks {says:?}");
        }
    };
    let a = "/v1/permissions/perm-a";
    check(
        json!({"decision": "allow", "message": "x"}),
        a,
        400,
        "deny only",
    )
    .await;
    check(json!({"decision": "maybe"}), a, 400, "unknown variant").await;
    check(
        json!({"decision": "allow", "extra": 1}),
        a,
        400,
        "unknown field",
    )
    .await;
    check(json!({}), a, 400, "decision").await;
    check(
        json!({"decision": "allow"}),
        "/v1/permissions/perm-zz",
        404,
        "perm-zz",
    )
    .await;
    check(
        json!({"decision": "allow"}),
        "/v1/permissions/a%20b",
        400,
        "permission request id",
    )
    .await;
    // Nothing above decided it.
    let (status, shown) = call(&server, "GET", a, None).await;
    assert_eq!(
        (status, &shown["permission"]["state"]),
        (200, &json!("pending"))
    );
}

#[tokio::test]
async fn nobody_answering_denies_by_timeout_and_a_late_answer_is_told_so() {
    let server = start().await;
    let late = request("perm-late", run("run-2"), "make");
    server.store.ask_permission(&late, 1).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let (_, listed) = call(&server, "GET", "/v1/permissions", None).await;
    assert_eq!(listed, json!({"permissions": []}));
    let allow = json!({"decision": "allow"});
    let (status, answer) = call(&server, "POST", "/v1/permissions/perm-late", Some(allow)).await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["permission"]["state"], "timeout");
    assert!(
        answer["message"].as_str().unwrap().contains("(timeout)"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_run_in_ask_with_a_provider_that_cannot_ask_is_refused_naming_the_acp_one() {
    let server = start().await;
    let body = json!({
        "provider": "codex", "prompt": "hi", "permission_mode": "ask",
        "workdir": server.root.display().to_string(),
    });
    let (status, answer) = call(&server, "POST", "/v1/runs", Some(body)).await;
    assert_eq!(status, 400, "{answer}");
    let message = answer["message"].as_str().unwrap();
    assert!(message.contains("codex-acp"), "{message}");
}

#[tokio::test]
async fn the_page_has_the_waiting_column_and_its_script() {
    let server = start().await;
    let page = reqwest::get(format!("{}/", server.base)).await.unwrap();
    let page = page.text().await.unwrap();
    assert!(
        page.contains(r#"data-column="waiting""#),
        "no Waiting for you column"
    );
    assert!(page.contains(r#"<script src="/assets/permissions.js">"#));
    let script = reqwest::get(format!("{}/assets/permissions.js", server.base))
        .await
        .unwrap();
    assert_eq!(script.status(), 200);
    let script = script.text().await.unwrap();
    for needed in [
        "/v1/permissions",
        "Waiting",
        "allow_session",
        "perm-allow",
        "perm-deny",
    ] {
        assert!(script.contains(needed), "permissions.js lacks {needed}");
    }
}
