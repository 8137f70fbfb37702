//! A worker's side of approvals through the queue: it files the change a task held for
//! approval under its holder key, and carries out the decisions taken on them (from any
//! machine) — only it can, the change waits in its repository cache.
//!
//! Carrying out runs while the worker runs, idle or busy: woken when the worker is woken
//! (PostgreSQL's NOTIFY of a decision) and at least every `idle_ms`. A decision taken while
//! the worker is not running waits, visible as `approved (waiting for worker X)`, and is
//! carried out when it comes back.

use std::sync::Arc;
use std::time::Duration;

use forge_domain::ForgeError;
use forge_domain::queue::QueuedTask;
use forge_domain::queue_approval::{ApprovalOutcome, held_approval};
use forge_domain::task::TaskId;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::worker::{Worker, WorkerEvent, backoff};

impl Worker {
    /// Files the approval a finished task's report asks for (its change is held), retried
    /// until the queue answers. Nothing for any other report.
    pub(super) async fn file_held_change(
        &self,
        id: &TaskId,
        push: bool,
        report: Option<&serde_json::Value>,
    ) {
        let Some(held) = report.and_then(|r| held_approval(id, &self.config.holder, push, r))
        else {
            return;
        };
        let mut failures = 0;
        loop {
            match self.queue.record_approval(&held).await {
                Ok(_) => return,
                Err(e @ ForgeError::InvalidRequest { .. }) => {
                    self.queue_error("filing an approval", &e);
                    return;
                }
                Err(e) => {
                    self.queue_error("filing an approval", &e);
                    failures += 1;
                    tokio::time::sleep(backoff(failures)).await;
                }
            }
        }
    }

    /// Carries out decided approvals this worker holds until `stop` fires; `wake` makes it
    /// look at once.
    pub(super) async fn carry_out_decisions(
        self: Arc<Self>,
        stop: CancellationToken,
        wake: Arc<Notify>,
    ) {
        let mut failures = 0u32;
        loop {
            let pause = match self.carry_out_decided().await {
                Ok(()) => {
                    failures = 0;
                    Duration::from_millis(self.config.idle_ms)
                }
                Err(e) => {
                    self.queue_error("looking for decided approvals", &e);
                    failures += 1;
                    backoff(failures)
                }
            };
            tokio::select! {
                () = stop.cancelled() => return,
                () = wake.notified() => {}
                () = tokio::time::sleep(pause) => {}
            }
        }
    }

    async fn carry_out_decided(&self) -> Result<(), ForgeError> {
        for approval in self.queue.decided_approvals(&self.config.holder).await? {
            let Some(task) = self.queue.task(&approval.task_id).await? else {
                continue;
            };
            let mut outcome = self.runner.carry_out(&approval, &task).await;
            // An approval's push is the task's delivery: one per task, as for any other.
            if let ApprovalOutcome::Done { report } = &outcome {
                if let Some(conflict) = self.record_delivery(&task.task_id, Some(report)).await {
                    outcome = ApprovalOutcome::Failed { error: conflict };
                }
            }
            let id = &approval.approval_id;
            self.retry("recording an approval's outcome", || {
                self.queue.record_approval_outcome(id, &outcome)
            })
            .await;
            self.emit(WorkerEvent::ApprovalCarriedOut {
                approval: id.clone(),
                state: approval.state,
                error: match outcome {
                    ApprovalOutcome::Failed { error } => Some(error),
                    ApprovalOutcome::Done { .. } => None,
                },
            });
        }
        Ok(())
    }
}

/// Whether the task asked for `--push` (its options, as submitted).
pub(super) fn push_asked(task: &QueuedTask) -> bool {
    task.options
        .get("push")
        .and_then(serde_json::Value::as_bool)
        == Some(true)
}
