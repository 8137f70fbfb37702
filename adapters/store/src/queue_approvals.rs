//! The queue's approvals on the SQLite file (`queue_approvals`): the [`QueueApprovals`]
//! port on held changes, each one IMMEDIATE transaction. A decision is one conditional
//! UPDATE, so of two deciders the second changes nothing and is told so.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::{ApprovalId, ApprovalState};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_ports::QueueApprovals;
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::error::{bad_row, store_error};
use crate::queue::{now_ms, require_task};
use crate::store::SqliteStore;

const COLUMNS: &str = "approval_id, task_id, holder, risk_score, reasons, files, summary, push, \
    state, requested_at_ms, decided_by, reason, decided_at_ms, outcome";

const TABLE: &str = "queue_approvals";

/// A row as read; the checks that can fail come in [`approval_of`].
struct Raw {
    approval_id: String,
    task_id: String,
    holder: String,
    risk_score: i64,
    reasons: String,
    files: String,
    summary: Option<String>,
    push: bool,
    state: String,
    requested_at_ms: i64,
    decided_by: Option<String>,
    reason: Option<String>,
    decided_at_ms: Option<i64>,
    outcome: Option<String>,
}

fn raw(row: &Row<'_>) -> rusqlite::Result<Raw> {
    Ok(Raw {
        approval_id: row.get(0)?,
        task_id: row.get(1)?,
        holder: row.get(2)?,
        risk_score: row.get(3)?,
        reasons: row.get(4)?,
        files: row.get(5)?,
        summary: row.get(6)?,
        push: row.get(7)?,
        state: row.get(8)?,
        requested_at_ms: row.get(9)?,
        decided_by: row.get(10)?,
        reason: row.get(11)?,
        decided_at_ms: row.get(12)?,
        outcome: row.get(13)?,
    })
}

fn approval_of(path: &Path, raw: Raw) -> Result<QueueApproval, ForgeError> {
    let bad = |what: String| bad_row(path, TABLE, what);
    let json = |what: &str, text: &str| {
        serde_json::from_str(text).map_err(|e| bad(format!("{what}: {e}")))
    };
    Ok(QueueApproval {
        approval_id: ApprovalId::new(raw.approval_id.clone())
            .map_err(|e| bad(format!("approval id {:?}: {e}", raw.approval_id)))?,
        task_id: forge_domain::task::TaskId::new(raw.task_id.clone())
            .map_err(|e| bad(format!("task id {:?}: {e}", raw.task_id)))?,
        worker: raw.holder,
        risk_score: u8::try_from(raw.risk_score).unwrap_or(u8::MAX),
        reasons: json("reasons", &raw.reasons)?,
        files: json("files", &raw.files)?,
        summary: raw.summary,
        push: raw.push,
        state: ApprovalState::parse(&raw.state)
            .ok_or_else(|| bad(format!("unknown state {:?}", raw.state)))?,
        requested_at_ms: u64::try_from(raw.requested_at_ms).unwrap_or(0),
        decided_by: raw.decided_by,
        reason: raw.reason,
        decided_at_ms: raw.decided_at_ms.map(|v| u64::try_from(v).unwrap_or(0)),
        outcome: raw
            .outcome
            .map(|o| serde_json::from_str::<ApprovalOutcome>(&o))
            .transpose()
            .map_err(|e| bad(format!("outcome: {e}")))?,
    })
}

fn read(conn: &Connection, path: &Path, id: &str) -> Result<Option<QueueApproval>, ForgeError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM {TABLE} WHERE approval_id = ?1"),
        params![id],
        raw,
    )
    .optional()
    .map_err(|e| store_error(path, "reading an approval", &e))?
    .map(|r| approval_of(path, r))
    .transpose()
}

fn read_where(
    conn: &Connection,
    path: &Path,
    condition: &str,
    arg: &str,
) -> Result<Vec<QueueApproval>, ForgeError> {
    let fail = |e: rusqlite::Error| store_error(path, "listing approvals", &e);
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM {TABLE} WHERE {condition} ORDER BY requested_at_ms, rowid"
        ))
        .map_err(fail)?;
    let raws = stmt
        .query_map(params![arg], raw)
        .map_err(fail)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    raws.into_iter().map(|r| approval_of(path, r)).collect()
}

#[async_trait]
impl QueueApprovals for SqliteStore {
    async fn record(&self, approval: &QueueApproval) -> Result<QueueApproval, ForgeError> {
        let (a, now) = (approval.clone(), now_ms());
        self.write("recording an approval".to_owned(), move |tx, path| {
            let fail = |e: rusqlite::Error| store_error(path, "recording an approval", &e);
            let id = a.task_id.as_str();
            require_task(tx, id, fail)?;
            let (reasons, files) = (
                serde_json::json!(a.reasons).to_string(),
                serde_json::json!(a.files).to_string(),
            );
            let values = params![
                a.approval_id.as_str(),
                id,
                a.worker,
                a.risk_score,
                reasons,
                files,
                a.summary,
                a.push,
                now
            ];
            // A pending record of the task is replaced (a re-run holds the current change);
            // a decided one stays (the INSERT then hits the unique key).
            tx.execute(
                &format!(
                    "UPDATE {TABLE} SET approval_id = ?1, holder = ?3, risk_score = ?4,
                        reasons = ?5, files = ?6, summary = ?7, push = ?8
                     WHERE task_id = ?2 AND state = 'pending'"
                ),
                // All but the time: the approval was asked for when first held.
                &values[..8],
            )
            .map_err(fail)?;
            tx.execute(
                &format!(
                    "INSERT INTO {TABLE} (approval_id, task_id, holder, risk_score, reasons,
                        files, summary, push, state, requested_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9)
                     ON CONFLICT DO NOTHING"
                ),
                values,
            )
            .map_err(fail)?;
            let standing = read_where(tx, path, "task_id = ?1", id)?;
            standing
                .into_iter()
                .next()
                .ok_or_else(|| bad_row(path, TABLE, format!("the approval of task {id} vanished")))
        })
        .await
    }

    async fn list(&self, all: bool) -> Result<Vec<QueueApproval>, ForgeError> {
        self.with(move |conn, path| {
            let everything = if all { "all" } else { "pending" };
            read_where(conn, path, "(?1 = 'all' OR state = 'pending')", everything)
        })
        .await
    }

    async fn get(&self, id: &ApprovalId) -> Result<Option<QueueApproval>, ForgeError> {
        let id = id.as_str().to_owned();
        self.with(move |conn, path| read(conn, path, &id)).await
    }

    async fn decide(
        &self,
        id: &ApprovalId,
        decision: &QueueDecision,
    ) -> Result<Option<Decided>, ForgeError> {
        // The holding worker's short poll sees it (no NOTIFY in SQLite).
        let (id, d, now) = (id.as_str().to_owned(), decision.clone(), now_ms());
        self.write("deciding an approval".to_owned(), move |tx, path| {
            let changed = tx
                .execute(
                    &format!(
                        "UPDATE {TABLE} SET state = ?2, decided_by = ?3, reason = ?4,
                            decided_at_ms = ?5, push = push OR ?6
                         WHERE approval_id = ?1 AND state = 'pending'"
                    ),
                    params![id, d.decision.state().as_str(), d.by, d.reason, now, d.push],
                )
                .map_err(|e| store_error(path, "deciding an approval", &e))?;
            Ok(read(tx, path, &id)?.map(|a| {
                if changed == 1 {
                    Decided::Now(a)
                } else {
                    Decided::Already(a)
                }
            }))
        })
        .await
    }

    async fn decided(&self, holder: &str) -> Result<Vec<QueueApproval>, ForgeError> {
        let holder = holder.to_owned();
        self.with(move |conn, path| {
            read_where(
                conn,
                path,
                "holder = ?1 AND state != 'pending' AND outcome IS NULL",
                &holder,
            )
        })
        .await
    }

    async fn record_outcome(
        &self,
        id: &ApprovalId,
        outcome: &ApprovalOutcome,
    ) -> Result<bool, ForgeError> {
        let (id, outcome) = (
            id.as_str().to_owned(),
            serde_json::json!(outcome).to_string(),
        );
        self.write(
            "recording an approval's outcome".to_owned(),
            move |tx, path| {
                let changed = tx
                    .execute(
                        &format!(
                            "UPDATE {TABLE} SET outcome = ?2
                         WHERE approval_id = ?1 AND state != 'pending' AND outcome IS NULL"
                        ),
                        params![id, outcome],
                    )
                    .map_err(|e| store_error(path, "recording an approval's outcome", &e))?;
                Ok(changed == 1)
            },
        )
        .await
    }
}
