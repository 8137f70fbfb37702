//! Rows of `queue_tasks` and `queue_events` into the domain's types.

use forge_domain::ForgeError;
use forge_domain::queue::{QueueEvent, QueueState, QueuedTask};
use forge_domain::task::TaskId;
use tokio_postgres::Row;

/// The columns every task query returns, in [`task_from`]'s order.
pub(crate) const TASK_COLUMNS: &str = "task_id, state, repo, prompt, options, attempts, \
    max_attempts, worker, lease_until_ms, cancel_requested, submitted_at_ms, started_at_ms, \
    finished_at_ms, exit_code, last_error, report";

/// Column names qualified with `t.` (for statements that join).
pub(crate) fn qualified_task_columns() -> String {
    TASK_COLUMNS
        .split(", ")
        .map(|c| format!("t.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn corrupt(url: &str, what: String) -> ForgeError {
    ForgeError::Io {
        context: format!("task queue {url}: reading a task"),
        message: what,
    }
}

fn ms(value: Option<i64>) -> Option<u64> {
    value.map(|v| u64::try_from(v).unwrap_or(0))
}

fn count(value: i32) -> u32 {
    u32::try_from(value).unwrap_or(0)
}

pub(crate) fn task_from(row: &Row, url: &str) -> Result<QueuedTask, ForgeError> {
    let id: String = row.get(0);
    let state: String = row.get(1);
    let task_id =
        TaskId::new(id.clone()).map_err(|e| corrupt(url, format!("task id {id:?}: {e}")))?;
    let state = QueueState::parse(&state)
        .ok_or_else(|| corrupt(url, format!("task {id}: unknown state {state:?}")))?;
    Ok(QueuedTask {
        task_id,
        state,
        repo: row.get(2),
        prompt: row.get(3),
        options: row.get(4),
        attempts: count(row.get(5)),
        max_attempts: count(row.get(6)),
        worker: row.get(7),
        lease_until_ms: ms(row.get(8)),
        cancel_requested: row.get(9),
        submitted_at_ms: ms(Some(row.get(10))).unwrap_or(0),
        started_at_ms: ms(row.get(11)),
        finished_at_ms: ms(row.get(12)),
        exit_code: row.get(13),
        last_error: row.get(14),
        report: row.get(15),
    })
}

pub(crate) fn event_from(row: &Row, url: &str) -> Result<QueueEvent, ForgeError> {
    let id: String = row.get(1);
    Ok(QueueEvent {
        seq: ms(Some(row.get(0))).unwrap_or(0),
        task_id: TaskId::new(id.clone())
            .map_err(|e| corrupt(url, format!("event of task {id:?}: {e}")))?,
        at_ms: ms(Some(row.get(2))).unwrap_or(0),
        kind: row.get(3),
        data: row.get(4),
    })
}
