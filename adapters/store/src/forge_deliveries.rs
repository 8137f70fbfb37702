//! What forge remembers of a forge's events on the SQLite file (`forge_deliveries`,
//! `forge_cursors`): the [`ForgeDeliveries`] port. A delivery is recorded by one
//! `INSERT … ON CONFLICT DO NOTHING`, so of two concurrent first calls exactly one inserts.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::ForgeDeliveries;
use rusqlite::{OptionalExtension, params};

use crate::error::store_error;
use crate::store::SqliteStore;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[async_trait]
impl ForgeDeliveries for SqliteStore {
    async fn first_delivery(&self, source: &str, id: &str) -> Result<bool, ForgeError> {
        let (source, id) = (source.to_owned(), id.to_owned());
        self.write("recording a forge delivery".to_owned(), move |tx, path| {
            let inserted = tx
                .execute(
                    "INSERT INTO forge_deliveries (source, delivery_id, received_at_ms)
                     VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                    params![source, id, now_ms()],
                )
                .map_err(|e| store_error(path, "recording a forge delivery", &e))?;
            Ok(inserted == 1)
        })
        .await
    }

    async fn forget_delivery(&self, source: &str, id: &str) -> Result<(), ForgeError> {
        let (source, id) = (source.to_owned(), id.to_owned());
        self.write("forgetting a forge delivery".to_owned(), move |tx, path| {
            tx.execute(
                "DELETE FROM forge_deliveries WHERE source = ?1 AND delivery_id = ?2",
                params![source, id],
            )
            .map_err(|e| store_error(path, "forgetting a forge delivery", &e))?;
            Ok(())
        })
        .await
    }

    async fn delivery_seen(&self, source: &str, id: &str) -> Result<bool, ForgeError> {
        let (source, id) = (source.to_owned(), id.to_owned());
        self.with(move |conn, path| {
            conn.query_row(
                "SELECT 1 FROM forge_deliveries WHERE source = ?1 AND delivery_id = ?2",
                params![source, id],
                |_| Ok(()),
            )
            .optional()
            .map(|row| row.is_some())
            .map_err(|e| store_error(path, "reading a forge delivery", &e))
        })
        .await
    }

    async fn cursor(&self, source: &str) -> Result<Option<String>, ForgeError> {
        let source = source.to_owned();
        self.with(move |conn, path| {
            conn.query_row(
                "SELECT cursor FROM forge_cursors WHERE source = ?1",
                params![source],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| store_error(path, "reading a forge cursor", &e))
        })
        .await
    }

    async fn set_cursor(&self, source: &str, cursor: &str) -> Result<(), ForgeError> {
        let (source, cursor) = (source.to_owned(), cursor.to_owned());
        self.write("storing a forge cursor".to_owned(), move |tx, path| {
            tx.execute(
                "INSERT INTO forge_cursors (source, cursor, updated_at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (source) DO UPDATE SET cursor = excluded.cursor,
                    updated_at_ms = excluded.updated_at_ms",
                params![source, cursor, now_ms()],
            )
            .map_err(|e| store_error(path, "storing a forge cursor", &e))?;
            Ok(())
        })
        .await
    }
}
