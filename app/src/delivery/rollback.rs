//! `task rollback`: undo what delivery did.

use forge_domain::delivery::{ApprovalId, AuditAction, Decision};
use forge_domain::task::{
    Delivery as Delivered, DeliveryDecision, TaskId, TaskOutcome, TaskStatus,
};

use super::{Delivery, DeliveryError};

impl Delivery {
    /// Runs the task's rollback: a committed change that is merged into the repository's
    /// HEAD is reverted there (a new commit); one that is not (still only on its branch) has
    /// its branch and work tree removed. A held change is rejected and removed; an
    /// undelivered one (validated, failed, stopped) is discarded.
    ///
    /// # Errors
    /// [`DeliveryError::NoSuchTask`]; [`DeliveryError::WrongState`] when the task was
    /// already rejected or rolled back; [`DeliveryError::Forge`] when git refuses (a revert
    /// that conflicts is aborted and reported) or the store fails.
    pub async fn rollback(&self, task: &TaskId) -> Result<TaskOutcome, DeliveryError> {
        let (_, mut outcome) = self.load(task).await?;
        let mut audit = Vec::new();
        match outcome.status {
            TaskStatus::Rejected | TaskStatus::RolledBack => {
                return Err(DeliveryError::WrongState {
                    task: task.clone(),
                    status: outcome.status,
                    reason: "there is nothing left to roll back".into(),
                });
            }
            TaskStatus::Committed => {
                let commit = self.ports.store.change(task).await?.and_then(|c| c.commit);
                let merged = match &commit {
                    Some(c) => self.ports.vcs.is_ancestor(&self.repo, c, "HEAD").await?,
                    None => false,
                };
                match commit {
                    Some(c) if merged => {
                        let identity = self.identity(&self.repo).await?;
                        let author = forge_ports::CommitAuthor {
                            name: identity.name,
                            email: identity.email,
                        };
                        let revert = self.ports.vcs.revert(&self.repo, &c, Some(&author)).await?;
                        audit.push(self.entry(
                            task,
                            AuditAction::RolledBack,
                            format!("reverted {c} with {revert}"),
                        ));
                    }
                    _ => {
                        audit.extend(self.remove_worktree(&outcome, true).await);
                        audit.push(self.entry(
                            task,
                            AuditAction::RolledBack,
                            format!("not merged: branch {} removed", outcome.branch),
                        ));
                    }
                }
            }
            TaskStatus::PendingApproval => {
                let id = ApprovalId::for_task(task);
                // Decided here so a concurrent approver cannot commit what is being removed.
                let decided = self
                    .ports
                    .store
                    .decide_approval(
                        &id,
                        Decision::Reject,
                        &self.settings.actor,
                        Some("rolled back"),
                        self.now(),
                    )
                    .await?;
                if let forge_ports::DecideOutcome::AlreadyDecided(a) = decided {
                    return Err(DeliveryError::AlreadyDecided {
                        id: a.id,
                        state: a.state,
                        by: a.decided_by,
                    });
                }
                audit.extend(self.remove_worktree(&outcome, true).await);
                audit.push(self.entry(task, AuditAction::RolledBack, "held change discarded"));
            }
            TaskStatus::Validated
            | TaskStatus::NotValidated
            | TaskStatus::Failed
            | TaskStatus::Stopped => {
                audit.extend(self.remove_worktree(&outcome, true).await);
                audit.push(self.entry(
                    task,
                    AuditAction::RolledBack,
                    "undelivered change discarded",
                ));
            }
        }
        let previous = outcome.delivery.clone();
        outcome.deliver(Delivered {
            decision: DeliveryDecision::RolledBack,
            branch: outcome.branch.clone(),
            commit: previous.as_ref().and_then(|d| d.commit.clone()),
            pushed: previous.as_ref().is_some_and(|d| d.pushed),
            push_error: previous.as_ref().and_then(|d| d.push_error.clone()),
            delivered_by_another_attempt: previous
                .as_ref()
                .and_then(|d| d.delivered_by_another_attempt.clone()),
            approval_id: previous.as_ref().and_then(|d| d.approval_id.clone()),
            author: previous.as_ref().and_then(|d| d.author.clone()),
            notifications: previous.map(|d| d.notifications).unwrap_or_default(),
        });
        self.save(&outcome, &audit).await?;
        Ok(outcome)
    }
}
