//! What the PostgreSQL adapter does when the server or the URL is not what it should be.

use forge_adapter_postgres::{MIGRATIONS, PgQueue};
use forge_domain::ForgeError;
use forge_ports::TaskQueue;

use forge_testkit::postgres::FreshDb;

#[tokio::test]
async fn an_unreachable_server_is_an_error_within_seconds_naming_it() {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let started = std::time::Instant::now();
    let err = PgQueue::connect("postgres://forge:secret@127.0.0.1:1/forge")
        .await
        .unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let text = err.to_string();
    assert!(matches!(err, ForgeError::Io { .. }), "{err:?}");
    assert!(
        text.contains("postgres://forge@127.0.0.1:1/forge"),
        "{text}"
    );
    assert!(!text.contains("secret"), "the password leaked: {text}");
}

#[tokio::test]
async fn a_url_that_is_not_postgres_is_refused() {
    for url in [
        "sqlite:///tmp/x.db",
        "mysql://h/db",
        "postgres:/nohost",
        "127.0.0.1:5432",
    ] {
        let err = PgQueue::connect(url).await.unwrap_err();
        assert!(
            matches!(err, ForgeError::InvalidRequest { .. }),
            "{url}: {err:?}"
        );
    }
}

#[tokio::test]
async fn connecting_twice_applies_each_migration_once() {
    let db = FreshDb::create().await;
    let (a, b) = tokio::join!(PgQueue::connect(&db.url), PgQueue::connect(&db.url));
    let (a, _b) = (a.unwrap(), b.unwrap());
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let versions: Vec<i32> = client
        .query(
            "SELECT version FROM forge_schema_version ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let expected: Vec<i32> = MIGRATIONS.iter().map(|m| m.version).collect();
    assert_eq!(versions, expected);
    assert!(a.tasks(1).await.unwrap().is_empty());
}

#[tokio::test]
async fn a_database_from_a_newer_forge_is_refused() {
    let db = FreshDb::create().await;
    drop(PgQueue::connect(&db.url).await.unwrap());
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute("INSERT INTO forge_schema_version (version, name) VALUES (99, '099_future')")
        .await
        .unwrap();
    let err = PgQueue::connect(&db.url).await.unwrap_err().to_string();
    assert!(
        err.contains("schema version 99, newer than this forge knows"),
        "{err}"
    );
}

#[tokio::test]
async fn a_connection_killed_by_the_server_is_made_again_on_the_next_call() {
    let db = FreshDb::create().await;
    let queue = PgQueue::connect(&db.url).await.unwrap();
    queue.wait_for_work(1).await.unwrap();
    // What a server restart does to forge's connections: ends every one of them.
    let (admin, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    // The call that meets the dead connection may fail; the one after reconnects.
    let mut outcome = queue.tasks(1).await;
    if outcome.is_err() {
        outcome = queue.tasks(1).await;
    }
    assert!(outcome.unwrap().is_empty());
    queue.wait_for_work(1).await.unwrap();
    queue.wait_for_work(1).await.unwrap();
    queue
        .submit(&forge_testkit::queue_contract::submission("t1", 1))
        .await
        .unwrap();
}

/// The `LISTEN` connections of this database (a board's feed, a task's event readers).
async fn listeners(url: &str) -> i64 {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity
             WHERE datname = current_database() AND query LIKE 'LISTEN%'",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn the_change_and_event_feeds_keep_their_one_connection_between_waits() {
    let db = FreshDb::create().await;
    let queue = PgQueue::connect(&db.url).await.unwrap();
    let task = forge_domain::task::TaskId::new("t-feed").unwrap();
    let seen = queue.wait_for_changes(0, 0).await.unwrap();
    queue.wait_for_events(&task, 0).await.unwrap();
    assert_eq!(
        listeners(&db.url).await,
        2,
        "one feed each, open after the wait"
    );
    // Later waits reuse them: the counter stays where it was with nothing changed, and no
    // other connection is opened.
    for _ in 0..3 {
        assert_eq!(queue.wait_for_changes(seen, 0).await.unwrap(), seen);
        queue.wait_for_events(&task, 0).await.unwrap();
    }
    assert_eq!(listeners(&db.url).await, 2);
}
