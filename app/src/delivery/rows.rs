//! The task's row and `report.json`, kept in step with the outcome.

use forge_domain::ForgeError;
use forge_domain::delivery::{AuditAction, AuditEntry, TaskRecord};
use forge_domain::task::{TaskId, TaskOutcome};

use super::{Delivery, DeliveryError};
use crate::task::artifacts::TaskDir;

/// Longest title kept in a row (the whole task text is in the report).
const MAX_TITLE: usize = 200;

impl Delivery {
    pub(super) fn now(&self) -> u64 {
        self.ports.clock.now_ms()
    }

    /// An audit entry by this process's actor.
    pub(super) fn entry(
        &self,
        task: &TaskId,
        action: AuditAction,
        detail: impl Into<String>,
    ) -> AuditEntry {
        AuditEntry::new(
            task.clone(),
            self.now(),
            &self.settings.actor,
            action,
            detail,
        )
    }

    /// The stored outcome of `task`.
    pub(super) async fn load(
        &self,
        task: &TaskId,
    ) -> Result<(TaskRecord, TaskOutcome), DeliveryError> {
        let record = self
            .ports
            .store
            .task(task)
            .await?
            .ok_or_else(|| DeliveryError::NoSuchTask(task.clone()))?;
        let outcome: TaskOutcome = serde_json::from_value(record.report.clone())
            .map_err(|e| ForgeError::io(format!("reading the stored report of task {task}"), e))?;
        Ok((record, outcome))
    }

    /// Saves the outcome as the task's row (with `audit`, in one transaction), then
    /// rewrites its `report.json`.
    pub(super) async fn save(
        &self,
        outcome: &TaskOutcome,
        audit: &[AuditEntry],
    ) -> Result<(), DeliveryError> {
        let now = self.now();
        let created = match self.ports.store.task(&outcome.task_id).await? {
            Some(existing) => existing.created_at_ms,
            None => now,
        };
        let report = serde_json::to_value(outcome)
            .map_err(|e| ForgeError::io("serialising the task report", e))?;
        let title: String = outcome
            .task
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let record = TaskRecord {
            task_id: outcome.task_id.clone(),
            status: outcome.status,
            title: forge_domain::error::excerpt(&title, MAX_TITLE),
            repo: self.repo.display().to_string(),
            branch: outcome.branch.clone(),
            worktree: (!outcome.worktree.is_empty()).then(|| outcome.worktree.clone()),
            risk_score: outcome.risk.score,
            created_at_ms: created,
            updated_at_ms: now,
            report,
        };
        self.ports.store.save_task(&record, audit).await?;
        TaskDir::new(&self.repo, &outcome.task_id)
            // The pipeline's redactor already masked the run's known secrets in this
            // outcome; the default one still masks the patterns it recognises.
            .write_json(
                self.ports.files.as_ref(),
                &forge_domain::Redactor::default(),
                "report.json",
                outcome,
            )
            .await?;
        Ok(())
    }
}
