//! The task queue contract on PostgreSQL: two connections (two machines) on a fresh database.

use std::sync::Arc;

use forge_adapter_postgres::PgQueue;
use forge_testkit::queue_contract::Queue;

use forge_testkit::postgres::FreshDb;

async fn fresh() -> (Queue, Queue, FreshDb) {
    let db = FreshDb::create().await;
    let a = PgQueue::connect(&db.url).await.unwrap();
    let b = PgQueue::connect(&db.url).await.unwrap();
    (Arc::new(a), Arc::new(b), db)
}

forge_testkit::queue_contract_tests!(fresh);

#[tokio::test]
async fn share_links_keep_the_contract() {
    let db = FreshDb::create().await;
    let a = PgQueue::connect(&db.url).await.unwrap();
    let b = PgQueue::connect(&db.url).await.unwrap();
    forge_testkit::share_contract::check(&a, &b).await;
}

#[tokio::test]
async fn forge_deliveries_keep_the_contract() {
    let db = FreshDb::create().await;
    let a = PgQueue::connect(&db.url).await.unwrap();
    let b = PgQueue::connect(&db.url).await.unwrap();
    forge_testkit::forge_deliveries_contract::check(&a, &b).await;
}

#[tokio::test]
async fn session_archives_keep_the_contract() {
    let db = FreshDb::create().await;
    let a = PgQueue::connect(&db.url).await.unwrap();
    let b = PgQueue::connect(&db.url).await.unwrap();
    forge_testkit::session_archives_contract::check(&a, &b).await;
}

#[tokio::test]
async fn permission_requests_keep_the_contract() {
    let db = FreshDb::create().await;
    let a = Arc::new(PgQueue::connect(&db.url).await.unwrap());
    let b = Arc::new(PgQueue::connect(&db.url).await.unwrap());
    forge_testkit::permission_contract::check(a, b, || async {
        Arc::new(PgQueue::connect(&db.url).await.unwrap()) as _
    })
    .await;
}
