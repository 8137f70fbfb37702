//! Agent sessions stored with their queued tasks on PostgreSQL (`session_archives`): the
//! [`SessionArchives`] port, each call one statement. One row per task, replaced by a later
//! attempt's.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::session_archive::SessionArchive;
use forge_domain::task::TaskId;
use forge_ports::SessionArchives;
use forge_ports::session_archives::storable;

use crate::queue::PgQueue;

#[async_trait]
impl SessionArchives for PgQueue {
    async fn put_session_archive(
        &self,
        task: &TaskId,
        archive: &SessionArchive,
    ) -> Result<(), ForgeError> {
        let json = storable(archive)?;
        let size = i64::try_from(json.len()).unwrap_or(i64::MAX);
        self.query(
            "storing a session archive",
            "INSERT INTO session_archives
                (task_id, provider, session_id, archive, size, stored_at_ms)
             VALUES ($1, $2, $3, $4, $5, forge_now_ms())
             ON CONFLICT (task_id) DO UPDATE SET provider = EXCLUDED.provider,
                session_id = EXCLUDED.session_id, archive = EXCLUDED.archive,
                size = EXCLUDED.size, stored_at_ms = EXCLUDED.stored_at_ms,
                seq = nextval(pg_get_serial_sequence('session_archives', 'seq'))
             RETURNING task_id",
            &[
                &task.as_str(),
                &archive.provider,
                &archive.session_id,
                &json,
                &size,
            ],
        )
        .await?;
        Ok(())
    }

    async fn session_archive(
        &self,
        provider: &str,
        session_id: &str,
    ) -> Result<Option<SessionArchive>, ForgeError> {
        let rows = self
            .query(
                "reading a session archive",
                "SELECT archive FROM session_archives WHERE provider = $1 AND session_id = $2
                 ORDER BY seq DESC LIMIT 1",
                &[&provider, &session_id],
            )
            .await?;
        rows.first()
            .map(|r| {
                let json: String = r.get(0);
                serde_json::from_str(&json).map_err(|e| ForgeError::Io {
                    context: format!("reading session {session_id}'s archive"),
                    message: e.to_string(),
                })
            })
            .transpose()
    }
}
