//! A fresh PostgreSQL database per test on the test server (`FORGE_TEST_POSTGRES_URL`, else
//! the machine's own at 127.0.0.1:5432), dropped when the test ends, pass or fail. No
//! server is a failure saying so, never a skip.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test support: a failed step should fail the test"
)]

use std::sync::atomic::{AtomicU32, Ordering};

use tokio_postgres::NoTls;

/// The server tests use unless `FORGE_TEST_POSTGRES_URL` names another.
pub const DEFAULT_SERVER: &str = "postgres://postgres@127.0.0.1:5432/postgres";

pub fn server_url() -> String {
    std::env::var("FORGE_TEST_POSTGRES_URL")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_SERVER.to_owned())
}

/// A database made for one test; dropped (connections ended) on drop.
pub struct FreshDb {
    pub url: String,
    name: String,
}

static NEXT: AtomicU32 = AtomicU32::new(0);

async fn admin() -> tokio_postgres::Client {
    let server = server_url();
    let (client, connection) = tokio_postgres::connect(&server, NoTls).await.unwrap_or_else(|e| {
        panic!(
            "these tests need a PostgreSQL server: {server} (FORGE_TEST_POSTGRES_URL) is not reachable: {e}"
        )
    });
    tokio::spawn(connection);
    client
}

impl FreshDb {
    /// Creates the database (from inside a tokio runtime).
    pub async fn create() -> Self {
        let name = format!(
            "forge_test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        );
        admin()
            .await
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap();
        let url = with_db(&server_url(), &name);
        Self { url, name }
    }
}

/// `server` with its database path replaced by `db`.
fn with_db(server: &str, db: &str) -> String {
    let (base, query) = server
        .split_once('?')
        .map_or((server, None), |(b, q)| (b, Some(q)));
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    let mut url = format!("{}/{db}", &base[..host_end]);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    url
}

impl FreshDb {
    /// [`FreshDb::create`] for tests without a runtime of their own.
    pub fn create_blocking() -> Self {
        std::thread::spawn(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(Self::create())
        })
        .join()
        .unwrap()
    }
}

impl Drop for FreshDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop runs inside the test's runtime; the DROP gets a small runtime of its own.
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                admin()
                    .await
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await
                    .ok();
            });
        })
        .join();
    }
}

#[test]
fn the_database_replaces_the_servers_path() {
    let check = |server: &str, expected: &str| assert_eq!(with_db(server, "d1"), expected);
    check(
        "postgres://postgres@127.0.0.1:5432/postgres",
        "postgres://postgres@127.0.0.1:5432/d1",
    );
    check(
        "postgres://u:p@h/x?sslmode=disable",
        "postgres://u:p@h/d1?sslmode=disable",
    );
    check("postgresql://h:5433", "postgresql://h:5433/d1");
}
