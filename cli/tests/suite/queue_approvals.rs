//! Approvals through the queue (`approvals … --queue URL`), with worker processes of their
//! own HOME and the fake CLI as their agent writing a `.env` (a risky change, held): a held
//! task is approved from another machine — once; a second decision is told (exit 4) — and
//! its worker, restarted meanwhile, commits and pushes it to the bare remote once; a
//! rejected one pushes nothing and its work tree is gone. On SQLite and on PostgreSQL.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::harness::wait_for;
use super::queue::{BUILT_IN, LIMIT, Setup, assert_delivered_once, is_final, state, task_branches};
use super::queue_serve::{QueueServer, get};
use super::serve_harness::client;

const RISKY: &[(&str, &str)] = &[("AGENT_ALSO", ".env")];

/// `approvals ARGS --queue URL` from a machine of its own.
fn approvals(setup: &Setup, args: &[&str]) -> Output {
    setup
        .forge("approver")
        .arg("approvals")
        .args(args)
        .args(["--queue", &setup.queue])
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn approval(setup: &Setup, id: &str) -> Value {
    json_of(&approvals(setup, &["show", id, "--json"]))["approval"].clone()
}

/// Submits a task the worker `name` runs and holds for approval; its id and report.
fn held_task(setup: &Setup, name: &str) -> (String, Value) {
    let worker = setup.worker(name, RISKY, "30000");
    let id = setup.submit("write the answer");
    assert!(
        wait_for(LIMIT, || is_final(&setup.status(&id))),
        "{id} never ended"
    );
    assert_eq!(worker.stop(), Some(0));
    let status = setup.status(&id);
    assert_eq!(state(&status), "succeeded", "{status}");
    assert_eq!(status["exit_code"], 10, "{status}");
    assert_eq!(status["approval"]["status"], "pending", "{status}");
    assert_eq!(status["approval"]["worker"], name, "{status}");
    let report = status["report"].clone();
    assert_eq!(
        report["delivery"]["decision"], "pending_approval",
        "{report}"
    );
    (id, report)
}

fn approved_from_another_machine_and_delivered_once(postgres: bool) {
    let setup = Setup::new(postgres);
    let (id, _) = held_task(&setup, "w1");
    let ap = format!("ap-{id}");
    let listed = json_of(&approvals(&setup, &["list", "--json"]));
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["approval_id"], ap.as_str(), "{listed}");
    assert_eq!(listed[0]["files"][0], ".env", "{listed}");

    // Decided with the worker down: it waits for it, visibly.
    let decided = json_of(&approvals(&setup, &["approve", &ap, "--json"]));
    assert_eq!(
        decided["status"], "approved (waiting for worker w1)",
        "{decided}"
    );
    for again in [vec!["approve", &ap], vec!["reject", &ap]] {
        let out = approvals(&setup, &again);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{again:?}: {stderr}");
        assert!(stderr.contains("already decided: approved"), "{stderr}");
    }
    assert!(task_branches(&setup).is_empty());
    let pending = json_of(&approvals(&setup, &["list", "--json"]));
    assert_eq!(pending, serde_json::json!([]));

    // The worker back (same name, same HOME) carries it out: committed and pushed once.
    let worker = setup.worker("w1", RISKY, "30000");
    assert!(
        wait_for(LIMIT, || approval(&setup, &ap)["outcome"].is_object()),
        "never carried out"
    );
    let done = approval(&setup, &ap);
    assert_eq!(done["status"], "approved, delivered", "{done}");
    assert_eq!(
        done["outcome"]["report"]["delivery"]["pushed"], true,
        "{done}"
    );
    assert_delivered_once(&setup, &id, BUILT_IN);
    let status = setup.status(&id);
    assert_eq!(
        status["approval"]["status"], "approved, delivered",
        "{status}"
    );
    // Nothing more happens: a second approval is still refused, still one push.
    assert_eq!(approvals(&setup, &["approve", &ap]).status.code(), Some(4));
    assert_eq!(worker.stop(), Some(0));
    assert_delivered_once(&setup, &id, BUILT_IN);
}

fn rejected_pushes_nothing_and_removes_the_change(postgres: bool) {
    let setup = Setup::new(postgres);
    let (id, report) = held_task(&setup, "w1");
    let ap = format!("ap-{id}");
    let worktree = report["worktree"].as_str().unwrap().to_owned();
    assert!(Path::new(&worktree).is_dir(), "{worktree}");
    let worker = setup.worker("w1", RISKY, "30000");
    let out = approvals(&setup, &["reject", &ap, "--reason", "no secrets"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        wait_for(LIMIT, || approval(&setup, &ap)["outcome"].is_object()),
        "never carried out"
    );
    let done = approval(&setup, &ap);
    assert_eq!(done["status"], "rejected, removed", "{done}");
    assert_eq!(done["reason"], "no secrets", "{done}");
    assert_eq!(worker.stop(), Some(0));
    assert!(task_branches(&setup).is_empty());
    assert!(!Path::new(&worktree).exists(), "{worktree} kept");
}

#[test]
fn sqlite_approved_from_another_machine_and_delivered_once() {
    approved_from_another_machine_and_delivered_once(false);
}

#[test]
fn postgres_approved_from_another_machine_and_delivered_once() {
    approved_from_another_machine_and_delivered_once(true);
}

#[test]
fn sqlite_rejected_pushes_nothing_and_removes_the_change() {
    rejected_pushes_nothing_and_removes_the_change(false);
}

#[test]
fn postgres_rejected_pushes_nothing_and_removes_the_change() {
    rejected_pushes_nothing_and_removes_the_change(true);
}

#[test]
fn unknown_approvals_and_queues_are_usage_errors() {
    let setup = Setup::new(false);
    let code = |args: &[&str], queue: &str| {
        let out = setup
            .forge("approver")
            .arg("approvals")
            .args(args)
            .args(["--queue", queue])
            .output()
            .unwrap();
        out.status.code()
    };
    let queue = setup.queue.clone();
    for args in [
        &["show", "ap-nope"][..],
        &["approve", "ap-nope"],
        &["reject", "ap-nope"],
        &["approve", "not an id"],
    ] {
        assert_eq!(code(args, &queue), Some(2), "{args:?}");
    }
    assert_eq!(code(&["list"], "mysql://db/forge"), Some(2));
    // An empty queue lists nothing (and is no error).
    assert_eq!(code(&["list"], &queue), Some(0));
}

/// `serve --queue`: `/v1/approvals` without `?repo=` is the queue's — listed, decided once
/// (409 for the second), carried out by the holding worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_decides_the_queues_approvals_once() {
    let setup = Setup::new(false);
    let (id, _) = held_task(&setup, "w1");
    let ap = format!("ap-{id}");
    let server = QueueServer::start(&setup);
    let (code, listed) = get(&server, "/v1/approvals").await;
    assert_eq!(code, 200, "{listed}");
    assert_eq!(
        listed["approvals"][0]["approval_id"],
        ap.as_str(),
        "{listed}"
    );
    assert_eq!(listed["approvals"][0]["status"], "pending", "{listed}");
    let post = |path: String| {
        let url = server.url(&path);
        async move { client().post(url).send().await.unwrap().status().as_u16() }
    };
    assert_eq!(post(format!("/v1/approvals/{ap}/approve")).await, 200);
    assert_eq!(post(format!("/v1/approvals/{ap}/reject")).await, 409);
    assert_eq!(post("/v1/approvals/ap-nope/approve".to_owned()).await, 404);
    let worker = setup.worker("w1", RISKY, "30000");
    let show = format!("/v1/approvals/{ap}");
    let mut shown = Value::Null;
    for _ in 0..1200 {
        shown = get(&server, &show).await.1;
        if shown["approval"]["outcome"].is_object() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        shown["approval"]["status"], "approved, delivered",
        "{shown}"
    );
    assert_eq!(worker.stop(), Some(0));
    assert_delivered_once(&setup, &id, BUILT_IN);
}
