//! Schema migrations, versioned in the repository (`adapters/postgres/migrations/NNN_*.sql`)
//! and applied on connect.

use forge_domain::ForgeError;
use tokio_postgres::Client;

use crate::connect::db_error;

/// One migration: its version (the file's number) and SQL.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, in order. A new one is a new file and a new line here.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "001_queue",
        sql: include_str!("../migrations/001_queue.sql"),
    },
    Migration {
        version: 2,
        name: "002_queue_delivery",
        sql: include_str!("../migrations/002_queue_delivery.sql"),
    },
    Migration {
        version: 3,
        name: "003_event_seq",
        sql: include_str!("../migrations/003_event_seq.sql"),
    },
    Migration {
        version: 4,
        name: "004_queue_approvals",
        sql: include_str!("../migrations/004_queue_approvals.sql"),
    },
    Migration {
        version: 5,
        name: "005_share_links",
        sql: include_str!("../migrations/005_share_links.sql"),
    },
    Migration {
        version: 6,
        name: "006_permission_requests",
        sql: include_str!("../migrations/006_permission_requests.sql"),
    },
    Migration {
        version: 7,
        name: "007_forge_deliveries",
        sql: include_str!("../migrations/007_forge_deliveries.sql"),
    },
    Migration {
        version: 8,
        name: "008_session_archives",
        sql: include_str!("../migrations/008_session_archives.sql"),
    },
];

/// Any number fixed for forge: workers connecting at once take turns applying migrations.
const MIGRATION_LOCK: i64 = 0x666f_7267_6551;

/// Applies the migrations the database has not seen, each in a transaction that holds an
/// advisory lock and re-reads the version, so concurrent workers apply each once.
pub(crate) async fn migrate(client: &mut Client, url: &str) -> Result<(), ForgeError> {
    let fail = |e: tokio_postgres::Error| db_error(url, "applying migrations", &e);
    let known = MIGRATIONS.last().map_or(0, |m| m.version);
    for migration in MIGRATIONS {
        let tx = client.transaction().await.map_err(fail)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(fail)?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS forge_schema_version (
                version INTEGER PRIMARY KEY NOT NULL,
                name TEXT NOT NULL,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )
        .await
        .map_err(fail)?;
        let current: i32 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM forge_schema_version",
                &[],
            )
            .await
            .map_err(fail)?
            .get(0);
        if current > known {
            return Err(ForgeError::Io {
                context: format!("task queue {url}: applying migrations"),
                message: format!(
                    "the database has schema version {current}, newer than this forge knows ({known}); upgrade forge"
                ),
            });
        }
        if current >= migration.version {
            continue;
        }
        tx.batch_execute(migration.sql).await.map_err(fail)?;
        tx.execute(
            "INSERT INTO forge_schema_version (version, name) VALUES ($1, $2)",
            &[&migration.version, &migration.name],
        )
        .await
        .map_err(fail)?;
        tx.commit().await.map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_like_their_files() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(usize::try_from(m.version).ok(), Some(i + 1));
            assert!(
                m.name.starts_with(&format!("{:03}_", m.version)),
                "{}",
                m.name
            );
        }
    }
}
