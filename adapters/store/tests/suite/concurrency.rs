//! Two connections (as two forge processes would have) deciding the same approvals.

use forge_adapter_store::SqliteStore;
use forge_domain::delivery::{ApprovalState, Decision};
use forge_ports::{DecideOutcome, TaskStore};

use super::{LATEST, id, pending};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn exactly_one_of_two_concurrent_approvers_wins() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forge.db");
    let alice = SqliteStore::open(&path).unwrap();
    let bob = SqliteStore::open(&path).unwrap();
    for n in 0..25 {
        let approval = pending(&format!("t{n}"), n);
        alice.create_approval(&approval, &[]).await.unwrap();
        let (a, b) = tokio::join!(
            alice.decide_approval(&approval.id, Decision::Approve, "alice", None, 100),
            bob.decide_approval(&approval.id, Decision::Reject, "bob", None, 100),
        );
        let (a, b) = (a.unwrap(), b.unwrap());
        let winners = [&a, &b]
            .iter()
            .filter(|o| matches!(o, DecideOutcome::Decided(_)))
            .count();
        assert_eq!(winners, 1, "round {n}: {a:?} / {b:?}");
        // The loser is told what the winner decided.
        let stored = alice.approval(&approval.id).await.unwrap().unwrap();
        for outcome in [a, b] {
            let (DecideOutcome::Decided(seen) | DecideOutcome::AlreadyDecided(seen)) = outcome;
            assert_eq!(seen, stored);
        }
        assert_ne!(stored.state, ApprovalState::Pending);
        // One audit row: only the winner writes one.
        assert_eq!(bob.audit(&id(&format!("t{n}"))).await.unwrap().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_connections_opening_a_new_file_apply_the_schema_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let (a, b) = tokio::join!(
        tokio::task::spawn_blocking({
            let path = path.clone();
            move || SqliteStore::open(path)
        }),
        tokio::task::spawn_blocking({
            let path = path.clone();
            move || SqliteStore::open(path)
        }),
    );
    let (a, b) = (a.unwrap().unwrap(), b.unwrap().unwrap());
    assert_eq!(a.schema_version().unwrap(), LATEST);
    assert_eq!(b.schema_version().unwrap(), LATEST);
}
