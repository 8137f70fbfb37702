//! The contract every [`TaskQueue`] implementation keeps, run against each of them (the
//! SQLite and the PostgreSQL adapter) by [`queue_contract_tests!`](crate::queue_contract_tests).
//!
//! Each check gets two handles on one fresh, empty queue — two "machines" — and asserts
//! behaviour only: what a caller of the port can see.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed step should fail the test"
)]

use std::collections::BTreeMap;
use std::sync::Arc;

use forge_domain::ForgeError;
use forge_domain::delivery::{ApprovalId, ApprovalState, Decision};
use forge_domain::queue::{
    Finish, Heartbeat, QueueDelivery, QueueState, QueueSubmission, QueuedTask, dead_error,
};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;

/// A handle on the queue under test.
pub type Queue = Arc<dyn TaskQueue>;

/// Generates one `#[tokio::test]` per contract check. `$fresh` is an async fn returning
/// `(Queue, Queue, guard)`: two handles on one new empty queue and whatever must live as
/// long as the test (a temporary directory, a database dropped on drop).
#[macro_export]
macro_rules! queue_contract_tests {
    ($fresh:path) => {
        $crate::queue_contract_tests!(@each $fresh;
            submitted_task_reads_back,
            a_second_submit_of_an_id_is_refused,
            claims_take_the_oldest_and_count_an_attempt,
            concurrent_workers_claim_each_task_once,
            a_heartbeat_renews_only_the_holders_lease,
            a_lapsed_lease_is_taken_over_and_its_old_holder_locked_out,
            the_last_lapsed_lease_makes_the_task_dead,
            cancelling_a_queued_task_ends_it_unclaimed,
            cancelling_a_running_task_reaches_its_heartbeat,
            a_cancelled_task_whose_worker_died_ends_cancelled,
            a_result_is_recorded_once_and_only_by_the_holder,
            a_result_must_be_final,
            a_released_task_is_claimable_again_without_an_attempt,
            events_read_back_in_order_after_a_seq,
            events_are_numbered_per_task,
            a_batch_of_events_is_numbered_in_order_and_wakes_a_reader,
            a_claim_and_a_result_store_their_events,
            an_event_of_an_unknown_task_is_refused,
            a_reader_wakes_for_an_appended_event,
            a_board_watcher_wakes_for_each_change_made_elsewhere,
            an_idle_worker_wakes_for_a_submit,
            tasks_are_listed_newest_first,
            unknown_tasks_are_none,
            a_task_is_delivered_once_whoever_records_first,
            a_held_change_is_recorded_once_and_listed_while_pending,
            an_approval_is_decided_once_across_machines,
            a_decision_waits_for_its_holder_until_carried_out,
            approvals_of_unknown_tasks_and_ids_are_refused_or_none,
            an_approval_asking_to_push_pushes_only_when_it_stands
        );
    };
    (@each $fresh:path; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let (a, b, _guard) = $fresh().await;
                $crate::queue_contract::$name(a, b).await;
            }
        )*
    };
}

fn id(s: &str) -> TaskId {
    TaskId::new(s).unwrap()
}

/// A submission of task `name` with `max_attempts`.
pub fn submission(name: &str, max_attempts: u32) -> QueueSubmission {
    QueueSubmission {
        task_id: id(name),
        repo: "https://git.example/repo.git".to_owned(),
        prompt: format!("do {name}"),
        options: serde_json::json!({"provider": "claude", "push": true}),
        max_attempts,
    }
}

async fn submit(q: &Queue, name: &str) -> QueuedTask {
    q.submit(&submission(name, 3)).await.unwrap()
}

fn succeeded() -> Finish {
    Finish {
        state: QueueState::Succeeded,
        exit_code: Some(0),
        error: None,
        report: Some(serde_json::json!({"status": "validated"})),
    }
}

/// Lets a lease of 0 ms run out (leases compare with "before now").
async fn lapse() {
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
}

pub async fn submitted_task_reads_back(a: Queue, b: Queue) {
    let submitted = submit(&a, "t1").await;
    assert_eq!(submitted.state, QueueState::Queued);
    assert_eq!(submitted.attempts, 0);
    assert_eq!(submitted.max_attempts, 3);
    assert_eq!(submitted.worker, None);
    assert!(!submitted.cancel_requested);
    let read = b.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(read, submitted);
    assert_eq!(
        read.options,
        serde_json::json!({"provider": "claude", "push": true})
    );
    assert_eq!(read.prompt, "do t1");
}

pub async fn a_second_submit_of_an_id_is_refused(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    let again = b.submit(&submission("t1", 3)).await.unwrap_err();
    assert!(
        matches!(&again, ForgeError::InvalidRequest { reason } if reason.contains("t1")),
        "{again:?}"
    );
    assert_eq!(a.tasks(10).await.unwrap().len(), 1);
}

pub async fn claims_take_the_oldest_and_count_an_attempt(a: Queue, b: Queue) {
    for name in ["t1", "t2"] {
        submit(&a, name).await;
    }
    let first = b.claim("w1", 60_000).await.unwrap().unwrap();
    assert_eq!(first.task_id, id("t1"));
    assert_eq!(first.state, QueueState::Running);
    assert_eq!(first.attempts, 1);
    assert_eq!(first.worker.as_deref(), Some("w1"));
    assert!(first.lease_until_ms.is_some());
    assert!(first.started_at_ms.is_some());
    let second = a.claim("w2", 60_000).await.unwrap().unwrap();
    assert_eq!(second.task_id, id("t2"));
    assert_eq!(a.claim("w3", 60_000).await.unwrap(), None);
}

pub async fn concurrent_workers_claim_each_task_once(a: Queue, b: Queue) {
    const TASKS: usize = 24;
    for n in 0..TASKS {
        submit(&a, &format!("t{n}")).await;
    }
    let mut workers = Vec::new();
    for w in 0..6 {
        let q = if w % 2 == 0 {
            Arc::clone(&a)
        } else {
            Arc::clone(&b)
        };
        workers.push(tokio::spawn(async move {
            let mut mine = Vec::new();
            while let Some(task) = q.claim(&format!("w{w}"), 60_000).await.unwrap() {
                mine.push(task.task_id);
            }
            mine
        }));
    }
    let mut claimed: BTreeMap<TaskId, usize> = BTreeMap::new();
    for worker in workers {
        for task in worker.await.unwrap() {
            *claimed.entry(task).or_default() += 1;
        }
    }
    assert_eq!(claimed.len(), TASKS);
    assert!(claimed.values().all(|&n| n == 1), "{claimed:?}");
}

pub async fn a_heartbeat_renews_only_the_holders_lease(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    let claimed = a.claim("w1", 60_000).await.unwrap().unwrap();
    assert_eq!(
        b.heartbeat(&id("t1"), "w1", 120_000).await.unwrap(),
        Heartbeat::Held
    );
    let renewed = b.task(&id("t1")).await.unwrap().unwrap();
    assert!(renewed.lease_until_ms > claimed.lease_until_ms);
    assert_eq!(
        b.heartbeat(&id("t1"), "w2", 120_000).await.unwrap(),
        Heartbeat::Lost
    );
    assert_eq!(
        b.heartbeat(&id("nope"), "w1", 120_000).await.unwrap(),
        Heartbeat::Lost
    );
}

pub async fn a_lapsed_lease_is_taken_over_and_its_old_holder_locked_out(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.claim("w1", 0).await.unwrap().unwrap();
    lapse().await;
    let taken = b.claim("w2", 60_000).await.unwrap().unwrap();
    assert_eq!(taken.task_id, id("t1"));
    assert_eq!(taken.attempts, 2);
    assert_eq!(taken.worker.as_deref(), Some("w2"));
    assert_eq!(taken.last_error.as_deref(), Some("lease of w1 ran out"));
    assert_eq!(
        a.heartbeat(&id("t1"), "w1", 60_000).await.unwrap(),
        Heartbeat::Lost
    );
    assert!(!a.finish(&id("t1"), "w1", &succeeded()).await.unwrap());
    assert!(!a.release(&id("t1"), "w1").await.unwrap());
    let still = b.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(still.state, QueueState::Running);
    assert_eq!(still.worker.as_deref(), Some("w2"));
}

pub async fn the_last_lapsed_lease_makes_the_task_dead(a: Queue, b: Queue) {
    a.submit(&submission("t1", 2)).await.unwrap();
    a.claim("w1", 0).await.unwrap().unwrap();
    lapse().await;
    b.claim("w2", 0).await.unwrap().unwrap();
    lapse().await;
    assert_eq!(a.claim("w3", 60_000).await.unwrap(), None);
    let dead = b.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(dead.state, QueueState::Dead);
    assert_eq!(dead.attempts, 2);
    assert_eq!(dead.lease_until_ms, None);
    assert!(dead.finished_at_ms.is_some());
    assert_eq!(dead.last_error, Some(dead_error(2, Some("w2"))));
}

pub async fn cancelling_a_queued_task_ends_it_unclaimed(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    let cancelled = b.cancel(&id("t1")).await.unwrap().unwrap();
    assert_eq!(cancelled.state, QueueState::Cancelled);
    assert!(cancelled.finished_at_ms.is_some());
    assert_eq!(a.claim("w1", 60_000).await.unwrap(), None);
    // A final task stays as it is.
    let again = a.cancel(&id("t1")).await.unwrap().unwrap();
    assert_eq!(again.state, QueueState::Cancelled);
    assert!(!again.cancel_requested);
}

pub async fn cancelling_a_running_task_reaches_its_heartbeat(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.claim("w1", 60_000).await.unwrap().unwrap();
    let marked = b.cancel(&id("t1")).await.unwrap().unwrap();
    assert_eq!(marked.state, QueueState::Running);
    assert!(marked.cancel_requested);
    assert_eq!(
        a.heartbeat(&id("t1"), "w1", 60_000).await.unwrap(),
        Heartbeat::CancelRequested
    );
    let stop = Finish {
        state: QueueState::Cancelled,
        exit_code: Some(130),
        error: Some("cancelled by task cancel".to_owned()),
        report: None,
    };
    assert!(a.finish(&id("t1"), "w1", &stop).await.unwrap());
    let done = b.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(done.state, QueueState::Cancelled);
    assert_eq!(done.exit_code, Some(130));
}

pub async fn a_cancelled_task_whose_worker_died_ends_cancelled(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.claim("w1", 0).await.unwrap().unwrap();
    b.cancel(&id("t1")).await.unwrap().unwrap();
    lapse().await;
    assert_eq!(b.claim("w2", 60_000).await.unwrap(), None);
    let done = a.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(done.state, QueueState::Cancelled);
    assert_eq!(done.attempts, 1);
}

pub async fn a_result_is_recorded_once_and_only_by_the_holder(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.claim("w1", 60_000).await.unwrap().unwrap();
    assert!(!b.finish(&id("t1"), "w2", &succeeded()).await.unwrap());
    assert!(a.finish(&id("t1"), "w1", &succeeded()).await.unwrap());
    let failed = Finish {
        state: QueueState::Failed,
        exit_code: Some(1),
        error: Some("late".to_owned()),
        report: None,
    };
    assert!(!a.finish(&id("t1"), "w1", &failed).await.unwrap());
    let done = b.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(done.state, QueueState::Succeeded);
    assert_eq!(done.exit_code, Some(0));
    assert_eq!(
        done.report,
        Some(serde_json::json!({"status": "validated"}))
    );
    assert_eq!(done.lease_until_ms, None);
    assert!(done.finished_at_ms.is_some());
    assert_eq!(
        a.heartbeat(&id("t1"), "w1", 60_000).await.unwrap(),
        Heartbeat::Lost
    );
}

pub async fn a_result_must_be_final(a: Queue, _b: Queue) {
    submit(&a, "t1").await;
    a.claim("w1", 60_000).await.unwrap().unwrap();
    for state in [QueueState::Queued, QueueState::Running] {
        let finish = Finish {
            state,
            ..succeeded()
        };
        let err = a.finish(&id("t1"), "w1", &finish).await.unwrap_err();
        assert!(matches!(err, ForgeError::InvalidRequest { .. }), "{err:?}");
    }
    assert_eq!(
        a.task(&id("t1")).await.unwrap().unwrap().state,
        QueueState::Running
    );
}

pub async fn a_released_task_is_claimable_again_without_an_attempt(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.claim("w1", 60_000).await.unwrap().unwrap();
    assert!(!b.release(&id("t1"), "w2").await.unwrap());
    assert!(a.release(&id("t1"), "w1").await.unwrap());
    let back = b.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(back.state, QueueState::Queued);
    assert_eq!(back.attempts, 0);
    assert_eq!(back.lease_until_ms, None);
    let again = b.claim("w2", 60_000).await.unwrap().unwrap();
    assert_eq!(again.attempts, 1);
    assert_eq!(again.worker.as_deref(), Some("w2"));
}

pub async fn events_read_back_in_order_after_a_seq(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    submit(&a, "t2").await;
    let first = a
        .append_event(&id("t1"), "stage", &serde_json::json!({"stage": "clone"}))
        .await
        .unwrap();
    b.append_event(&id("t2"), "stage", &serde_json::json!({"stage": "other"}))
        .await
        .unwrap();
    let second = b
        .append_event(
            &id("t1"),
            "stage",
            &serde_json::json!({"stage": "validate"}),
        )
        .await
        .unwrap();
    assert_eq!((first, second), (1, 2));
    let all = a.events(&id("t1"), 0).await.unwrap();
    let kinds: Vec<_> = all
        .iter()
        .map(|e| (e.seq, e.data["stage"].clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            (first, serde_json::json!("clone")),
            (second, serde_json::json!("validate"))
        ]
    );
    assert!(
        all.iter()
            .all(|e| e.task_id == id("t1") && e.kind == "stage")
    );
    let rest = b.events(&id("t1"), first).await.unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].seq, second);
    assert!(b.events(&id("t1"), second).await.unwrap().is_empty());
}

pub async fn an_idle_worker_wakes_for_a_submit(a: Queue, b: Queue) {
    // Listen first (a worker is idle before the task comes), then submit from elsewhere.
    a.wait_for_work(1).await.unwrap();
    let waiter = {
        let a = Arc::clone(&a);
        tokio::spawn(async move {
            loop {
                a.wait_for_work(600_000).await.unwrap();
                if let Some(task) = a.claim("w1", 60_000).await.unwrap() {
                    return task;
                }
            }
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    submit(&b, "t1").await;
    // A waiter that is never woken would wait ten minutes: the bound only ends a broken
    // implementation's test, it measures nothing.
    let claimed = tokio::time::timeout(std::time::Duration::from_secs(30), waiter)
        .await
        .expect("the idle worker was not woken by the submit")
        .unwrap();
    assert_eq!(claimed.task_id, id("t1"));
}

pub async fn tasks_are_listed_newest_first(a: Queue, b: Queue) {
    for name in ["t1", "t2", "t3"] {
        submit(&a, name).await;
    }
    let ids: Vec<_> = b
        .tasks(10)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.task_id.to_string())
        .collect();
    assert_eq!(ids, ["t3", "t2", "t1"]);
    assert_eq!(b.tasks(2).await.unwrap().len(), 2);
}

pub async fn unknown_tasks_are_none(a: Queue, _b: Queue) {
    assert_eq!(a.task(&id("nope")).await.unwrap(), None);
    assert_eq!(a.cancel(&id("nope")).await.unwrap(), None);
    assert!(!a.release(&id("nope"), "w1").await.unwrap());
    assert!(a.tasks(10).await.unwrap().is_empty());
}

/// Two workers (a lost one and its successor, on two machines) record a delivery of one
/// task at the same time: one record stands, both are told which; recording it again is
/// harmless; a delivery of no task is refused.
pub async fn a_task_is_delivered_once_whoever_records_first(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    let delivery = |worker: &str, commit: &str| QueueDelivery {
        task_id: id("t1"),
        branch: "forge/t1".to_owned(),
        commit: commit.to_owned(),
        worker: worker.to_owned(),
        at_ms: 0,
    };
    let (first, second) = (delivery("w1", "aaa"), delivery("w2", "bbb"));
    let (from_a, from_b) = tokio::join!(a.record_delivery(&first), b.record_delivery(&second));
    let (from_a, from_b) = (from_a.unwrap(), from_b.unwrap());
    assert_eq!(from_a.commit, from_b.commit, "both see the one that stands");
    assert_eq!(from_a.worker, from_b.worker);
    let winner = if from_a.commit == "aaa" {
        &first
    } else {
        &second
    };
    assert_eq!(
        (from_a.branch.as_str(), from_a.worker.as_str()),
        ("forge/t1", winner.worker.as_str())
    );
    assert!(from_a.at_ms > 0, "{from_a:?}");
    let again = a.record_delivery(winner).await.unwrap();
    assert_eq!(again, from_a);
    let ghost = QueueDelivery {
        task_id: id("nope"),
        ..first.clone()
    };
    assert!(matches!(
        b.record_delivery(&ghost).await,
        Err(ForgeError::InvalidRequest { .. })
    ));
}

/// `a` for even `n`, `b` for odd: concurrent calls from two machines in turn.
fn either(a: &Queue, b: &Queue, n: u64) -> Queue {
    Arc::clone(if n % 2 == 0 { a } else { b })
}

pub async fn events_are_numbered_per_task(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    submit(&a, "t2").await;
    let data = serde_json::json!({});
    let mut seqs = Vec::new();
    for (q, task) in [(&a, "t1"), (&b, "t2"), (&b, "t1"), (&a, "t2"), (&a, "t1")] {
        seqs.push((
            task,
            q.append_event(&id(task), "stage", &data).await.unwrap(),
        ));
    }
    assert_eq!(
        seqs,
        [("t1", 1), ("t2", 1), ("t1", 2), ("t2", 2), ("t1", 3)]
    );
    let numbers = |events: Vec<forge_domain::queue::QueueEvent>| {
        events.into_iter().map(|e| e.seq).collect::<Vec<_>>()
    };
    assert_eq!(numbers(b.events(&id("t1"), 0).await.unwrap()), [1, 2, 3]);
    assert_eq!(numbers(b.events(&id("t2"), 1).await.unwrap()), [2]);
    // Concurrent appends to one task from two handles: every number once, none skipped.
    let appends: Vec<_> = (0..20)
        .map(|n| {
            let q = either(&a, &b, n);
            tokio::spawn(async move {
                q.append_event(&id("t2"), "agent", &serde_json::json!({"n": n}))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut got = Vec::new();
    for append in appends {
        got.push(append.await.unwrap());
    }
    got.sort_unstable();
    assert_eq!(got, (3..=22).collect::<Vec<u64>>());
    assert_eq!(
        numbers(a.events(&id("t2"), 0).await.unwrap()),
        (1..=22).collect::<Vec<u64>>()
    );
}

/// A batch of events is stored as appending each in turn would (numbers after the task's
/// others, in order, none skipped), concurrent batches and single appends interleave
/// without sharing a number, a reader waiting on the task wakes, an unknown task's batch is
/// refused whole, and an empty one stores nothing.
pub async fn a_batch_of_events_is_numbered_in_order_and_wakes_a_reader(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.append_event(&id("t1"), "stage", &serde_json::json!({"stage": "clone"}))
        .await
        .unwrap();
    let batch = |from: u64, n: u64| -> Vec<(String, serde_json::Value)> {
        (from..from + n)
            .map(|k| ("agent".to_owned(), serde_json::json!({"k": k})))
            .collect()
    };
    a.wait_for_events(&id("t1"), 1).await.unwrap();
    let reader = {
        let a = Arc::clone(&a);
        tokio::spawn(async move { a.wait_for_events(&id("t1"), 10_000).await })
    };
    assert_eq!(b.append_events(&id("t1"), &batch(0, 3)).await.unwrap(), 4);
    tokio::time::timeout(std::time::Duration::from_secs(5), reader)
        .await
        .expect("a reader wakes for a batch")
        .unwrap()
        .unwrap();
    let events = a.events(&id("t1"), 1).await.unwrap();
    let got: Vec<(u64, &str, serde_json::Value)> = events
        .iter()
        .map(|e| (e.seq, e.kind.as_str(), e.data.clone()))
        .collect();
    assert_eq!(
        got,
        [
            (2, "agent", serde_json::json!({"k": 0})),
            (3, "agent", serde_json::json!({"k": 1})),
            (4, "agent", serde_json::json!({"k": 2})),
        ]
    );
    let appends: Vec<_> = (0..10)
        .map(|n| {
            let q = either(&a, &b, n);
            tokio::spawn(async move {
                if n % 3 == 0 {
                    q.append_event(&id("t1"), "stage", &serde_json::json!({"n": n}))
                        .await
                        .unwrap();
                } else {
                    q.append_events(&id("t1"), &batch(100 * n, 4))
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for append in appends {
        append.await.unwrap();
    }
    let events = b.events(&id("t1"), 0).await.unwrap();
    let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
    // 4 so far, then 4 singles and 6 batches of 4.
    assert_eq!(seqs, (1..=32).collect::<Vec<u64>>());
    // Each batch's events stay together and in order.
    for n in (0..10u64).filter(|n| n % 3 != 0) {
        let at: Vec<u64> = events
            .iter()
            .filter(|e| {
                e.data["k"]
                    .as_u64()
                    .is_some_and(|k| k / 100 == n && k >= 100)
            })
            .map(|e| e.seq)
            .collect();
        assert_eq!(at.len(), 4, "batch {n}");
        assert_eq!(at[3] - at[0], 3, "batch {n} at {at:?}");
    }
    let err = a
        .append_events(&id("nope"), &batch(0, 2))
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::InvalidRequest { .. }), "{err:?}");
    assert_eq!(a.append_events(&id("t1"), &[]).await.unwrap(), 0);
    assert_eq!(b.events(&id("t1"), 32).await.unwrap(), vec![]);
}

/// The claim stores the attempt's `claimed` event and the result its `finished` event, in
/// the same step (numbered with the task's other events); a finish that records nothing
/// stores no event either.
pub async fn a_claim_and_a_result_store_their_events(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.claim("w1", 60_000).await.unwrap().unwrap();
    a.append_event(&id("t1"), "stage", &serde_json::json!({"stage": "clone"}))
        .await
        .unwrap();
    assert!(!b.finish(&id("t1"), "w2", &succeeded()).await.unwrap());
    assert!(a.finish(&id("t1"), "w1", &succeeded()).await.unwrap());
    assert!(!a.finish(&id("t1"), "w1", &succeeded()).await.unwrap());
    let events = |q: Queue, task: &'static str| async move {
        q.events(&id(task), 0)
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.seq, e.kind, e.data))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        events(Arc::clone(&b), "t1").await,
        [
            (
                1,
                "claimed".to_owned(),
                serde_json::json!({"worker": "w1", "attempt": 1})
            ),
            (2, "stage".to_owned(), serde_json::json!({"stage": "clone"})),
            (
                3,
                "finished".to_owned(),
                serde_json::json!({"state": "succeeded", "exit_code": 0})
            ),
        ]
    );
    // A lease taken over: each attempt's claim is its own event; a cancelled end without
    // an exit code stores it as null.
    submit(&a, "t2").await;
    a.claim("w1", 0).await.unwrap().unwrap();
    lapse().await;
    b.claim("w2", 60_000).await.unwrap().unwrap();
    let cancelled = Finish {
        state: QueueState::Cancelled,
        exit_code: None,
        error: None,
        report: None,
    };
    assert!(b.finish(&id("t2"), "w2", &cancelled).await.unwrap());
    assert_eq!(
        events(a, "t2").await,
        [
            (
                1,
                "claimed".to_owned(),
                serde_json::json!({"worker": "w1", "attempt": 1})
            ),
            (
                2,
                "claimed".to_owned(),
                serde_json::json!({"worker": "w2", "attempt": 2})
            ),
            (
                3,
                "finished".to_owned(),
                serde_json::json!({"state": "cancelled", "exit_code": null})
            ),
        ]
    );
}

pub async fn an_event_of_an_unknown_task_is_refused(a: Queue, _b: Queue) {
    let err = a
        .append_event(&id("nope"), "stage", &serde_json::json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ForgeError::InvalidRequest { reason } if reason.contains("nope")),
        "{err:?}"
    );
    assert!(a.events(&id("nope"), 0).await.unwrap().is_empty());
}

pub async fn a_reader_wakes_for_an_appended_event(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    // Listen first (a reader streams a task before its next event), then append elsewhere.
    a.wait_for_events(&id("t1"), 1).await.unwrap();
    let reader = {
        let a = Arc::clone(&a);
        tokio::spawn(async move {
            loop {
                let events = a.events(&id("t1"), 0).await.unwrap();
                if let Some(first) = events.into_iter().next() {
                    return first;
                }
                a.wait_for_events(&id("t1"), 600_000).await.unwrap();
            }
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    b.append_event(&id("t1"), "stage", &serde_json::json!({"stage": "clone"}))
        .await
        .unwrap();
    // As for the idle worker: the bound ends a broken implementation's test only.
    let first = tokio::time::timeout(std::time::Duration::from_secs(30), reader)
        .await
        .expect("the reader was not woken by the append")
        .unwrap();
    assert_eq!((first.seq, first.kind.as_str()), (1, "stage"));
}

/// Waits on `a` from `seen` while `change` is made (on another handle); the new counter.
async fn woken(
    a: &Queue,
    seen: u64,
    what: &str,
    change: impl std::future::Future<Output = ()>,
) -> u64 {
    let waiter = {
        let a = Arc::clone(a);
        // Spurious wake-ups are allowed (the port says so): only a counter that moved counts.
        tokio::spawn(async move {
            loop {
                let now = a.wait_for_changes(seen, 600_000).await.unwrap();
                if now != seen {
                    return now;
                }
            }
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    change.await;
    // As for the idle worker: the bound ends a broken implementation's test only.
    let now = tokio::time::timeout(std::time::Duration::from_secs(30), waiter)
        .await
        .unwrap_or_else(|_| panic!("the watcher was not woken by {what}"))
        .unwrap();
    assert_ne!(now, seen, "{what}");
    now
}

/// The board's live stream: a watcher of the whole queue wakes for every change another
/// machine makes — submit, claim, event, result, approval recorded, decided and carried
/// out, cancel — and returns at once for a counter it has not seen.
pub async fn a_board_watcher_wakes_for_each_change_made_elsewhere(a: Queue, b: Queue) {
    let mut seen = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        a.wait_for_changes(0, 600_000),
    )
    .await
    .expect("a first wait returns at once")
    .unwrap();
    // A short wait ends by its timeout (or a spurious wake-up, which the port allows).
    seen = a.wait_for_changes(seen, 1).await.unwrap();
    seen = woken(&a, seen, "a submit", async {
        submit(&b, "t1").await;
    })
    .await;
    seen = woken(&a, seen, "a claim", async {
        b.claim("w1", 60_000).await.unwrap().unwrap();
    })
    .await;
    seen = woken(&a, seen, "an event", async {
        b.append_event(&id("t1"), "stage", &serde_json::json!({"stage": "agent"}))
            .await
            .unwrap();
    })
    .await;
    seen = woken(&a, seen, "a result", async {
        assert!(b.finish(&id("t1"), "w1", &succeeded()).await.unwrap());
    })
    .await;
    seen = woken(&a, seen, "an approval recorded", async {
        b.record_approval(&held("t1", "w1")).await.unwrap();
    })
    .await;
    seen = woken(&a, seen, "a decision", async {
        b.decide_approval(&ap("t1"), &decision(Decision::Approve, "ann"))
            .await
            .unwrap();
    })
    .await;
    seen = woken(&a, seen, "a decision carried out", async {
        let done = ApprovalOutcome::Done {
            report: serde_json::json!({"delivery": {"decision": "committed"}}),
        };
        assert!(b.record_approval_outcome(&ap("t1"), &done).await.unwrap());
    })
    .await;
    submit(&b, "t2").await;
    let seen = a.wait_for_changes(seen, 600_000).await.unwrap();
    woken(&a, seen, "a cancel", async {
        b.cancel(&id("t2")).await.unwrap();
    })
    .await;
}

/// The approval task `name`'s held change asks for, held by `holder`.
pub fn held(name: &str, holder: &str) -> QueueApproval {
    QueueApproval {
        approval_id: ApprovalId::for_task(&id(name)),
        task_id: id(name),
        worker: holder.to_owned(),
        risk_score: 6,
        reasons: vec!["+6 sensitive file .env".to_owned()],
        files: vec![".env".to_owned(), "a.txt".to_owned()],
        summary: Some(format!("did {name}")),
        push: true,
        state: ApprovalState::Pending,
        requested_at_ms: 0,
        decided_by: None,
        reason: None,
        decided_at_ms: None,
        outcome: None,
    }
}

fn decision(decision: Decision, by: &str) -> QueueDecision {
    QueueDecision {
        decision,
        by: by.to_owned(),
        reason: Some(format!("{by} says so")),
        push: false,
    }
}

fn ap(name: &str) -> ApprovalId {
    ApprovalId::for_task(&id(name))
}

pub async fn a_held_change_is_recorded_once_and_listed_while_pending(a: Queue, b: Queue) {
    for name in ["t1", "t2"] {
        submit(&a, name).await;
    }
    let recorded = a.record_approval(&held("t1", "w1")).await.unwrap();
    assert_eq!(recorded.state, ApprovalState::Pending);
    assert!(recorded.requested_at_ms > 0);
    assert_eq!(
        recorded,
        QueueApproval {
            requested_at_ms: recorded.requested_at_ms,
            ..held("t1", "w1")
        }
    );
    // The same record again (a retried call) changes nothing.
    assert_eq!(
        a.record_approval(&held("t1", "w1")).await.unwrap(),
        recorded
    );
    // The task re-ran on another worker (the first died before recording the result): the
    // change that exists now is w2's, so the pending approval is w2's to carry out.
    let again = b.record_approval(&held("t1", "w2")).await.unwrap();
    assert_eq!(again.worker, "w2");
    assert_eq!(again.state, ApprovalState::Pending);
    b.record_approval(&held("t2", "w2")).await.unwrap();
    assert_eq!(b.approval(&ap("t1")).await.unwrap(), Some(again));
    let pending: Vec<_> = b.approvals(false).await.unwrap();
    let ids: Vec<_> = pending.iter().map(|p| p.approval_id.as_str()).collect();
    assert_eq!(ids, ["ap-t1", "ap-t2"]);
    a.decide_approval(&ap("t1"), &decision(Decision::Reject, "ann"))
        .await
        .unwrap();
    // Once decided, a record changes nothing: the decision is its holder's to carry out.
    let decided = a.record_approval(&held("t1", "w3")).await.unwrap();
    assert_eq!(decided.worker, "w2");
    assert_eq!(decided.state, ApprovalState::Rejected);
    let pending: Vec<_> = b.approvals(false).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].approval_id.as_str(), "ap-t2");
    assert_eq!(b.approvals(true).await.unwrap().len(), 2);
}

pub async fn an_approval_is_decided_once_across_machines(a: Queue, b: Queue) {
    submit(&a, "t1").await;
    a.record_approval(&held("t1", "w1")).await.unwrap();
    let (id1, yes, no) = (
        ap("t1"),
        decision(Decision::Approve, "ann"),
        decision(Decision::Reject, "bob"),
    );
    let (x, y) = tokio::join!(a.decide_approval(&id1, &yes), b.decide_approval(&id1, &no));
    let (x, y) = (x.unwrap().unwrap(), y.unwrap().unwrap());
    let (winner, loser) = match (&x, &y) {
        (Decided::Now(w), Decided::Already(l)) | (Decided::Already(l), Decided::Now(w)) => (w, l),
        other => panic!("not one winner: {other:?}"),
    };
    // The loser is told what stands: the winner's decision, unchanged.
    assert_eq!(winner, loser);
    assert_ne!(winner.state, ApprovalState::Pending);
    let by = winner.decided_by.as_deref().unwrap();
    let expected = if by == "ann" {
        ApprovalState::Approved
    } else {
        ApprovalState::Rejected
    };
    assert_eq!(winner.state, expected);
    assert_eq!(
        winner.reason.as_deref(),
        Some(format!("{by} says so").as_str())
    );
    assert!(winner.decided_at_ms.is_some());
    // Later decisions change nothing either.
    let later = a
        .decide_approval(&ap("t1"), &decision(Decision::Approve, "cy"))
        .await
        .unwrap();
    assert_eq!(later, Some(Decided::Already(winner.clone())));
}

pub async fn a_decision_waits_for_its_holder_until_carried_out(a: Queue, b: Queue) {
    for name in ["t1", "t2", "t3"] {
        submit(&a, name).await;
    }
    a.record_approval(&held("t1", "w1")).await.unwrap();
    a.record_approval(&held("t2", "w1")).await.unwrap();
    a.record_approval(&held("t3", "w2")).await.unwrap();
    // Nothing decided: nothing to do, and no outcome can be recorded.
    assert!(a.decided_approvals("w1").await.unwrap().is_empty());
    let done = ApprovalOutcome::Done {
        report: serde_json::json!({"delivery": {"decision": "committed", "pushed": true}}),
    };
    assert!(!a.record_approval_outcome(&ap("t1"), &done).await.unwrap());
    for name in ["t1", "t3"] {
        b.decide_approval(&ap(name), &decision(Decision::Approve, "ann"))
            .await
            .unwrap();
    }
    // Only the holder's decided approvals, and each until its outcome is recorded, once.
    let todo = a.decided_approvals("w1").await.unwrap();
    let ids: Vec<_> = todo.iter().map(|t| t.approval_id.as_str()).collect();
    assert_eq!(ids, ["ap-t1"]);
    assert!(todo[0].awaits_worker());
    assert!(a.record_approval_outcome(&ap("t1"), &done).await.unwrap());
    let failed = ApprovalOutcome::Failed {
        error: "late".to_owned(),
    };
    assert!(!b.record_approval_outcome(&ap("t1"), &failed).await.unwrap());
    assert!(a.decided_approvals("w1").await.unwrap().is_empty());
    let read = b.approval(&ap("t1")).await.unwrap().unwrap();
    assert_eq!(read.outcome, Some(done));
    assert_eq!(read.status_text(), "approved, delivered");
    let other = b.decided_approvals("w2").await.unwrap();
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].status_text(), "approved (waiting for worker w2)");
}

pub async fn approvals_of_unknown_tasks_and_ids_are_refused_or_none(a: Queue, b: Queue) {
    let refused = a.record_approval(&held("nope", "w1")).await.unwrap_err();
    assert!(
        matches!(&refused, ForgeError::InvalidRequest { reason } if reason.contains("nope")),
        "{refused:?}"
    );
    assert_eq!(b.approval(&ap("nope")).await.unwrap(), None);
    let decided = b
        .decide_approval(&ap("nope"), &decision(Decision::Approve, "ann"))
        .await
        .unwrap();
    assert_eq!(decided, None);
    assert!(b.approvals(true).await.unwrap().is_empty());
}

pub async fn an_approval_asking_to_push_pushes_only_when_it_stands(a: Queue, b: Queue) {
    for name in ["t1", "t2"] {
        submit(&a, name).await;
        let quiet = QueueApproval {
            push: false,
            ..held(name, "w1")
        };
        a.record_approval(&quiet).await.unwrap();
    }
    let pushing = |d: Decision| QueueDecision {
        push: true,
        ..decision(d, "ann")
    };
    let Some(Decided::Now(approved)) = b
        .decide_approval(&ap("t1"), &pushing(Decision::Approve))
        .await
        .unwrap()
    else {
        panic!("not decided")
    };
    assert!(approved.push);
    // A losing decision's --push changes nothing.
    b.decide_approval(&ap("t2"), &decision(Decision::Approve, "bob"))
        .await
        .unwrap();
    b.decide_approval(&ap("t2"), &pushing(Decision::Approve))
        .await
        .unwrap();
    assert!(!a.approval(&ap("t2")).await.unwrap().unwrap().push);
}
