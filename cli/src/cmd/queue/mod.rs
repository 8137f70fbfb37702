//! The task queue from the command line: `task submit | status | cancel`, `task list | show
//! --queue`, and `worker`. A queue URL is `postgres://…` / `postgresql://…` (many machines)
//! or `sqlite://PATH` (one machine, the embedded default).

pub(crate) mod approvals;
mod carry_out;
pub(crate) mod commands;
pub(crate) mod config;
pub(crate) mod options;
pub(crate) mod progress;
mod runner;
mod travel;
pub(crate) mod worker;

use std::sync::Arc;

use forge_adapter_postgres::{PgQueue, is_postgres_url};
use forge_adapter_store::SqliteStore;
use forge_domain::ForgeError;
use forge_ports::TaskQueue;

use crate::exit::Failure;

/// The environment variable a `--queue` flag falls back to.
pub const QUEUE_ENV: &str = "FORGE_QUEUE_URL";

/// Which queue a URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueUrl {
    Postgres(String),
    Sqlite(std::path::PathBuf),
}

/// Parses a `--queue` value: an unknown scheme is a usage error.
pub fn parse_url(url: &str) -> Result<QueueUrl, Failure> {
    if is_postgres_url(url) {
        return Ok(QueueUrl::Postgres(url.to_owned()));
    }
    if let Some(path) = url.strip_prefix("sqlite://") {
        if path.is_empty() {
            return Err(Failure::Usage(
                "--queue sqlite://PATH: the path of the database file is missing".to_owned(),
            ));
        }
        return Ok(QueueUrl::Sqlite(path.into()));
    }
    Err(Failure::Usage(format!(
        "--queue {}: unknown scheme; use postgres://USER@HOST/DB, postgresql://… or sqlite://PATH",
        url.split("://")
            .next()
            .filter(|_| url.contains("://"))
            .map_or(url, |s| s)
    )))
}

/// The queue to use: `flag` (`--queue` or `FORGE_QUEUE_URL`), else `[queue] url` of the
/// user configuration; `None` when neither names one.
///
/// # Errors
/// A usage error for a bad `[queue]` table.
pub fn queue_url(flag: Option<&str>) -> Result<Option<String>, Failure> {
    match flag.filter(|f| !f.is_empty()) {
        Some(url) => Ok(Some(url.to_owned())),
        None => Ok(config::load()?.url),
    }
}

/// The queue's database at `url`, opened (and migrated) once: every port the commands need
/// of it — tasks, share links, deliveries, sessions — is a view of this one handle.
enum Database {
    Postgres(Arc<PgQueue>),
    Sqlite(Arc<SqliteStore>),
}

impl Database {
    async fn open(url: &str) -> Result<Self, Failure> {
        match parse_url(url)? {
            QueueUrl::Postgres(url) => Ok(Self::Postgres(Arc::new(
                PgQueue::connect(&url).await.map_err(failure)?,
            ))),
            QueueUrl::Sqlite(path) => {
                // rusqlite is blocking: opening (and migrating) runs off the runtime's threads.
                let store = tokio::task::spawn_blocking(move || SqliteStore::open(path))
                    .await
                    .map_err(|e| Failure::Other(anyhow::anyhow!("opening the queue: {e}")))?
                    .map_err(failure)?;
                Ok(Self::Sqlite(Arc::new(store)))
            }
        }
    }

    fn queue(&self) -> Arc<dyn TaskQueue> {
        match self {
            Self::Postgres(db) => db.clone(),
            Self::Sqlite(db) => db.clone(),
        }
    }

    fn shares(&self) -> Arc<dyn forge_ports::ShareLinks> {
        match self {
            Self::Postgres(db) => db.clone(),
            Self::Sqlite(db) => db.clone(),
        }
    }

    fn deliveries(&self) -> Arc<dyn forge_ports::ForgeDeliveries> {
        match self {
            Self::Postgres(db) => db.clone(),
            Self::Sqlite(db) => db.clone(),
        }
    }

    fn sessions(&self) -> Arc<dyn forge_ports::SessionArchives> {
        match self {
            Self::Postgres(db) => db.clone(),
            Self::Sqlite(db) => db.clone(),
        }
    }
}

/// Opens (migrating) the queue at `url`.
///
/// # Errors
/// [`Failure`] for a bad URL (usage) or a queue that cannot be opened.
pub async fn open(url: &str) -> Result<Arc<dyn TaskQueue>, Failure> {
    Ok(Database::open(url).await?.queue())
}

/// The queue at `url` and the share links kept beside its tasks (one database, one handle).
///
/// # Errors
/// As [`open`].
pub async fn open_with_shares(
    url: &str,
) -> Result<(Arc<dyn TaskQueue>, Arc<dyn forge_ports::ShareLinks>), Failure> {
    let db = Database::open(url).await?;
    Ok((db.queue(), db.shares()))
}

/// The store that remembers the forges' deliveries, beside the queue at `url`.
///
/// # Errors
/// As [`open`].
pub async fn open_deliveries(url: &str) -> Result<Arc<dyn forge_ports::ForgeDeliveries>, Failure> {
    Ok(Database::open(url).await?.deliveries())
}

/// The agent sessions stored with the queue's tasks, beside the queue at `url` (issue 39).
///
/// # Errors
/// As [`open`].
pub async fn open_sessions(url: &str) -> Result<Arc<dyn forge_ports::SessionArchives>, Failure> {
    Ok(Database::open(url).await?.sessions())
}

/// A queue error as a command failure: a bad request is a usage error (exit 2), an
/// unreachable or broken queue exit 1.
pub fn failure(e: ForgeError) -> Failure {
    match e {
        ForgeError::InvalidRequest { reason } => Failure::Usage(reason),
        other => Failure::Other(anyhow::anyhow!(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_urls_are_postgres_or_sqlite() {
        let check = |url: &str, expected: Option<QueueUrl>| {
            assert_eq!(parse_url(url).ok(), expected, "{url}");
        };
        check(
            "postgres://forge@db/forge",
            Some(QueueUrl::Postgres("postgres://forge@db/forge".into())),
        );
        check(
            "postgresql://db:5433/forge",
            Some(QueueUrl::Postgres("postgresql://db:5433/forge".into())),
        );
        check(
            "sqlite:///var/forge/q.db",
            Some(QueueUrl::Sqlite("/var/forge/q.db".into())),
        );
        check("sqlite://q.db", Some(QueueUrl::Sqlite("q.db".into())));
        // Look-alikes that must be refused.
        for bad in [
            "sqlite://",
            "mysql://db/forge",
            "postgres:/db",
            "PG://db",
            "q.db",
            "",
        ] {
            check(bad, None);
            assert_eq!(parse_url(bad).err().map(|f| f.code()), Some(2), "{bad}");
        }
    }
}
