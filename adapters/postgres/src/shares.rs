//! Share links on PostgreSQL (`share_links`): the [`ShareLinks`] port, each call one
//! statement. A revocation is a conditional UPDATE, so the first revocation time stands.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::share::ShareLink;
use forge_domain::task::TaskId;
use forge_ports::ShareLinks;
use tokio_postgres::Row;

use crate::queue::PgQueue;

const COLUMNS: &str = "share_id, task_id, secret_digest, created_by, created_at_ms, revoked_at_ms";

fn link_from(row: &Row, url: &str) -> Result<ShareLink, ForgeError> {
    let task: String = row.get(1);
    let created: i64 = row.get(4);
    let revoked: Option<i64> = row.get(5);
    Ok(ShareLink {
        share_id: row.get(0),
        task_id: TaskId::new(task.clone()).map_err(|e| ForgeError::Io {
            context: format!("task queue {url}: reading a share link"),
            message: format!("task id {task:?}: {e}"),
        })?,
        secret_digest: row.get(2),
        created_by: row.get(3),
        created_at_ms: u64::try_from(created).unwrap_or(0),
        revoked_at_ms: revoked.map(|v| u64::try_from(v).unwrap_or(0)),
    })
}

impl PgQueue {
    fn links_of(&self, rows: &[Row]) -> Result<Vec<ShareLink>, ForgeError> {
        rows.iter().map(|r| link_from(r, self.url())).collect()
    }
}

#[async_trait]
impl ShareLinks for PgQueue {
    async fn create_share(&self, link: &ShareLink) -> Result<ShareLink, ForgeError> {
        let sql = format!(
            "INSERT INTO share_links (share_id, task_id, secret_digest, created_by,
                created_at_ms) VALUES ($1, $2, $3, $4, forge_now_ms())
             ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
        );
        let rows = self
            .query(
                "creating a share link",
                &sql,
                &[
                    &link.share_id,
                    &link.task_id.as_str(),
                    &link.secret_digest,
                    &link.created_by,
                ],
            )
            .await?;
        self.links_of(&rows)?
            .into_iter()
            .next()
            .ok_or_else(|| ForgeError::InvalidRequest {
                reason: format!("a share link with id {} exists", link.share_id),
            })
    }

    async fn share(&self, share_id: &str) -> Result<Option<ShareLink>, ForgeError> {
        let sql = format!("SELECT {COLUMNS} FROM share_links WHERE share_id = $1");
        let rows = self
            .query("reading a share link", &sql, &[&share_id])
            .await?;
        Ok(self.links_of(&rows)?.into_iter().next())
    }

    async fn shares(&self, task: &TaskId) -> Result<Vec<ShareLink>, ForgeError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM share_links WHERE task_id = $1
             ORDER BY created_at_ms, share_id"
        );
        let rows = self
            .query("listing share links", &sql, &[&task.as_str()])
            .await?;
        self.links_of(&rows)
    }

    async fn revoke_share(&self, share_id: &str) -> Result<Option<ShareLink>, ForgeError> {
        self.query(
            "revoking a share link",
            "UPDATE share_links SET revoked_at_ms = forge_now_ms()
             WHERE share_id = $1 AND revoked_at_ms IS NULL",
            &[&share_id],
        )
        .await?;
        self.share(share_id).await
    }
}
