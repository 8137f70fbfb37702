//! A corrupt file, a locked file, history that must not change, ids that do not exist.

use std::time::Duration;

use forge_adapter_store::SqliteStore;
use forge_domain::delivery::{ApprovalId, AuditAction, Decision};
use forge_ports::TaskStore;

use super::{entry, id, task};

#[test]
fn a_corrupt_file_is_named_in_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forge.db");
    std::fs::write(&path, "this is not a database, just text ".repeat(200)).unwrap();
    let err = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("not a usable forge database"), "{err}");
    // The file is left as it was: forge does not "repair" what it cannot read.
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .starts_with("this is not")
    );
}

#[tokio::test]
async fn a_locked_file_is_named_and_nothing_is_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forge.db");
    let store = SqliteStore::open_with_busy_timeout(&path, Duration::from_millis(50)).unwrap();
    // Another process holds the write lock.
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let err = store
        .save_task(&task("t1", 1), &[entry("t1", 1, AuditAction::TaskStarted)])
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("locked"), "{err}");
    other.execute_batch("ROLLBACK").unwrap();
    assert!(store.tasks().await.unwrap().is_empty());
    assert!(store.audit(&id("t1")).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_audit_log_refuses_updates_and_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forge.db");
    let store = SqliteStore::open(&path).unwrap();
    store
        .append_audit(&entry("t1", 1, AuditAction::TaskStarted))
        .await
        .unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    for sql in [
        "UPDATE audit_log SET actor = 'mallory'",
        "DELETE FROM audit_log",
    ] {
        let err = raw.execute(sql, []).unwrap_err().to_string();
        assert!(err.contains("append-only"), "{sql}: {err}");
    }
    assert_eq!(store.audit(&id("t1")).await.unwrap()[0].actor, "forge");
}

#[tokio::test]
async fn deciding_an_unknown_approval_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("forge.db")).unwrap();
    let err = store
        .decide_approval(
            &ApprovalId::new("ap-nope").unwrap(),
            Decision::Approve,
            "a",
            None,
            1,
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "invalid_request");
    assert!(
        err.to_string().contains("no approval with id ap-nope"),
        "{err}"
    );
}

#[test]
fn a_file_from_a_newer_forge_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forge.db");
    drop(SqliteStore::open(&path).unwrap());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute(
        "INSERT INTO schema_version (version, name, applied_at_ms) VALUES (99, '099_future', 0)",
        [],
    )
    .unwrap();
    drop(raw);
    let err = SqliteStore::open(&path).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "schema version 99, newer than this forge knows ({})",
            super::LATEST
        )),
        "{err}"
    );
}
