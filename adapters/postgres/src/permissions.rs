//! Permission requests on PostgreSQL (`permission_requests`): the [`PermissionRequests`]
//! port, each call one statement. A decision is one conditional UPDATE (`decision IS
//! NULL`: the loser's matches no row) that writes the timeout instead when the request is
//! overdue, and sends `NOTIFY forge_events`, so a worker waiting on the request — on any
//! machine — wakes at once, and the board's live stream with it.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::ProviderId;
use forge_domain::permission::{
    PermissionDecided, PermissionDecision, PermissionId, PermissionOwner, PermissionRequest,
};
use forge_ports::{PermissionRequests, TaskQueue};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::listen::EVENTS_CHANNEL;
use crate::queue::PgQueue;

const COLUMNS: &str = "request_id, owner_kind, owner_id, provider, tool, requested_at_ms, \
    expires_at_ms, decision";

/// The longest a wait trusts notifications alone: after it the row is read again anyway.
const RECHECK_MS: u64 = 1_000;

/// How long a wait pauses when the request looks overdue here but not yet to the server.
const CLOCK_SKEW_PAUSE_MS: u64 = 100;

fn request_from(row: &Row, url: &str) -> Result<PermissionRequest, ForgeError> {
    let id: String = row.get(0);
    let bad = |what: String| ForgeError::Io {
        context: format!("task queue {url}: reading a permission request"),
        message: format!("request {id}: {what}"),
    };
    let kind: String = row.get(1);
    let owner: String = row.get(2);
    let provider: String = row.get(3);
    let decision: Option<serde_json::Value> = row.get(7);
    let ms = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(PermissionRequest {
        id: PermissionId::new(id.clone()).map_err(|e| bad(e.to_string()))?,
        provider: ProviderId::new(provider).map_err(|e| bad(e.to_string()))?,
        owner: PermissionOwner::from_parts(&kind, &owner).map_err(bad)?,
        tool: serde_json::from_value(row.get(4)).map_err(|e| bad(format!("tool: {e}")))?,
        requested_at_ms: ms(row.get(5)),
        expires_at_ms: ms(row.get(6)),
        decision: decision
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| bad(format!("decision: {e}")))?,
    })
}

fn json(decision: &PermissionDecision) -> serde_json::Value {
    serde_json::to_value(decision).unwrap_or(serde_json::Value::Null)
}

impl PgQueue {
    fn permissions_of(&self, rows: &[Row]) -> Result<Vec<PermissionRequest>, ForgeError> {
        rows.iter().map(|r| request_from(r, self.url())).collect()
    }

    /// Writes `decision` (the store's time in it) on the pending requests `filter` picks
    /// (its parameters are `$2`…, `args`; `now.ms` is the statement's one clock reading).
    async fn decide_where(
        &self,
        doing: &str,
        filter: &str,
        args: &[&(dyn ToSql + Sync)],
        decision: &PermissionDecision,
    ) -> Result<Vec<PermissionRequest>, ForgeError> {
        let sql = format!(
            "WITH now AS (SELECT forge_now_ms() AS ms)
             UPDATE permission_requests p
             SET decision = jsonb_set($1::jsonb, '{{decided_at_ms}}', to_jsonb(now.ms))
             FROM now WHERE p.decision IS NULL AND ({filter})
             RETURNING {}, pg_notify('{EVENTS_CHANNEL}', p.owner_id || ' 0')",
            prefixed("p.")
        );
        let value = json(decision);
        let params: Vec<&(dyn ToSql + Sync)> = std::iter::once(&value as &(dyn ToSql + Sync))
            .chain(args.iter().copied())
            .collect();
        let rows = self.query(doing, &sql, &params).await?;
        self.permissions_of(&rows)
    }
}

/// The columns, each with `prefix`.
fn prefixed(prefix: &str) -> String {
    COLUMNS
        .split(", ")
        .map(|c| format!("{prefix}{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[async_trait]
impl PermissionRequests for PgQueue {
    async fn ask_permission(
        &self,
        request: &PermissionRequest,
        timeout_ms: u64,
    ) -> Result<PermissionRequest, ForgeError> {
        let r = request;
        if r.decision.is_some() {
            return Err(ForgeError::InvalidRequest {
                reason: format!("permission request {} is already decided", r.id),
            });
        }
        let sql = format!(
            "WITH now AS (SELECT forge_now_ms() AS ms),
             inserted AS (
                INSERT INTO permission_requests (request_id, owner_kind, owner_id, provider,
                    tool, requested_at_ms, expires_at_ms)
                SELECT $1, $2, $3, $4, $5, now.ms, now.ms + $6 FROM now
                ON CONFLICT DO NOTHING
                RETURNING {COLUMNS})
             SELECT {COLUMNS} FROM inserted, pg_notify('{EVENTS_CHANNEL}', $3 || ' 0')"
        );
        let tool = serde_json::to_value(&r.tool)
            .map_err(|e| ForgeError::io("task queue: a permission request", e))?;
        let timeout = i64::try_from(timeout_ms).unwrap_or(i64::MAX / 2);
        let rows = self
            .query(
                "storing a permission request",
                &sql,
                &[
                    &r.id.as_str(),
                    &r.owner.kind(),
                    &r.owner.id(),
                    &r.provider.as_str(),
                    &tool,
                    &timeout,
                ],
            )
            .await?;
        self.permissions_of(&rows)?
            .into_iter()
            .next()
            .ok_or_else(|| ForgeError::InvalidRequest {
                reason: format!("a permission request with id {} exists", r.id),
            })
    }

    async fn permission(&self, id: &PermissionId) -> Result<Option<PermissionRequest>, ForgeError> {
        let sql = format!("SELECT {COLUMNS} FROM permission_requests WHERE request_id = $1");
        let rows = self
            .query("reading a permission request", &sql, &[&id.as_str()])
            .await?;
        Ok(self.permissions_of(&rows)?.into_iter().next())
    }

    async fn pending_permissions(
        &self,
        owner: Option<&PermissionOwner>,
    ) -> Result<Vec<PermissionRequest>, ForgeError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM permission_requests
             WHERE decision IS NULL AND ($1::text IS NULL OR (owner_kind = $1 AND owner_id = $2))
             ORDER BY requested_at_ms, request_id"
        );
        let kind = owner.map(PermissionOwner::kind);
        let id = owner.map(PermissionOwner::id);
        let rows = self
            .query("listing permission requests", &sql, &[&kind, &id])
            .await?;
        self.permissions_of(&rows)
    }

    async fn decide_permission(
        &self,
        id: &PermissionId,
        decision: &PermissionDecision,
    ) -> Result<Option<PermissionDecided>, ForgeError> {
        // One statement: an overdue request gets the timeout, not this decision.
        let sql = format!(
            "WITH now AS (SELECT forge_now_ms() AS ms)
             UPDATE permission_requests p
             SET decision = jsonb_set(
                CASE WHEN p.expires_at_ms <= now.ms THEN $3::jsonb ELSE $2::jsonb END,
                '{{decided_at_ms}}', to_jsonb(now.ms))
             FROM now WHERE p.request_id = $1 AND p.decision IS NULL
             RETURNING {}, p.expires_at_ms > now.ms,
                pg_notify('{EVENTS_CHANNEL}', p.owner_id || ' 0')",
            prefixed("p.")
        );
        let rows = self
            .query(
                "deciding a permission request",
                &sql,
                &[
                    &id.as_str(),
                    &json(decision),
                    &json(&PermissionDecision::timeout()),
                ],
            )
            .await?;
        if let Some(row) = rows.first() {
            let request = request_from(row, self.url())?;
            let ours: bool = row.get(8);
            return Ok(Some(if ours {
                PermissionDecided::Now(request)
            } else {
                PermissionDecided::Already(request)
            }));
        }
        Ok(self.permission(id).await?.map(PermissionDecided::Already))
    }

    async fn expire_permissions(&self) -> Result<Vec<PermissionRequest>, ForgeError> {
        self.decide_where(
            "expiring permission requests",
            "p.expires_at_ms <= now.ms",
            &[],
            &PermissionDecision::timeout(),
        )
        .await
    }

    async fn close_permissions(
        &self,
        owner: &PermissionOwner,
        decision: &PermissionDecision,
    ) -> Result<Vec<PermissionRequest>, ForgeError> {
        self.decide_where(
            "closing permission requests",
            "p.owner_kind = $2 AND p.owner_id = $3",
            &[&owner.kind(), &owner.id()],
            decision,
        )
        .await
    }

    async fn wait_for_permission(
        &self,
        id: &PermissionId,
        timeout_ms: u64,
    ) -> Result<Option<PermissionRequest>, ForgeError> {
        // The change feed (LISTEN on the queue's channels) wakes the wait when anything
        // was decided; the row is read then, and at least every [`RECHECK_MS`].
        let started = std::time::Instant::now();
        let mut seen = self.wait_for_changes(0, 0).await?;
        loop {
            let Some(request) = self.permission(id).await? else {
                return Ok(None);
            };
            let waited = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            if !request.is_pending() || waited >= timeout_ms {
                return Ok(Some(request));
            }
            let now = now_ms();
            if request.is_overdue(now) {
                // Its time is up: the wait carries the expiry out (once, whoever is first).
                let expired = self
                    .decide_where(
                        "expiring a permission request",
                        "p.request_id = $2 AND p.expires_at_ms <= now.ms",
                        &[&id.as_str()],
                        &PermissionDecision::timeout(),
                    )
                    .await?;
                if expired.is_empty() {
                    // The server's clock is behind this machine's: look again shortly.
                    seen = self.wait_for_changes(seen, CLOCK_SKEW_PAUSE_MS).await?;
                }
                continue;
            }
            let until_expiry = request.expires_at_ms.saturating_sub(now).max(1);
            let pause = RECHECK_MS.min(timeout_ms - waited).min(until_expiry);
            seen = self.wait_for_changes(seen, pause).await?;
        }
    }
}

/// This machine's clock, only to choose how long to sleep (the expiry itself is the
/// store's: [`PgQueue::decide_where`] compares with the server's clock).
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
