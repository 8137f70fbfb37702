//! The [`TaskQueue`] port on the embedded SQLite file: the queue of one machine, with the
//! same semantics as PostgreSQL's. Each call is one IMMEDIATE transaction, so claims by
//! several worker processes are serialised by the file's write lock: a task is taken once.
//! Idle workers poll (there is no NOTIFY in SQLite) every [`POLL_MS`]; the board's live
//! stream reads the file's change counter as often, and the tasks only when it moved.

use std::path::Path;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::ApprovalId;
use forge_domain::queue::{
    Finish, Heartbeat, QueueDelivery, QueueEvent, QueueState, QueueSubmission, QueuedTask,
    lost_task_end, refusal, taken_over_error,
};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use crate::error::{bad_row, store_error};
use crate::store::SqliteStore;

/// How often an idle worker looks for work on SQLite.
pub const POLL_MS: u64 = 50;

const COLUMNS: &str = "task_id, state, repo, prompt, options, attempts, max_attempts, worker, \
    lease_until_ms, cancel_requested, submitted_at_ms, started_at_ms, finished_at_ms, \
    exit_code, last_error, report";

/// A number that changes whenever the file changed: `PRAGMA data_version` moves when
/// another connection (a worker process) committed, the connection's own count of changed
/// rows when this one wrote. Never 0 (a first `seen` of 0 returns at once).
fn change_counter(conn: &Connection, path: &Path) -> Result<u64, ForgeError> {
    let version: i64 = conn
        .query_row("PRAGMA data_version", [], |r| r.get(0))
        .map_err(|e| store_error(path, "reading the change counter", &e))?;
    let version = u64::try_from(version).unwrap_or_default();
    Ok((version.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ conn.total_changes()).max(1))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn unsigned(value: Option<i64>) -> Option<u64> {
    value.map(|v| u64::try_from(v).unwrap_or(0))
}

/// A row as read; the checks that can fail come in [`task_of`].
struct RawTask {
    task_id: String,
    state: String,
    repo: String,
    prompt: String,
    options: String,
    attempts: i64,
    max_attempts: i64,
    worker: Option<String>,
    lease_until_ms: Option<i64>,
    cancel_requested: bool,
    submitted_at_ms: i64,
    started_at_ms: Option<i64>,
    finished_at_ms: Option<i64>,
    exit_code: Option<i32>,
    last_error: Option<String>,
    report: Option<String>,
}

fn raw_task(row: &Row<'_>) -> rusqlite::Result<RawTask> {
    Ok(RawTask {
        task_id: row.get(0)?,
        state: row.get(1)?,
        repo: row.get(2)?,
        prompt: row.get(3)?,
        options: row.get(4)?,
        attempts: row.get(5)?,
        max_attempts: row.get(6)?,
        worker: row.get(7)?,
        lease_until_ms: row.get(8)?,
        cancel_requested: row.get(9)?,
        submitted_at_ms: row.get(10)?,
        started_at_ms: row.get(11)?,
        finished_at_ms: row.get(12)?,
        exit_code: row.get(13)?,
        last_error: row.get(14)?,
        report: row.get(15)?,
    })
}

fn json(path: &Path, what: &str, text: &str) -> Result<serde_json::Value, ForgeError> {
    serde_json::from_str(text).map_err(|e| bad_row(path, "queue_tasks", format!("{what}: {e}")))
}

fn task_of(path: &Path, raw: RawTask) -> Result<QueuedTask, ForgeError> {
    let task_id = TaskId::new(raw.task_id.clone()).map_err(|e| {
        bad_row(
            path,
            "queue_tasks",
            format!("task id {:?}: {e}", raw.task_id),
        )
    })?;
    let state = QueueState::parse(&raw.state).ok_or_else(|| {
        bad_row(
            path,
            "queue_tasks",
            format!("unknown state {:?}", raw.state),
        )
    })?;
    Ok(QueuedTask {
        task_id,
        state,
        repo: raw.repo,
        prompt: raw.prompt,
        options: json(path, "options", &raw.options)?,
        attempts: u32::try_from(raw.attempts).unwrap_or(0),
        max_attempts: u32::try_from(raw.max_attempts).unwrap_or(0),
        worker: raw.worker,
        lease_until_ms: unsigned(raw.lease_until_ms),
        cancel_requested: raw.cancel_requested,
        submitted_at_ms: unsigned(Some(raw.submitted_at_ms)).unwrap_or(0),
        started_at_ms: unsigned(raw.started_at_ms),
        finished_at_ms: unsigned(raw.finished_at_ms),
        exit_code: raw.exit_code,
        last_error: raw.last_error,
        report: raw.report.map(|r| json(path, "report", &r)).transpose()?,
    })
}

fn read_task(conn: &Connection, path: &Path, id: &str) -> Result<Option<QueuedTask>, ForgeError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM queue_tasks WHERE task_id = ?1"),
        params![id],
        raw_task,
    )
    .optional()
    .map_err(|e| store_error(path, "reading a queued task", &e))?
    .map(|raw| task_of(path, raw))
    .transpose()
}

/// Appends the task's next event (its `seq`) in `tx`: under the write lock of the IMMEDIATE
/// transaction, the next number is the caller's.
fn insert_event(
    tx: &Transaction<'_>,
    path: &Path,
    id: &str,
    kind: &str,
    data: &serde_json::Value,
) -> Result<u64, ForgeError> {
    let seq: i64 = tx
        .query_row(
            "INSERT INTO queue_events (task_id, task_seq, at_ms, kind, data)
             VALUES (?1, (SELECT COALESCE(MAX(task_seq), 0) + 1 FROM queue_events
                          WHERE task_id = ?1), ?2, ?3, ?4)
             RETURNING task_seq",
            params![id, now_ms(), kind, data.to_string()],
            |r| r.get(0),
        )
        .map_err(|e| store_error(path, "storing an event", &e))?;
    Ok(u64::try_from(seq).unwrap_or(0))
}

/// Ends running tasks whose lease ran out for the last time (`dead`) or after a cancel.
fn end_lost(tx: &Transaction<'_>, path: &Path, now: i64) -> Result<(), ForgeError> {
    let fail = |e: rusqlite::Error| store_error(path, "ending lost tasks", &e);
    let lost: Vec<(String, i64, Option<String>, bool)> = {
        let mut stmt = tx
            .prepare_cached(
                "SELECT task_id, attempts, worker, cancel_requested FROM queue_tasks
                 WHERE state = 'running' AND lease_until_ms < ?1
                   AND (attempts >= max_attempts OR cancel_requested)",
            )
            .map_err(fail)?;
        stmt.query_map(params![now], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .map_err(fail)?
        .collect::<Result<_, _>>()
        .map_err(fail)?
    };
    for (id, attempts, worker, cancelled) in lost {
        let attempts = u32::try_from(attempts).unwrap_or(0);
        let (state, error) = lost_task_end(attempts, worker.as_deref(), cancelled);
        tx.execute(
            "UPDATE queue_tasks SET state = ?2, last_error = COALESCE(?3, last_error),
                lease_until_ms = NULL, finished_at_ms = ?4 WHERE task_id = ?1",
            params![id, state.as_str(), error, now],
        )
        .map_err(fail)?;
    }
    Ok(())
}

#[async_trait]
impl TaskQueue for SqliteStore {
    async fn submit(&self, task: &QueueSubmission) -> Result<QueuedTask, ForgeError> {
        let task = task.clone();
        self.write("submitting a task".to_owned(), move |tx, path| {
            let fail = |e: rusqlite::Error| store_error(path, "submitting a task", &e);
            let id = task.task_id.as_str();
            if read_task(tx, path, id)?.is_some() {
                return Err(refusal::already_queued(id));
            }
            tx.execute(
                "INSERT INTO queue_tasks (task_id, position, state, repo, prompt, options,
                    max_attempts, submitted_at_ms)
                 VALUES (?1, (SELECT COALESCE(MAX(position), 0) + 1 FROM queue_tasks),
                    'queued', ?2, ?3, ?4, ?5, ?6)",
                params![
                    id,
                    task.repo,
                    task.prompt,
                    task.options.to_string(),
                    task.max_attempts.max(1),
                    now_ms()
                ],
            )
            .map_err(fail)?;
            read_task(tx, path, id)?.ok_or_else(|| {
                bad_row(
                    path,
                    "queue_tasks",
                    format!("task {id} vanished after insert"),
                )
            })
        })
        .await
    }

    async fn claim(&self, worker: &str, lease_ms: u64) -> Result<Option<QueuedTask>, ForgeError> {
        let worker = worker.to_owned();
        self.write("claiming a task".to_owned(), move |tx, path| {
            let fail = |e: rusqlite::Error| store_error(path, "claiming a task", &e);
            let now = now_ms();
            end_lost(tx, path, now)?;
            let picked: Option<(String, String, Option<String>)> = tx
                .query_row(
                    "SELECT task_id, state, worker FROM queue_tasks
                     WHERE state = 'queued'
                        OR (state = 'running' AND lease_until_ms < ?1
                            AND attempts < max_attempts AND NOT cancel_requested)
                     ORDER BY position LIMIT 1",
                    params![now],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()
                .map_err(fail)?;
            let Some((id, state, previous)) = picked else {
                return Ok(None);
            };
            let taken_over = (state == "running").then(|| taken_over_error(previous.as_deref()));
            tx.execute(
                "UPDATE queue_tasks SET state = 'running', worker = ?2, attempts = attempts + 1,
                    lease_until_ms = ?3, started_at_ms = ?4,
                    last_error = COALESCE(?5, last_error)
                 WHERE task_id = ?1",
                params![
                    id,
                    worker,
                    now.saturating_add(int(lease_ms)),
                    now,
                    taken_over
                ],
            )
            .map_err(fail)?;
            let claimed = read_task(tx, path, &id)?;
            if let Some(task) = &claimed {
                // The attempt's first event, in the claim's transaction.
                let data = serde_json::json!({"worker": worker, "attempt": task.attempts});
                insert_event(tx, path, &id, "claimed", &data)?;
            }
            Ok(claimed)
        })
        .await
    }

    async fn heartbeat(
        &self,
        id: &TaskId,
        worker: &str,
        lease_ms: u64,
    ) -> Result<Heartbeat, ForgeError> {
        let (id, worker) = (id.as_str().to_owned(), worker.to_owned());
        self.write("renewing a lease".to_owned(), move |tx, path| {
            let fail = |e: rusqlite::Error| store_error(path, "renewing a lease", &e);
            let cancel: Option<bool> = tx
                .query_row(
                    "UPDATE queue_tasks SET lease_until_ms = ?3
                     WHERE task_id = ?1 AND worker = ?2 AND state = 'running'
                     RETURNING cancel_requested",
                    params![id, worker, now_ms().saturating_add(int(lease_ms))],
                    |r| r.get(0),
                )
                .optional()
                .map_err(fail)?;
            Ok(Heartbeat::of_renewal(cancel))
        })
        .await
    }

    async fn finish(&self, id: &TaskId, worker: &str, finish: &Finish) -> Result<bool, ForgeError> {
        finish.check()?;
        let (id, worker, finish) = (id.as_str().to_owned(), worker.to_owned(), finish.clone());
        self.write("recording a result".to_owned(), move |tx, path| {
            let changed = tx
                .execute(
                    "UPDATE queue_tasks SET state = ?3, exit_code = ?4,
                        last_error = COALESCE(?5, last_error), report = ?6,
                        lease_until_ms = NULL, finished_at_ms = ?7
                     WHERE task_id = ?1 AND worker = ?2 AND state = 'running'",
                    params![
                        id,
                        worker,
                        finish.state.as_str(),
                        finish.exit_code,
                        finish.error,
                        finish.report.as_ref().map(ToString::to_string),
                        now_ms()
                    ],
                )
                .map_err(|e| store_error(path, "recording a result", &e))?;
            if changed == 1 {
                // The `finished` event, stored exactly when the result is.
                let data =
                    serde_json::json!({"state": finish.state, "exit_code": finish.exit_code});
                insert_event(tx, path, &id, "finished", &data)?;
            }
            Ok(changed == 1)
        })
        .await
    }

    async fn release(&self, id: &TaskId, worker: &str) -> Result<bool, ForgeError> {
        let (id, worker) = (id.as_str().to_owned(), worker.to_owned());
        self.write("handing a task back".to_owned(), move |tx, path| {
            let changed = tx
                .execute(
                    "UPDATE queue_tasks SET state = 'queued', attempts = MAX(attempts - 1, 0),
                        lease_until_ms = NULL
                     WHERE task_id = ?1 AND worker = ?2 AND state = 'running'",
                    params![id, worker],
                )
                .map_err(|e| store_error(path, "handing a task back", &e))?;
            Ok(changed == 1)
        })
        .await
    }

    async fn cancel(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError> {
        let id = id.as_str().to_owned();
        self.write("cancelling a task".to_owned(), move |tx, path| {
            tx.execute(
                "UPDATE queue_tasks SET
                    cancel_requested = cancel_requested OR state = 'running',
                    finished_at_ms = CASE WHEN state = 'queued' THEN ?2 ELSE finished_at_ms END,
                    state = CASE WHEN state = 'queued' THEN 'cancelled' ELSE state END
                 WHERE task_id = ?1",
                params![id, now_ms()],
            )
            .map_err(|e| store_error(path, "cancelling a task", &e))?;
            read_task(tx, path, &id)
        })
        .await
    }

    async fn task(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError> {
        let id = id.as_str().to_owned();
        self.with(move |conn, path| read_task(conn, path, &id))
            .await
    }

    async fn tasks(&self, limit: u32) -> Result<Vec<QueuedTask>, ForgeError> {
        self.with(move |conn, path| {
            let fail = |e: rusqlite::Error| store_error(path, "listing queued tasks", &e);
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM queue_tasks ORDER BY position DESC LIMIT ?1"
                ))
                .map_err(fail)?;
            let raws = stmt
                .query_map(params![limit], raw_task)
                .map_err(fail)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(fail)?;
            raws.into_iter().map(|raw| task_of(path, raw)).collect()
        })
        .await
    }

    async fn append_event(
        &self,
        id: &TaskId,
        kind: &str,
        data: &serde_json::Value,
    ) -> Result<u64, ForgeError> {
        let (id, kind, data) = (id.as_str().to_owned(), kind.to_owned(), data.clone());
        self.write("storing an event".to_owned(), move |tx, path| {
            if read_task(tx, path, &id)?.is_none() {
                return Err(refusal::no_task_for_event(&id));
            }
            insert_event(tx, path, &id, &kind, &data)
        })
        .await
    }

    async fn append_events(
        &self,
        id: &TaskId,
        events: &[(String, serde_json::Value)],
    ) -> Result<u64, ForgeError> {
        if events.is_empty() {
            return Ok(0);
        }
        let (id, events) = (id.as_str().to_owned(), events.to_vec());
        self.write("storing events".to_owned(), move |tx, path| {
            if read_task(tx, path, &id)?.is_none() {
                return Err(refusal::no_task_for_event(&id));
            }
            let mut last = 0;
            for (kind, data) in &events {
                last = insert_event(tx, path, &id, kind, data)?;
            }
            Ok(last)
        })
        .await
    }

    async fn events(&self, id: &TaskId, after: u64) -> Result<Vec<QueueEvent>, ForgeError> {
        let (task_id, id) = (id.clone(), id.as_str().to_owned());
        self.with(move |conn, path| {
            let fail = |e: rusqlite::Error| store_error(path, "reading events", &e);
            let mut stmt = conn
                .prepare_cached(
                    "SELECT task_seq, at_ms, kind, data FROM queue_events
                     WHERE task_id = ?1 AND task_seq > ?2 ORDER BY task_seq",
                )
                .map_err(fail)?;
            let rows: Vec<(i64, i64, String, String)> = stmt
                .query_map(params![id, int(after)], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .map_err(fail)?
                .collect::<Result<_, _>>()
                .map_err(fail)?;
            rows.into_iter()
                .map(|(seq, at, kind, data)| {
                    Ok(QueueEvent {
                        seq: unsigned(Some(seq)).unwrap_or(0),
                        task_id: task_id.clone(),
                        at_ms: unsigned(Some(at)).unwrap_or(0),
                        kind,
                        data: json(path, "event data", &data)?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn record_delivery(&self, delivery: &QueueDelivery) -> Result<QueueDelivery, ForgeError> {
        let delivery = delivery.clone();
        self.write("recording a delivery".to_owned(), move |tx, path| {
            let fail = |e: rusqlite::Error| store_error(path, "recording a delivery", &e);
            let id = delivery.task_id.as_str();
            require_task(tx, id, fail)?;
            tx.execute(
                "INSERT INTO queue_deliveries (task_id, branch, commit_id, worker, at_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (task_id) DO NOTHING",
                params![
                    id,
                    delivery.branch,
                    delivery.commit,
                    delivery.worker,
                    now_ms()
                ],
            )
            .map_err(fail)?;
            let (branch, commit, worker, at_ms): (String, String, String, i64) = tx
                .query_row(
                    "SELECT branch, commit_id, worker, at_ms FROM queue_deliveries
                     WHERE task_id = ?1",
                    params![id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .map_err(fail)?;
            Ok(QueueDelivery {
                task_id: delivery.task_id.clone(),
                branch,
                commit,
                worker,
                at_ms: unsigned(Some(at_ms)).unwrap_or(0),
            })
        })
        .await
    }

    async fn wait_for_events(&self, _id: &TaskId, timeout_ms: u64) -> Result<(), ForgeError> {
        // No NOTIFY in SQLite: a reader looks again after a short pause.
        tokio::time::sleep(std::time::Duration::from_millis(timeout_ms.min(POLL_MS))).await;
        Ok(())
    }

    async fn wait_for_changes(&self, seen: u64, timeout_ms: u64) -> Result<u64, ForgeError> {
        // No NOTIFY in SQLite, and the writers are other processes (workers): the file's
        // change counter is read every [`POLL_MS`] — a header read, no table is scanned —
        // and the caller reads the tasks only when it moved.
        let started = std::time::Instant::now();
        loop {
            let now = self.with(|conn, path| change_counter(conn, path)).await?;
            let waited = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            if now != seen || waited >= timeout_ms {
                return Ok(now);
            }
            let pause = POLL_MS.min(timeout_ms - waited);
            tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        }
    }

    async fn wait_for_work(&self, timeout_ms: u64) -> Result<(), ForgeError> {
        tokio::time::sleep(std::time::Duration::from_millis(timeout_ms.min(POLL_MS))).await;
        Ok(())
    }

    async fn record_approval(&self, approval: &QueueApproval) -> Result<QueueApproval, ForgeError> {
        self.record_queue_approval(approval, now_ms()).await
    }

    async fn approvals(&self, all: bool) -> Result<Vec<QueueApproval>, ForgeError> {
        self.queue_approvals(all).await
    }

    async fn approval(&self, id: &ApprovalId) -> Result<Option<QueueApproval>, ForgeError> {
        self.queue_approval(id).await
    }

    async fn decide_approval(
        &self,
        id: &ApprovalId,
        decision: &QueueDecision,
    ) -> Result<Option<Decided>, ForgeError> {
        // The holding worker's short poll sees it (no NOTIFY in SQLite).
        self.decide_queue_approval(id, decision, now_ms()).await
    }

    async fn decided_approvals(&self, holder: &str) -> Result<Vec<QueueApproval>, ForgeError> {
        self.decided_queue_approvals(holder).await
    }

    async fn record_approval_outcome(
        &self,
        id: &ApprovalId,
        outcome: &ApprovalOutcome,
    ) -> Result<bool, ForgeError> {
        self.record_queue_approval_outcome(id, outcome).await
    }
}

/// `InvalidRequest` when the queue holds no task `id` (a record for it would name
/// nothing); `fail` words a database error.
pub(crate) fn require_task(
    tx: &rusqlite::Transaction<'_>,
    id: &str,
    fail: impl Fn(rusqlite::Error) -> ForgeError,
) -> Result<(), ForgeError> {
    let known: Option<i64> = tx
        .query_row(
            "SELECT 1 FROM queue_tasks WHERE task_id = ?1",
            params![id],
            |r| r.get(0),
        )
        .optional()
        .map_err(fail)?;
    match known {
        Some(_) => Ok(()),
        None => Err(refusal::no_such_task(id)),
    }
}
