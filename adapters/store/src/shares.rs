//! Share links on the SQLite file (`share_links`): the [`ShareLinks`] port, each call one
//! statement or one IMMEDIATE transaction. A revocation is a conditional UPDATE, so the
//! first revocation time stands.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::share::ShareLink;
use forge_domain::task::TaskId;
use forge_ports::ShareLinks;
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{bad_row, store_error};
use crate::store::SqliteStore;

const COLUMNS: &str = "share_id, task_id, secret_digest, created_by, created_at_ms, revoked_at_ms";
const TABLE: &str = "share_links";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

type Raw = (String, String, String, String, i64, Option<i64>);

fn link_of(path: &Path, raw: Raw) -> Result<ShareLink, ForgeError> {
    let (share_id, task, secret_digest, created_by, created, revoked) = raw;
    Ok(ShareLink {
        task_id: TaskId::new(task.clone())
            .map_err(|e| bad_row(path, TABLE, format!("task id {task:?}: {e}")))?,
        share_id,
        secret_digest,
        created_by,
        created_at_ms: u64::try_from(created).unwrap_or(0),
        revoked_at_ms: revoked.map(|v| u64::try_from(v).unwrap_or(0)),
    })
}

fn read(conn: &Connection, path: &Path, id: &str) -> Result<Option<ShareLink>, ForgeError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM {TABLE} WHERE share_id = ?1"),
        params![id],
        |row| Raw::try_from(row),
    )
    .optional()
    .map_err(|e| store_error(path, "reading a share link", &e))?
    .map(|r| link_of(path, r))
    .transpose()
}

#[async_trait]
impl ShareLinks for SqliteStore {
    async fn create_share(&self, link: &ShareLink) -> Result<ShareLink, ForgeError> {
        let l = link.clone();
        self.write("creating a share link".to_owned(), move |tx, path| {
            let fail = |e: rusqlite::Error| store_error(path, "creating a share link", &e);
            let inserted = tx
                .execute(
                    &format!(
                        "INSERT INTO {TABLE} (share_id, task_id, secret_digest, created_by,
                            created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING"
                    ),
                    params![
                        l.share_id,
                        l.task_id.as_str(),
                        l.secret_digest,
                        l.created_by,
                        now_ms()
                    ],
                )
                .map_err(fail)?;
            if inserted == 0 {
                return Err(ForgeError::InvalidRequest {
                    reason: format!("a share link with id {} exists", l.share_id),
                });
            }
            read(tx, path, &l.share_id)?
                .ok_or_else(|| bad_row(path, TABLE, format!("link {} vanished", l.share_id)))
        })
        .await
    }

    async fn share(&self, share_id: &str) -> Result<Option<ShareLink>, ForgeError> {
        let id = share_id.to_owned();
        self.with(move |conn, path| read(conn, path, &id)).await
    }

    async fn shares(&self, task: &TaskId) -> Result<Vec<ShareLink>, ForgeError> {
        let task = task.as_str().to_owned();
        self.with(move |conn, path| {
            let fail = |e: rusqlite::Error| store_error(path, "listing share links", &e);
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM {TABLE} WHERE task_id = ?1
                     ORDER BY created_at_ms, rowid"
                ))
                .map_err(fail)?;
            let raws = stmt
                .query_map(params![task], |row| Raw::try_from(row))
                .map_err(fail)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(fail)?;
            raws.into_iter().map(|r| link_of(path, r)).collect()
        })
        .await
    }

    async fn revoke_share(&self, share_id: &str) -> Result<Option<ShareLink>, ForgeError> {
        let id = share_id.to_owned();
        self.write("revoking a share link".to_owned(), move |tx, path| {
            tx.execute(
                &format!(
                    "UPDATE {TABLE} SET revoked_at_ms = ?2
                     WHERE share_id = ?1 AND revoked_at_ms IS NULL"
                ),
                params![id, now_ms()],
            )
            .map_err(|e| store_error(path, "revoking a share link", &e))?;
            read(tx, path, &id)
        })
        .await
    }
}
