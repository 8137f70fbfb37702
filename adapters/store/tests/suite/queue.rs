//! The task queue contract (forge-testkit's `queue_contract`) on the SQLite file.

use std::sync::Arc;

use forge_adapter_store::SqliteStore;
use forge_testkit::queue_contract::Queue;

/// Two handles (two connections, as two worker processes would have) on one new file.
async fn fresh() -> (Queue, Queue, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    (Arc::new(a), Arc::new(b), dir)
}

forge_testkit::queue_contract_tests!(fresh);

#[tokio::test]
async fn share_links_keep_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    forge_testkit::share_contract::check(&a, &b).await;
}

#[tokio::test]
async fn forge_deliveries_keep_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    forge_testkit::forge_deliveries_contract::check(&a, &b).await;
}

#[tokio::test]
async fn session_archives_keep_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    let a = SqliteStore::open(&path).unwrap();
    let b = SqliteStore::open(&path).unwrap();
    forge_testkit::session_archives_contract::check(&a, &b).await;
}

#[tokio::test]
async fn permission_requests_keep_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queue.db");
    let a = Arc::new(SqliteStore::open(&path).unwrap());
    let b = Arc::new(SqliteStore::open(&path).unwrap());
    forge_testkit::permission_contract::check(a, b, || async {
        Arc::new(SqliteStore::open(&path).unwrap()) as _
    })
    .await;
}
