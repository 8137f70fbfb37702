//! A task as a card on the board: which column it stands in and what a person reads at a
//! glance (prompt's first line, repository, provider, worker, attempts, elapsed, cost,
//! stage, outcome).

use forge_domain::delivery::{ApprovalState, TaskRecord};
use forge_domain::queue::{QueueState, QueuedTask};
use forge_domain::queue_approval::QueueApproval;
use forge_domain::task::TaskStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The board's columns, left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Column {
    Queued,
    Running,
    /// Held for approval.
    Held,
    Delivered,
    /// Failed, cancelled, dead or rejected.
    Failed,
}

/// Where a card's task lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The shared queue (any worker).
    Queue,
    /// A repository's own store (`task run` on this machine).
    Local,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Card {
    pub task_id: String,
    pub source: Source,
    pub column: Column,
    /// The queue's state, or the local task's status.
    pub state: String,
    /// The prompt's first line.
    pub title: String,
    pub repo: String,
    pub provider: Option<String>,
    pub worker: Option<String>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub submitted_at_ms: u64,
    pub started_at_ms: Option<u64>,
    pub finished_at_ms: Option<u64>,
    /// Since it started (to its end, or to now while it runs).
    pub elapsed_ms: Option<u64>,
    /// The report's total, or the last stage's while it runs.
    pub cost_usd: Option<f64>,
    /// The stage it is in while it runs.
    pub stage: Option<String>,
    /// How it ended: the report's status, else the queue's state.
    pub outcome: Option<String>,
    pub approval_id: Option<String>,
    pub risk_score: Option<u8>,
}

/// The prompt's first non-empty line, cut at 120 characters.
pub fn first_line(prompt: &str) -> String {
    let line = prompt
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut cut: String = line.chars().take(120).collect();
    if line.chars().count() > 120 {
        cut.push('…');
    }
    cut
}

fn text(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_owned)
}

/// A queued task's card. `last_stage` is the data of its newest `stage` event (only read
/// for a running task); `approval` the queue's approval of its held change, if any.
pub fn queue_card(
    task: &QueuedTask,
    approval: Option<&QueueApproval>,
    last_stage: Option<&Value>,
    now_ms: u64,
) -> Card {
    let report = task.report.as_ref();
    let held = report
        .and_then(|r| r.pointer("/delivery/decision"))
        .and_then(Value::as_str)
        == Some("pending_approval");
    let column = match task.state {
        QueueState::Queued => Column::Queued,
        QueueState::Running => Column::Running,
        QueueState::Succeeded => match approval.map(|a| a.state) {
            Some(ApprovalState::Pending) => Column::Held,
            Some(ApprovalState::Rejected) => Column::Failed,
            Some(ApprovalState::Approved) => Column::Delivered,
            None if held => Column::Held,
            None => Column::Delivered,
        },
        QueueState::Failed | QueueState::Cancelled | QueueState::Dead => Column::Failed,
    };
    let outcome = match (task.state.is_final(), approval) {
        (false, _) => None,
        (true, Some(a)) if a.state != ApprovalState::Pending => Some(a.state.as_str().to_owned()),
        (true, _) => text(report.and_then(|r| r.get("status")))
            .filter(|_| task.state == QueueState::Succeeded)
            .or_else(|| Some(task.state.as_str().to_owned())),
    };
    let running = task.state == QueueState::Running;
    let end = task.finished_at_ms.or(running.then_some(now_ms));
    Card {
        task_id: task.task_id.as_str().to_owned(),
        source: Source::Queue,
        column,
        state: task.state.as_str().to_owned(),
        title: first_line(&task.prompt),
        repo: task.repo.clone(),
        provider: text(task.options.get("provider"))
            .or_else(|| text(report.and_then(|r| r.get("provider")))),
        worker: task.worker.clone(),
        attempts: task.attempts,
        max_attempts: task.max_attempts,
        submitted_at_ms: task.submitted_at_ms,
        started_at_ms: task.started_at_ms,
        finished_at_ms: task.finished_at_ms,
        elapsed_ms: task
            .started_at_ms
            .zip(end)
            .map(|(start, end)| end.saturating_sub(start)),
        cost_usd: report
            .and_then(|r| r.get("cost_usd"))
            .and_then(Value::as_f64)
            .or_else(|| {
                last_stage
                    .and_then(|s| s.get("cost_usd"))
                    .and_then(Value::as_f64)
            }),
        stage: running
            .then(|| text(last_stage.and_then(|s| s.get("stage"))))
            .flatten(),
        outcome,
        approval_id: approval
            .map(|a| a.approval_id.as_str().to_owned())
            .or_else(|| {
                text(report.and_then(|r| r.pointer("/delivery/approval_id"))).filter(|_| held)
            }),
        risk_score: report
            .and_then(|r| r.pointer("/risk/score"))
            .and_then(Value::as_u64)
            .and_then(|s| u8::try_from(s).ok()),
    }
}

/// A local task's card (a repository's store keeps tasks once they ran).
pub fn local_card(record: &TaskRecord) -> Card {
    let report = &record.report;
    let column = match record.status {
        TaskStatus::Validated | TaskStatus::NotValidated | TaskStatus::Committed => {
            Column::Delivered
        }
        TaskStatus::PendingApproval => Column::Held,
        TaskStatus::Failed
        | TaskStatus::Stopped
        | TaskStatus::Rejected
        | TaskStatus::RolledBack => Column::Failed,
    };
    let duration = report.get("duration_ms").and_then(Value::as_u64);
    let prompt = text(report.get("task")).unwrap_or_else(|| record.title.clone());
    Card {
        task_id: record.task_id.as_str().to_owned(),
        source: Source::Local,
        column,
        state: record.status.as_str().to_owned(),
        title: first_line(&prompt),
        repo: record.repo.clone(),
        provider: text(report.get("provider")),
        worker: None,
        attempts: 1,
        max_attempts: 1,
        submitted_at_ms: record.created_at_ms,
        started_at_ms: Some(record.created_at_ms),
        finished_at_ms: Some(record.updated_at_ms),
        elapsed_ms: duration
            .or_else(|| Some(record.updated_at_ms.saturating_sub(record.created_at_ms))),
        cost_usd: report.get("cost_usd").and_then(Value::as_f64),
        stage: None,
        outcome: Some(record.status.as_str().to_owned()),
        approval_id: text(report.pointer("/delivery/approval_id"))
            .filter(|_| record.status == TaskStatus::PendingApproval),
        risk_score: Some(record.risk_score),
    }
}

/// The board's filters (`?repo=&provider=&worker=`), each an exact match when given.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Filter {
    #[serde(default)]
    pub repo: Option<String>,
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub worker: Option<String>,
}

impl Filter {
    pub fn keeps(&self, card: &Card) -> bool {
        let same = |want: &Option<String>, have: Option<&str>| {
            want.as_deref()
                .filter(|w| !w.is_empty())
                .is_none_or(|w| have == Some(w))
        };
        same(&self.repo, Some(&card.repo))
            && same(&self.provider, card.provider.as_deref())
            && same(&self.worker, card.worker.as_deref())
    }
}
