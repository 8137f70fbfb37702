//! Schema migrations, versioned in the repository (`adapters/store/migrations/NNN_*.sql`)
//! and applied on open.

use std::path::Path;

use forge_domain::ForgeError;
use rusqlite::{Connection, TransactionBehavior};

use crate::error::store_error;

/// One migration: its version (the file's number) and SQL.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, in order. A new one is a new file and a new line here.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "001_initial",
        sql: include_str!("../migrations/001_initial.sql"),
    },
    Migration {
        version: 2,
        name: "002_queue",
        sql: include_str!("../migrations/002_queue.sql"),
    },
    Migration {
        version: 3,
        name: "003_queue_delivery",
        sql: include_str!("../migrations/003_queue_delivery.sql"),
    },
    Migration {
        version: 4,
        name: "004_event_seq",
        sql: include_str!("../migrations/004_event_seq.sql"),
    },
    Migration {
        version: 5,
        name: "005_queue_approvals",
        sql: include_str!("../migrations/005_queue_approvals.sql"),
    },
    Migration {
        version: 6,
        name: "006_share_links",
        sql: include_str!("../migrations/006_share_links.sql"),
    },
    Migration {
        version: 7,
        name: "007_permission_requests",
        sql: include_str!("../migrations/007_permission_requests.sql"),
    },
    Migration {
        version: 8,
        name: "008_forge_deliveries",
        sql: include_str!("../migrations/008_forge_deliveries.sql"),
    },
    Migration {
        version: 9,
        name: "009_session_archives",
        sql: include_str!("../migrations/009_session_archives.sql"),
    },
];

/// Applies the migrations `conn` has not seen. Each runs in an IMMEDIATE transaction that
/// re-reads the version first, so two processes opening a new file at once apply it once.
pub(crate) fn migrate(conn: &mut Connection, path: &Path, now_ms: u64) -> Result<(), ForgeError> {
    let fail = |e: rusqlite::Error| store_error(path, "applying migrations", &e);
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_version (
            version INTEGER PRIMARY KEY NOT NULL,
            name TEXT NOT NULL,
            applied_at_ms INTEGER NOT NULL
        )",
    )
    .map_err(fail)?;
    let known = MIGRATIONS.last().map_or(0, |m| m.version);
    for migration in MIGRATIONS {
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let current: u32 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) FROM schema_version",
                [],
                |row| row.get(0),
            )
            .map_err(fail)?;
        if current > known {
            return Err(ForgeError::Io {
                context: "task store: applying migrations".to_owned(),
                message: format!(
                    "{} has schema version {current}, newer than this forge knows ({known}); upgrade forge",
                    path.display()
                ),
            });
        }
        if current >= migration.version {
            continue;
        }
        tx.execute_batch(migration.sql).map_err(fail)?;
        tx.execute(
            "INSERT INTO schema_version (version, name, applied_at_ms) VALUES (?1, ?2, ?3)",
            rusqlite::params![migration.version, migration.name, now_ms],
        )
        .map_err(fail)?;
        tx.commit().map_err(fail)?;
    }
    Ok(())
}

/// The schema version recorded in `conn`.
pub(crate) fn version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |row| row.get(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_like_their_files() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1);
            assert!(
                m.name.starts_with(&format!("{:03}_", m.version)),
                "{}",
                m.name
            );
        }
    }
}
