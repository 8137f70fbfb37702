//! Permission requests on the SQLite file (`permission_requests`): the
//! [`PermissionRequests`] port, each write one IMMEDIATE transaction. A decision is a
//! conditional UPDATE (`decision IS NULL`), so the first one stands; an overdue request is
//! denied by timeout in the same transaction before any other decision is tried.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::ProviderId;
use forge_domain::permission::{
    PermissionDecided, PermissionDecision, PermissionId, PermissionOwner, PermissionRequest,
};
use forge_ports::PermissionRequests;
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{bad_row, store_error};
use crate::queue::POLL_MS;
use crate::store::SqliteStore;

const COLUMNS: &str = "request_id, owner_kind, owner_id, provider, tool, requested_at_ms, \
    expires_at_ms, decision";
const TABLE: &str = "permission_requests";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn unsigned(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0)
}

type Raw = (
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    Option<String>,
);

fn request_of(path: &Path, raw: Raw) -> Result<PermissionRequest, ForgeError> {
    let (id, owner_kind, owner_id, provider, tool, requested, expires, decision) = raw;
    let bad = |what: String| bad_row(path, TABLE, format!("request {id}: {what}"));
    Ok(PermissionRequest {
        id: PermissionId::new(id.clone()).map_err(|e| bad(e.to_string()))?,
        provider: ProviderId::new(provider).map_err(|e| bad(e.to_string()))?,
        owner: PermissionOwner::from_parts(&owner_kind, &owner_id).map_err(bad)?,
        tool: serde_json::from_str(&tool).map_err(|e| bad(format!("tool: {e}")))?,
        requested_at_ms: u64::try_from(requested).unwrap_or(0),
        expires_at_ms: u64::try_from(expires).unwrap_or(0),
        decision: decision
            .map(|d| serde_json::from_str(&d))
            .transpose()
            .map_err(|e| bad(format!("decision: {e}")))?,
    })
}

fn read(conn: &Connection, path: &Path, id: &str) -> Result<Option<PermissionRequest>, ForgeError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM {TABLE} WHERE request_id = ?1"),
        params![id],
        |row| Raw::try_from(row),
    )
    .optional()
    .map_err(|e| store_error(path, "reading a permission request", &e))?
    .map(|r| request_of(path, r))
    .transpose()
}

fn read_many(
    conn: &Connection,
    path: &Path,
    filter: &str,
    args: &[&dyn rusqlite::ToSql],
) -> Result<Vec<PermissionRequest>, ForgeError> {
    let fail = |e: rusqlite::Error| store_error(path, "listing permission requests", &e);
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM {TABLE} WHERE {filter} ORDER BY requested_at_ms, rowid"
        ))
        .map_err(fail)?;
    let raws = stmt
        .query_map(args, |row| Raw::try_from(row))
        .map_err(fail)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    raws.into_iter().map(|r| request_of(path, r)).collect()
}

/// The decision as stored: its time the store's.
fn stamped(decision: &PermissionDecision, at: i64) -> Result<String, ForgeError> {
    let mut decision = decision.clone();
    decision.decided_at_ms = u64::try_from(at).unwrap_or(0);
    serde_json::to_string(&decision).map_err(|e| ForgeError::io("task store: a decision", e))
}

/// Writes `decision` on every pending request `filter` selects; returns them as decided.
fn decide_where(
    conn: &Connection,
    path: &Path,
    filter: &str,
    args: &[&dyn rusqlite::ToSql],
    decision: &PermissionDecision,
) -> Result<Vec<PermissionRequest>, ForgeError> {
    let now = now_ms();
    let pending = read_many(
        conn,
        path,
        &format!("decision IS NULL AND ({filter})"),
        args,
    )?;
    let text = stamped(decision, now)?;
    let mut decided = Vec::with_capacity(pending.len());
    for request in pending {
        conn.execute(
            &format!("UPDATE {TABLE} SET decision = ?2 WHERE request_id = ?1 AND decision IS NULL"),
            params![request.id.as_str(), text],
        )
        .map_err(|e| store_error(path, "deciding a permission request", &e))?;
        if let Some(now) = read(conn, path, request.id.as_str())? {
            decided.push(now);
        }
    }
    Ok(decided)
}

/// Denies the request by timeout when it is pending and overdue.
fn settle(conn: &Connection, path: &Path, id: &str) -> Result<(), ForgeError> {
    decide_where(
        conn,
        path,
        "request_id = ?1 AND expires_at_ms <= ?2",
        &[&id, &now_ms()],
        &PermissionDecision::timeout(),
    )
    .map(drop)
}

#[async_trait]
impl PermissionRequests for SqliteStore {
    async fn ask_permission(
        &self,
        request: &PermissionRequest,
        timeout_ms: u64,
    ) -> Result<PermissionRequest, ForgeError> {
        if request.decision.is_some() {
            return Err(ForgeError::InvalidRequest {
                reason: format!("permission request {} is already decided", request.id),
            });
        }
        let r = request.clone();
        let tool = serde_json::to_string(&r.tool)
            .map_err(|e| ForgeError::io("task store: a permission request", e))?;
        self.write(
            "storing a permission request".to_owned(),
            move |tx, path| {
                let now = now_ms();
                let expires = now.saturating_add(i64::try_from(timeout_ms).unwrap_or(i64::MAX));
                let inserted = tx
                    .execute(
                        &format!(
                            "INSERT INTO {TABLE} (request_id, owner_kind, owner_id, provider, tool,
                            requested_at_ms, expires_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                         ON CONFLICT DO NOTHING"
                        ),
                        params![
                            r.id.as_str(),
                            r.owner.kind(),
                            r.owner.id(),
                            r.provider.as_str(),
                            tool,
                            now,
                            expires
                        ],
                    )
                    .map_err(|e| store_error(path, "storing a permission request", &e))?;
                if inserted == 0 {
                    return Err(ForgeError::InvalidRequest {
                        reason: format!("a permission request with id {} exists", r.id),
                    });
                }
                read(tx, path, r.id.as_str())?
                    .ok_or_else(|| bad_row(path, TABLE, format!("request {} vanished", r.id)))
            },
        )
        .await
    }

    async fn permission(&self, id: &PermissionId) -> Result<Option<PermissionRequest>, ForgeError> {
        let id = id.to_string();
        self.with(move |conn, path| read(conn, path, &id)).await
    }

    async fn pending_permissions(
        &self,
        owner: Option<&PermissionOwner>,
    ) -> Result<Vec<PermissionRequest>, ForgeError> {
        let owner = owner.map(|o| (o.kind().to_owned(), o.id().to_owned()));
        self.with(move |conn, path| match &owner {
            None => read_many(conn, path, "decision IS NULL", &[]),
            Some((kind, id)) => read_many(
                conn,
                path,
                "decision IS NULL AND owner_kind = ?1 AND owner_id = ?2",
                &[kind, id],
            ),
        })
        .await
    }

    async fn decide_permission(
        &self,
        id: &PermissionId,
        decision: &PermissionDecision,
    ) -> Result<Option<PermissionDecided>, ForgeError> {
        let id = id.to_string();
        let decision = decision.clone();
        self.write(
            "deciding a permission request".to_owned(),
            move |tx, path| {
                settle(tx, path, &id)?;
                let decided = decide_where(tx, path, "request_id = ?1", &[&id], &decision)?;
                Ok(match decided.into_iter().next() {
                    Some(now) => Some(PermissionDecided::Now(now)),
                    None => read(tx, path, &id)?.map(PermissionDecided::Already),
                })
            },
        )
        .await
    }

    async fn expire_permissions(&self) -> Result<Vec<PermissionRequest>, ForgeError> {
        self.write("expiring permission requests".to_owned(), |tx, path| {
            decide_where(
                tx,
                path,
                "expires_at_ms <= ?1",
                &[&now_ms()],
                &PermissionDecision::timeout(),
            )
        })
        .await
    }

    async fn close_permissions(
        &self,
        owner: &PermissionOwner,
        decision: &PermissionDecision,
    ) -> Result<Vec<PermissionRequest>, ForgeError> {
        let (kind, id) = (owner.kind().to_owned(), owner.id().to_owned());
        let decision = decision.clone();
        self.write("closing permission requests".to_owned(), move |tx, path| {
            decide_where(
                tx,
                path,
                "owner_kind = ?1 AND owner_id = ?2",
                &[&kind, &id],
                &decision,
            )
        })
        .await
    }

    async fn wait_for_permission(
        &self,
        id: &PermissionId,
        timeout_ms: u64,
    ) -> Result<Option<PermissionRequest>, ForgeError> {
        // No NOTIFY in SQLite: the row is read every [`POLL_MS`], well within the second a
        // decision from another process may take to arrive.
        let started = std::time::Instant::now();
        loop {
            let key = id.to_string();
            let mut now = self.with(move |conn, path| read(conn, path, &key)).await?;
            if now
                .as_ref()
                .is_some_and(|r| r.is_overdue(unsigned(now_ms())))
            {
                // Its time is up: the wait carries the expiry out (once, whoever is first).
                let key = id.to_string();
                now = self
                    .write(
                        "expiring a permission request".to_owned(),
                        move |tx, path| {
                            settle(tx, path, &key)?;
                            read(tx, path, &key)
                        },
                    )
                    .await?;
            }
            let waited = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            match now {
                Some(request) if request.is_pending() && waited < timeout_ms => {
                    let pause = POLL_MS.min(timeout_ms - waited);
                    tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                }
                other => return Ok(other),
            }
        }
    }
}
