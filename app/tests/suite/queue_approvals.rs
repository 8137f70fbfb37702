//! The worker's side of approvals through the queue, on the SQLite queue with a mocked
//! runner: a task whose report holds its change is filed under the worker's holder key; a
//! decision taken through another handle (another machine) is carried out once through
//! the runner, its outcome recorded and its push kept as the task's one delivery. A task
//! delivered at once files nothing and carries nothing out.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_adapter_store::SqliteStore;
use forge_app::queue::{QueuedTaskRunner, RunEnd, TaskEvent, Worker, WorkerConfig};
use forge_domain::delivery::{ApprovalId, ApprovalState, Decision};
use forge_domain::queue::{QueueDelivery, QueuedTask};
use forge_domain::queue_approval::{ApprovalOutcome, QueueApproval, QueueDecision};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use forge_testkit::queue_contract::submission;
use mockall::mock;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

mock! {
    Runner {}
    #[async_trait]
    impl QueuedTaskRunner for Runner {
        async fn run(
            &self,
            task: &QueuedTask,
            stop: CancellationToken,
            events: UnboundedSender<TaskEvent>,
        ) -> RunEnd;
        async fn carry_out(&self, approval: &QueueApproval, task: &QueuedTask) -> ApprovalOutcome;
    }
}

const HOLDER: &str = "host-a:/home/a/.cache/forge-code-agent";

fn report(decision: &str) -> Value {
    json!({
        "status": decision,
        "risk": {"score": 6, "reasons": ["+6 sensitive file .env"]},
        "files": [{"path": ".env"}],
        "delivery": {"decision": decision, "branch": "forge/t1", "approval_id": "ap-t1",
                     "pushed": false, "commit": null}
    })
}

fn ended(decision: &str, code: i32) -> RunEnd {
    RunEnd {
        exit_code: Some(code),
        report: Some(report(decision)),
        error: None,
    }
}

/// A worker (its name with a pid, as by default; its holder key stable) on `queue`.
fn start(
    queue: Arc<dyn TaskQueue>,
    runner: MockRunner,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let mut config = WorkerConfig::new("host-a-4242");
    config.holder = HOLDER.to_owned();
    config.idle_ms = 20;
    config.heartbeat_ms = 20;
    let stop = CancellationToken::new();
    let worker = Worker::new(queue, Arc::new(runner), config);
    let run = {
        let stop = stop.clone();
        tokio::spawn(async move {
            worker.run(stop).await;
        })
    };
    (stop, run)
}

/// Polls `check` until it holds (the worker runs in the background).
async fn eventually<F, Fut>(what: &str, check: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..1_000 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never: {what}");
}

fn queues() -> (Arc<dyn TaskQueue>, Arc<dyn TaskQueue>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    let a: Arc<dyn TaskQueue> = Arc::new(SqliteStore::open(&path).unwrap());
    let b: Arc<dyn TaskQueue> = Arc::new(SqliteStore::open(&path).unwrap());
    (a, b, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_change_is_filed_and_its_decision_carried_out_once() {
    let (queue, other_machine, _dir) = queues();
    queue.submit(&submission("t1", 3)).await.unwrap();
    let mut runner = MockRunner::new();
    runner
        .expect_run()
        .times(1)
        .returning(|_, _, _| ended("pending_approval", 10));
    runner
        .expect_carry_out()
        .withf(|a, t| {
            a.approval_id.as_str() == "ap-t1"
                && a.state == ApprovalState::Approved
                && a.push
                && t.task_id.as_str() == "t1"
        })
        .times(1)
        .returning(|_, _| ApprovalOutcome::Done {
            report: json!({"delivery": {"branch": "forge/t1", "commit": "c0ffee", "pushed": true}}),
        });
    let (stop, run) = start(Arc::clone(&queue), runner);
    let id = ApprovalId::new("ap-t1").unwrap();
    eventually("the held change is filed", || async {
        other_machine.approval(&id).await.unwrap().is_some()
    })
    .await;
    let filed = other_machine.approval(&id).await.unwrap().unwrap();
    assert_eq!(filed.worker, HOLDER);
    assert_eq!(filed.status_text(), "pending");
    assert_eq!(filed.files, [".env"]);
    let decision = QueueDecision {
        decision: Decision::Approve,
        by: "ann@b".to_owned(),
        reason: None,
        push: false,
    };
    other_machine.decide_approval(&id, &decision).await.unwrap();
    eventually("the decision is carried out", || async {
        other_machine
            .approval(&id)
            .await
            .unwrap()
            .unwrap()
            .outcome
            .is_some()
    })
    .await;
    // A few more looks of the worker: nothing is carried out twice (the mock says so).
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.cancel();
    run.await.unwrap();
    let done = other_machine.approval(&id).await.unwrap().unwrap();
    assert_eq!(done.status_text(), "approved, delivered");
    // The approval's push is the task's one delivery.
    let later = QueueDelivery {
        task_id: TaskId::new("t1").unwrap(),
        branch: "forge/t1".to_owned(),
        commit: "another".to_owned(),
        worker: "w2".to_owned(),
        at_ms: 0,
    };
    let standing = other_machine.record_delivery(&later).await.unwrap();
    assert_eq!(standing.commit, "c0ffee");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_committed_at_once_files_nothing() {
    let (queue, other_machine, _dir) = queues();
    queue.submit(&submission("t1", 3)).await.unwrap();
    let mut runner = MockRunner::new();
    runner
        .expect_run()
        .times(1)
        .returning(|_, _, _| ended("committed", 0));
    runner.expect_carry_out().times(0);
    let (stop, run) = start(Arc::clone(&queue), runner);
    let t1 = TaskId::new("t1").unwrap();
    eventually("the task ends", || async {
        other_machine
            .task(&t1)
            .await
            .unwrap()
            .is_some_and(|t| t.state.is_final())
    })
    .await;
    stop.cancel();
    run.await.unwrap();
    assert!(other_machine.approvals(true).await.unwrap().is_empty());
}
