//! What goes in comes out, also after closing and reopening the file.

use forge_adapter_store::SqliteStore;
use forge_domain::delivery::{
    ApprovalState, AuditAction, CodeChange, Decision, NotificationResult,
};
use forge_domain::task::TaskStatus;
use forge_ports::{DecideOutcome, TaskStore};
use pretty_assertions::assert_eq;

use super::{LATEST, entry, id, pending, task};

#[tokio::test]
async fn rows_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".forgecode/forge.db");
    {
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), LATEST);
        store
            .save_task(
                &task("t1", 10),
                &[entry("t1", 10, AuditAction::TaskStarted)],
            )
            .await
            .unwrap();
        store.save_task(&task("t2", 20), &[]).await.unwrap();
        let change = CodeChange {
            task_id: id("t1"),
            branch: "forge/t1".into(),
            commit: Some("abc".into()),
            base: Some("def".into()),
            pushed: false,
            push_error: Some("remote refused".into()),
            files: vec!["a.rs".into(), "b.rs".into()],
            at_ms: 11,
        };
        store
            .save_change(&change, &[entry("t1", 11, AuditAction::Committed)])
            .await
            .unwrap();
        store
            .create_approval(
                &pending("t2", 21),
                &[entry("t2", 21, AuditAction::ApprovalRequested)],
            )
            .await
            .unwrap();
        let failed = NotificationResult {
            channel: "webhook".into(),
            ok: false,
            error: Some("500".into()),
        };
        store
            .record_notification(&pending("t2", 0).id, &failed, 22, &[])
            .await
            .unwrap();
    }
    // Reopening applies no migration twice and finds everything.
    let store = SqliteStore::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), LATEST);
    let tasks = store.tasks().await.unwrap();
    let names: Vec<&str> = tasks.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(names, vec!["t2", "t1"], "newest first");
    assert_eq!(store.task(&id("t1")).await.unwrap(), Some(task("t1", 10)));
    assert_eq!(store.task(&id("nope")).await.unwrap(), None);
    let change = store.change(&id("t1")).await.unwrap().unwrap();
    assert_eq!(change.files, vec!["a.rs", "b.rs"]);
    assert_eq!(change.push_error.as_deref(), Some("remote refused"));
    assert_eq!(store.change(&id("t2")).await.unwrap(), None);
    let approvals = store.approvals(Some(ApprovalState::Pending)).await.unwrap();
    assert_eq!(approvals, vec![pending("t2", 21)]);
    assert!(
        store
            .approvals(Some(ApprovalState::Approved))
            .await
            .unwrap()
            .is_empty()
    );
    let sent = store.notifications(&pending("t2", 0).id).await.unwrap();
    assert_eq!(sent.len(), 1);
    assert!(!sent[0].ok);
    let audit = store.audit(&id("t1")).await.unwrap();
    let actions: Vec<AuditAction> = audit.iter().map(|e| e.action).collect();
    assert_eq!(
        actions,
        vec![AuditAction::TaskStarted, AuditAction::Committed]
    );
    assert!(audit[0].seq < audit[1].seq);
}

#[tokio::test]
async fn saving_a_task_again_replaces_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("f.db")).unwrap();
    let mut record = task("t1", 1);
    store.save_task(&record, &[]).await.unwrap();
    record.status = TaskStatus::Committed;
    record.updated_at_ms = 5;
    store.save_task(&record, &[]).await.unwrap();
    let tasks = store.tasks().await.unwrap();
    assert_eq!(tasks, vec![record]);
}

#[tokio::test]
async fn deciding_records_who_when_why_and_audits_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("f.db")).unwrap();
    let approval = pending("t1", 1);
    store.create_approval(&approval, &[]).await.unwrap();
    let outcome = store
        .decide_approval(
            &approval.id,
            Decision::Reject,
            "alice",
            Some("touches .env"),
            9,
        )
        .await
        .unwrap();
    let DecideOutcome::Decided(decided) = outcome else {
        panic!("expected Decided, got {outcome:?}")
    };
    assert_eq!(decided.state, ApprovalState::Rejected);
    assert_eq!(decided.decided_by.as_deref(), Some("alice"));
    assert_eq!(decided.decided_at_ms, Some(9));
    assert_eq!(decided.reason.as_deref(), Some("touches .env"));
    let audit = store.audit(&id("t1")).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].action, AuditAction::Rejected);
    assert_eq!(audit[0].actor, "alice");
    assert_eq!(audit[0].detail, "ap-t1: touches .env");
    // Deciding again changes nothing and says who decided.
    let again = store
        .decide_approval(&approval.id, Decision::Approve, "bob", None, 10)
        .await
        .unwrap();
    assert_eq!(again, DecideOutcome::AlreadyDecided(decided));
    assert_eq!(store.audit(&id("t1")).await.unwrap().len(), 1);
    // A second approval with the same id is refused.
    let dup = store.create_approval(&approval, &[]).await.unwrap_err();
    assert!(dup.to_string().contains("already exists"), "{dup}");
}
