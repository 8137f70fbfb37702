//! A person's decision on a held change.

use std::path::PathBuf;

use forge_domain::delivery::{Approval, ApprovalId, AuditAction, Decision};
use forge_domain::task::{Delivery as Delivered, DeliveryDecision, TaskOutcome, TaskStatus};
use forge_ports::DecideOutcome;

use super::{Delivery, DeliveryError};

/// What approving did.
#[derive(Debug, Clone, PartialEq)]
pub struct Approved {
    pub outcome: TaskOutcome,
    /// Set when the repository's HEAD is no longer the commit the task started from: the
    /// commit is on the task branch as always, and merging it is the person's call.
    pub base_moved: Option<String>,
}

impl Delivery {
    /// The approval and its task's outcome.
    ///
    /// # Errors
    /// [`DeliveryError::NoSuchApproval`]; [`DeliveryError::Forge`] when the store fails.
    pub async fn approval(
        &self,
        id: &ApprovalId,
    ) -> Result<(Approval, TaskOutcome), DeliveryError> {
        let approval = self
            .ports
            .store
            .approval(id)
            .await?
            .ok_or_else(|| DeliveryError::NoSuchApproval(id.clone()))?;
        let (_, outcome) = self.load(&approval.task_id).await?;
        Ok((approval, outcome))
    }

    async fn decide(
        &self,
        id: &ApprovalId,
        decision: Decision,
        reason: Option<&str>,
    ) -> Result<(Approval, TaskOutcome), DeliveryError> {
        let (_, outcome) = self.approval(id).await?;
        let decided = self
            .ports
            .store
            .decide_approval(id, decision, &self.settings.actor, reason, self.now())
            .await?;
        match decided {
            DecideOutcome::Decided(approval) => {
                self.step(super::DeliveryStep::Decided);
                Ok((approval, outcome))
            }
            DecideOutcome::AlreadyDecided(approval) => Err(DeliveryError::AlreadyDecided {
                id: approval.id,
                state: approval.state,
                by: approval.decided_by,
            }),
        }
    }

    /// Approves: commits the held change on its branch and pushes when enabled.
    ///
    /// # Errors
    /// [`DeliveryError::NoSuchApproval`]; [`DeliveryError::AlreadyDecided`] when someone
    /// decided first (nothing is done then); [`DeliveryError::WrongState`] when the work
    /// tree is gone; [`DeliveryError::Forge`] when the store or git fails.
    pub async fn approve(&self, id: &ApprovalId) -> Result<Approved, DeliveryError> {
        let (_, outcome) = self.decide(id, Decision::Approve, None).await?;
        self.finish_approve(outcome, id).await
    }

    /// The commit after an approval (also what reconciliation runs when a forge was killed
    /// between the decision and the commit).
    pub(super) async fn finish_approve(
        &self,
        outcome: TaskOutcome,
        id: &ApprovalId,
    ) -> Result<Approved, DeliveryError> {
        let worktree = PathBuf::from(&outcome.worktree);
        let trees = self.ports.vcs.worktrees(&self.repo).await?;
        if !trees.iter().any(|t| t.path == worktree) {
            return Err(DeliveryError::WrongState {
                task: outcome.task_id.clone(),
                status: outcome.status,
                reason: format!(
                    "its work tree {} is gone, so the approved change cannot be committed",
                    outcome.worktree
                ),
            });
        }
        let base = self
            .ports
            .store
            .change(&outcome.task_id)
            .await?
            .and_then(|c| c.base);
        let head = self.ports.vcs.resolve_commit(&self.repo, "HEAD").await?;
        let base_moved = match (&base, &head) {
            (Some(base), Some(head)) if base != head => Some(format!(
                "the repository's HEAD moved from {} to {} since the task started; the commit is on {} only",
                short(base),
                short(head),
                outcome.branch
            )),
            _ => None,
        };
        let outcome = self.commit_and_push(outcome, Some(id)).await?;
        if let Some(note) = &base_moved {
            let entry = self.entry(&outcome.task_id, AuditAction::Committed, note.clone());
            self.ports.store.append_audit(&entry).await?;
        }
        Ok(Approved {
            outcome,
            base_moved,
        })
    }

    /// Rejects: the work tree and the branch are removed, the decision recorded.
    ///
    /// # Errors
    /// As for [`Delivery::approve`].
    pub async fn reject(
        &self,
        id: &ApprovalId,
        reason: Option<&str>,
    ) -> Result<TaskOutcome, DeliveryError> {
        let (_, outcome) = self.decide(id, Decision::Reject, reason).await?;
        self.finish_reject(outcome, id).await
    }

    pub(super) async fn finish_reject(
        &self,
        mut outcome: TaskOutcome,
        id: &ApprovalId,
    ) -> Result<TaskOutcome, DeliveryError> {
        let audit = self.remove_worktree(&outcome, true).await;
        let notifications = outcome
            .delivery
            .as_ref()
            .map(|d| d.notifications.clone())
            .unwrap_or_default();
        outcome.deliver(Delivered {
            decision: DeliveryDecision::Rejected,
            branch: outcome.branch.clone(),
            commit: None,
            pushed: false,
            push_error: None,
            delivered_by_another_attempt: None,
            approval_id: Some(id.to_string()),
            notifications,
            author: None,
        });
        self.save(&outcome, &audit).await?;
        Ok(outcome)
    }

    /// A task that waits for a decision.
    pub(super) fn is_pending(outcome: &TaskOutcome) -> bool {
        outcome.status == TaskStatus::PendingApproval
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
