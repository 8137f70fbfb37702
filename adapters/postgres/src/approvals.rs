//! The queue's approvals on PostgreSQL (`queue_approvals`): the [`TaskQueue`] methods on
//! held changes, each one statement. A decision is one conditional UPDATE (the loser's
//! changes nothing) that also sends `NOTIFY forge_queue`, so an idle holding worker wakes
//! at once to carry it out.
//!
//! [`TaskQueue`]: forge_ports::TaskQueue

use forge_domain::ForgeError;
use forge_domain::delivery::{ApprovalId, ApprovalState};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_domain::task::TaskId;
use tokio_postgres::Row;

use crate::listen::{EVENTS_CHANNEL, WORK_CHANNEL};
use crate::queue::PgQueue;

const COLUMNS: &str = "approval_id, task_id, holder, risk_score, reasons, files, summary, push, \
    state, requested_at_ms, decided_by, reason, decided_at_ms, outcome";

fn corrupt(url: &str, what: String) -> ForgeError {
    ForgeError::Io {
        context: format!("task queue {url}: reading an approval"),
        message: what,
    }
}

fn approval_from(row: &Row, url: &str) -> Result<QueueApproval, ForgeError> {
    let bad = |what: String| corrupt(url, what);
    let id: String = row.get(0);
    let task: String = row.get(1);
    let state: String = row.get(8);
    let texts = |i: usize| {
        serde_json::from_value::<Vec<String>>(row.get(i))
            .map_err(|e| bad(format!("approval {id}: {e}")))
    };
    let outcome: Option<serde_json::Value> = row.get(13);
    let ms = |v: Option<i64>| v.map(|v| u64::try_from(v).unwrap_or(0));
    let risk: i32 = row.get(3);
    Ok(QueueApproval {
        approval_id: ApprovalId::new(id.clone())
            .map_err(|e| bad(format!("approval id {id:?}: {e}")))?,
        task_id: TaskId::new(task.clone()).map_err(|e| bad(format!("task id {task:?}: {e}")))?,
        worker: row.get(2),
        risk_score: u8::try_from(risk).unwrap_or(u8::MAX),
        reasons: texts(4)?,
        files: texts(5)?,
        summary: row.get(6),
        push: row.get(7),
        state: ApprovalState::parse(&state)
            .ok_or_else(|| bad(format!("approval {id}: unknown state {state:?}")))?,
        requested_at_ms: ms(Some(row.get(9))).unwrap_or(0),
        decided_by: row.get(10),
        reason: row.get(11),
        decided_at_ms: ms(row.get(12)),
        outcome: outcome
            .map(serde_json::from_value::<ApprovalOutcome>)
            .transpose()
            .map_err(|e| bad(format!("approval {id}: outcome: {e}")))?,
    })
}

impl PgQueue {
    fn approvals_of(&self, rows: &[Row]) -> Result<Vec<QueueApproval>, ForgeError> {
        rows.iter().map(|r| approval_from(r, self.url())).collect()
    }

    pub(crate) async fn record_queue_approval(
        &self,
        a: &QueueApproval,
    ) -> Result<QueueApproval, ForgeError> {
        let doing = "recording an approval";
        let id = a.task_id.as_str();
        // A pending record of the task is replaced (a re-run holds the current change);
        // else the INSERT names the task in its SELECT: an approval of no task inserts
        // nothing (told apart below), and a decided one hits the unique key.
        // Both branches notify `forge_events`: the board's card shows the approval.
        let sql = format!(
            "WITH replaced AS (
                UPDATE queue_approvals SET approval_id = $1, holder = $3, risk_score = $4,
                    reasons = $5, files = $6, summary = $7, push = $8
                WHERE task_id = $2 AND state = 'pending'
                RETURNING pg_notify('{EVENTS_CHANNEL}', task_id || ' 0'))
             INSERT INTO queue_approvals (approval_id, task_id, holder, risk_score, reasons,
                files, summary, push, state, requested_at_ms)
             SELECT $1, task_id, $3, $4, $5, $6, $7, $8, 'pending', forge_now_ms()
             FROM queue_tasks WHERE task_id = $2 AND NOT EXISTS (SELECT 1 FROM replaced)
             ON CONFLICT DO NOTHING
             RETURNING pg_notify('{EVENTS_CHANNEL}', task_id || ' 0')"
        );
        self.query(
            doing,
            &sql,
            &[
                &a.approval_id.as_str(),
                &id,
                &a.worker,
                &i32::from(a.risk_score),
                &serde_json::json!(a.reasons),
                &serde_json::json!(a.files),
                &a.summary,
                &a.push,
            ],
        )
        .await?;
        let sql = format!("SELECT {COLUMNS} FROM queue_approvals WHERE task_id = $1");
        let rows = self.query(doing, &sql, &[&id]).await?;
        self.approvals_of(&rows)?
            .into_iter()
            .next()
            .ok_or_else(|| forge_domain::queue::refusal::no_such_task(id))
    }

    pub(crate) async fn queue_approvals(
        &self,
        all: bool,
    ) -> Result<Vec<QueueApproval>, ForgeError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM queue_approvals WHERE $1 OR state = 'pending'
             ORDER BY requested_at_ms, approval_id"
        );
        let rows = self.query("listing approvals", &sql, &[&all]).await?;
        self.approvals_of(&rows)
    }

    pub(crate) async fn queue_approval(
        &self,
        id: &ApprovalId,
    ) -> Result<Option<QueueApproval>, ForgeError> {
        let sql = format!("SELECT {COLUMNS} FROM queue_approvals WHERE approval_id = $1");
        let rows = self
            .query("reading an approval", &sql, &[&id.as_str()])
            .await?;
        Ok(self.approvals_of(&rows)?.into_iter().next())
    }

    pub(crate) async fn decide_queue_approval(
        &self,
        id: &ApprovalId,
        d: &QueueDecision,
    ) -> Result<Option<Decided>, ForgeError> {
        let doing = "deciding an approval";
        let sql = format!(
            "WITH decided AS (
                UPDATE queue_approvals SET state = $2, decided_by = $3, reason = $4,
                    decided_at_ms = forge_now_ms(), push = push OR $5
                WHERE approval_id = $1 AND state = 'pending'
                RETURNING approval_id)
             SELECT pg_notify('{WORK_CHANNEL}', approval_id) FROM decided"
        );
        let decided = self
            .query(
                doing,
                &sql,
                &[
                    &id.as_str(),
                    &d.decision.state().as_str(),
                    &d.by,
                    &d.reason,
                    &d.push,
                ],
            )
            .await?;
        Ok(self.queue_approval(id).await?.map(|a| {
            if decided.is_empty() {
                Decided::Already(a)
            } else {
                Decided::Now(a)
            }
        }))
    }

    pub(crate) async fn decided_queue_approvals(
        &self,
        holder: &str,
    ) -> Result<Vec<QueueApproval>, ForgeError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM queue_approvals
             WHERE holder = $1 AND state <> 'pending' AND outcome IS NULL
             ORDER BY decided_at_ms, approval_id"
        );
        let rows = self
            .query("listing decided approvals", &sql, &[&holder])
            .await?;
        self.approvals_of(&rows)
    }

    pub(crate) async fn record_queue_approval_outcome(
        &self,
        id: &ApprovalId,
        outcome: &ApprovalOutcome,
    ) -> Result<bool, ForgeError> {
        let rows = self
            .query(
                "recording an approval's outcome",
                &format!(
                    "UPDATE queue_approvals SET outcome = $2
                     WHERE approval_id = $1 AND state <> 'pending' AND outcome IS NULL
                     RETURNING approval_id, pg_notify('{EVENTS_CHANNEL}', task_id || ' 0')"
                ),
                &[&id.as_str(), &serde_json::json!(outcome)],
            )
            .await?;
        Ok(!rows.is_empty())
    }
}
