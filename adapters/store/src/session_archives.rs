//! Agent sessions stored with their queued tasks on the SQLite file (`session_archives`):
//! the [`SessionArchives`] port. One row per task, replaced by a later attempt's.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::session_archive::SessionArchive;
use forge_domain::task::TaskId;
use forge_ports::SessionArchives;
use forge_ports::session_archives::storable;
use rusqlite::{OptionalExtension, params};

use crate::error::store_error;
use crate::store::SqliteStore;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[async_trait]
impl SessionArchives for SqliteStore {
    async fn put_session_archive(
        &self,
        task: &TaskId,
        archive: &SessionArchive,
    ) -> Result<(), ForgeError> {
        let json = storable(archive)?;
        let size = i64::try_from(json.len()).unwrap_or(i64::MAX);
        let (task, provider, session) = (
            task.to_string(),
            archive.provider.clone(),
            archive.session_id.clone(),
        );
        self.write("storing a session archive".to_owned(), move |tx, path| {
            tx.execute(
                "INSERT INTO session_archives
                    (task_id, provider, session_id, archive, size, stored_at_ms, seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6,
                    (SELECT COALESCE(MAX(seq), 0) + 1 FROM session_archives))
                 ON CONFLICT (task_id) DO UPDATE SET provider = excluded.provider,
                    session_id = excluded.session_id, archive = excluded.archive,
                    size = excluded.size, stored_at_ms = excluded.stored_at_ms,
                    seq = excluded.seq",
                params![task, provider, session, json, size, now_ms()],
            )
            .map_err(|e| store_error(path, "storing a session archive", &e))?;
            Ok(())
        })
        .await
    }

    async fn session_archive(
        &self,
        provider: &str,
        session_id: &str,
    ) -> Result<Option<SessionArchive>, ForgeError> {
        let (provider, session) = (provider.to_owned(), session_id.to_owned());
        let json: Option<String> = self
            .with(move |conn, path| {
                conn.query_row(
                    "SELECT archive FROM session_archives
                     WHERE provider = ?1 AND session_id = ?2
                     ORDER BY seq DESC LIMIT 1",
                    params![provider, session],
                    |row| row.get(0),
                )
                .optional()
                .map_err(|e| store_error(path, "reading a session archive", &e))
            })
            .await?;
        json.map(|j| {
            serde_json::from_str(&j).map_err(|e| ForgeError::Io {
                context: format!("reading session {session_id}'s archive"),
                message: e.to_string(),
            })
        })
        .transpose()
    }
}
