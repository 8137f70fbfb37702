//! What forge remembers of a forge's events on PostgreSQL (`forge_deliveries`,
//! `forge_cursors`): the [`ForgeDeliveries`] port, each call one statement. A delivery is
//! recorded by `INSERT … ON CONFLICT DO NOTHING RETURNING`, so of two concurrent first calls
//! exactly one gets its row back.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::ForgeDeliveries;

use crate::queue::PgQueue;

#[async_trait]
impl ForgeDeliveries for PgQueue {
    async fn first_delivery(&self, source: &str, id: &str) -> Result<bool, ForgeError> {
        let rows = self
            .query(
                "recording a forge delivery",
                "INSERT INTO forge_deliveries (source, delivery_id, received_at_ms)
                 VALUES ($1, $2, forge_now_ms()) ON CONFLICT DO NOTHING RETURNING source",
                &[&source, &id],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    async fn forget_delivery(&self, source: &str, id: &str) -> Result<(), ForgeError> {
        self.query(
            "forgetting a forge delivery",
            "DELETE FROM forge_deliveries WHERE source = $1 AND delivery_id = $2",
            &[&source, &id],
        )
        .await?;
        Ok(())
    }

    async fn delivery_seen(&self, source: &str, id: &str) -> Result<bool, ForgeError> {
        let rows = self
            .query(
                "reading a forge delivery",
                "SELECT source FROM forge_deliveries WHERE source = $1 AND delivery_id = $2",
                &[&source, &id],
            )
            .await?;
        Ok(!rows.is_empty())
    }

    async fn cursor(&self, source: &str) -> Result<Option<String>, ForgeError> {
        let rows = self
            .query(
                "reading a forge cursor",
                "SELECT cursor FROM forge_cursors WHERE source = $1",
                &[&source],
            )
            .await?;
        Ok(rows.first().map(|r| r.get(0)))
    }

    async fn set_cursor(&self, source: &str, cursor: &str) -> Result<(), ForgeError> {
        self.query(
            "storing a forge cursor",
            "INSERT INTO forge_cursors (source, cursor, updated_at_ms)
             VALUES ($1, $2, forge_now_ms())
             ON CONFLICT (source) DO UPDATE SET cursor = EXCLUDED.cursor,
                updated_at_ms = EXCLUDED.updated_at_ms
             RETURNING source",
            &[&source, &cursor],
        )
        .await?;
        Ok(())
    }
}
