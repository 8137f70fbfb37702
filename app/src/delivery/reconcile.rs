//! On start: make the store and git agree again after a forge was killed mid-delivery,
//! and resend notices that did not go through.

use forge_domain::delivery::{ApprovalId, ApprovalState, AuditAction, CodeChange, TRAILER};
use forge_domain::task::{Delivery as Delivered, DeliveryDecision, TaskOutcome, TaskStatus};

use super::{Delivery, DeliveryError};

/// What reconciliation did, one line per task it touched.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReconcileReport {
    pub fixed: Vec<String>,
    pub renotified: Vec<String>,
}

impl Delivery {
    /// Walks the stored tasks that are mid-delivery and untouched for the grace period
    /// (a younger row may be another forge's work in progress):
    /// - `validated` with a commit carrying its `Forge-Task` trailer (killed between the
    ///   commit and the store write) → recorded as committed; without one → the gate runs
    ///   again;
    /// - `pending_approval` whose approval was decided (killed between the decision and
    ///   its action) before the grace period → the action is finished; still pending →
    ///   channels whose last attempt failed are tried again.
    ///
    /// # Errors
    /// [`DeliveryError::Forge`] when the store or git fails.
    pub async fn reconcile(&self) -> Result<ReconcileReport, DeliveryError> {
        let mut report = ReconcileReport::default();
        let now = self.now();
        for record in self.ports.store.tasks().await? {
            if now.saturating_sub(record.updated_at_ms) < self.settings.reconcile_grace_ms {
                continue;
            }
            match record.status {
                TaskStatus::Validated | TaskStatus::NotValidated => {
                    let (_, outcome) = self.load(&record.task_id).await?;
                    if let Some(line) = self.reconcile_validated(outcome).await? {
                        report.fixed.push(line);
                    }
                }
                TaskStatus::PendingApproval => {
                    let (_, outcome) = self.load(&record.task_id).await?;
                    let (fixed, renotified) = self.reconcile_pending(outcome).await?;
                    report.fixed.extend(fixed);
                    report.renotified.extend(renotified);
                }
                _ => {}
            }
        }
        report.fixed.extend(self.reconcile_orphans().await?);
        Ok(report)
    }

    /// Commits with a `Forge-Task` trailer whose task has no row at all (the store was
    /// lost or replaced): the row is rebuilt from the task's `report.json`.
    async fn reconcile_orphans(&self) -> Result<Vec<String>, DeliveryError> {
        let mut fixed = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (commit, value) in self.ports.vcs.trailers(&self.repo, TRAILER).await? {
            let Ok(id) = forge_domain::task::TaskId::new(value) else {
                continue;
            };
            if !seen.insert(id.clone()) || self.ports.store.task(&id).await?.is_some() {
                continue;
            }
            let path = crate::task::artifacts::TaskDir::new(&self.repo, &id)
                .dir
                .join("report.json");
            let Some(bytes) = self.ports.files.read(&path).await? else {
                continue;
            };
            let Ok(outcome) = serde_json::from_slice::<TaskOutcome>(&bytes) else {
                continue;
            };
            let line = format!("{id}: commit {commit} had no row; rebuilt from report.json");
            let approval = outcome
                .delivery
                .as_ref()
                .and_then(|d| d.approval_id.as_deref())
                .and_then(|a| ApprovalId::new(a).ok());
            self.save(&outcome, &[]).await?;
            self.record_found_commit(outcome, commit, approval.as_ref(), &line)
                .await?;
            fixed.push(line);
        }
        Ok(fixed)
    }

    async fn trailer_commit(&self, outcome: &TaskOutcome) -> Result<Option<String>, DeliveryError> {
        let found = self
            .ports
            .vcs
            .commits_with_trailer(&self.repo, TRAILER, outcome.task_id.as_str())
            .await?;
        Ok(found.into_iter().next())
    }

    async fn reconcile_validated(
        &self,
        outcome: TaskOutcome,
    ) -> Result<Option<String>, DeliveryError> {
        let id = outcome.task_id.clone();
        if let Some(commit) = self.trailer_commit(&outcome).await? {
            let line = format!("{id}: commit {commit} found by its trailer, recorded as committed");
            self.record_found_commit(outcome, commit, None, &line)
                .await?;
            return Ok(Some(line));
        }
        // No commit: the kill came before it. The work tree still holds the change only if
        // nothing removed it; without it there is nothing to deliver.
        let trees = self.ports.vcs.worktrees(&self.repo).await?;
        if !trees
            .iter()
            .any(|t| t.path.as_os_str() == outcome.worktree.as_str())
        {
            return Ok(None);
        }
        let delivered = self.apply_gate(outcome).await?;
        let line = format!("{id}: delivery re-run, now {}", delivered.status);
        self.ports
            .store
            .append_audit(&self.entry(&id, AuditAction::Reconciled, line.clone()))
            .await?;
        Ok(Some(line))
    }

    async fn reconcile_pending(
        &self,
        outcome: TaskOutcome,
    ) -> Result<(Vec<String>, Vec<String>), DeliveryError> {
        let id = outcome.task_id.clone();
        let approval_id = ApprovalId::for_task(&id);
        let Some(approval) = self.ports.store.approval(&approval_id).await? else {
            return Ok((vec![], vec![]));
        };
        // A decision younger than the grace may be another forge carrying it out right now
        // (approving and committing): it is that forge's to finish.
        let decided_lately = approval
            .decided_at_ms
            .is_some_and(|at| self.now().saturating_sub(at) < self.settings.reconcile_grace_ms);
        if decided_lately {
            return Ok((vec![], vec![]));
        }
        let mut fixed = Vec::new();
        match approval.state {
            ApprovalState::Approved => {
                let line = if let Some(commit) = self.trailer_commit(&outcome).await? {
                    let line = format!("{id}: approved, commit {commit} found by its trailer");
                    self.record_found_commit(outcome, commit, Some(&approval_id), &line)
                        .await?;
                    line
                } else {
                    self.finish_approve(outcome, &approval_id).await?;
                    format!("{id}: approved before a stop, committed now")
                };
                self.audit_reconciled(&id, &line).await?;
                fixed.push(line);
                Ok((fixed, vec![]))
            }
            ApprovalState::Rejected => {
                self.finish_reject(outcome, &approval_id).await?;
                let line = format!("{id}: rejected before a stop, work tree and branch removed");
                self.audit_reconciled(&id, &line).await?;
                fixed.push(line);
                Ok((fixed, vec![]))
            }
            ApprovalState::Pending if Self::is_pending(&outcome) => {
                let failed = self.channels_to_retry(&approval_id).await?;
                if failed.is_empty() {
                    return Ok((fixed, vec![]));
                }
                let results = self.send_notice(&outcome, &approval, Some(&failed)).await?;
                let mut outcome = outcome;
                if let Some(delivery) = outcome.delivery.as_mut() {
                    for result in &results {
                        delivery
                            .notifications
                            .retain(|n| n.channel != result.channel);
                        delivery.notifications.push(result.clone());
                    }
                }
                self.save(&outcome, &[]).await?;
                let renotified = results
                    .iter()
                    .map(|r| {
                        let state = if r.ok { "sent" } else { "failed again" };
                        format!("{id}: {} {state}", r.channel)
                    })
                    .collect();
                Ok((fixed, renotified))
            }
            ApprovalState::Pending => Ok((fixed, vec![])),
        }
    }

    /// Configured channels whose latest attempt failed or that never ran.
    async fn channels_to_retry(&self, id: &ApprovalId) -> Result<Vec<String>, DeliveryError> {
        let history = self.ports.store.notifications(id).await?;
        Ok(self
            .ports
            .notifiers
            .iter()
            .map(|n| n.channel().to_owned())
            .filter(|channel| {
                history
                    .iter()
                    .rev()
                    .find(|r| &r.channel == channel)
                    .is_none_or(|last| !last.ok)
            })
            .collect())
    }

    async fn record_found_commit(
        &self,
        mut outcome: TaskOutcome,
        commit: String,
        approval: Option<&ApprovalId>,
        line: &str,
    ) -> Result<(), DeliveryError> {
        let id = outcome.task_id.clone();
        let previous = self.ports.store.change(&id).await?;
        let change = CodeChange {
            task_id: id.clone(),
            branch: outcome.branch.clone(),
            commit: Some(commit.clone()),
            base: previous.as_ref().and_then(|c| c.base.clone()),
            pushed: false,
            push_error: None,
            files: outcome.files.iter().map(|f| f.path.clone()).collect(),
            at_ms: self.now(),
        };
        let entry = self.entry(&id, AuditAction::Reconciled, line);
        self.ports.store.save_change(&change, &[entry]).await?;
        let notifications = outcome
            .delivery
            .as_ref()
            .map(|d| d.notifications.clone())
            .unwrap_or_default();
        outcome.deliver(Delivered {
            decision: DeliveryDecision::Committed,
            branch: outcome.branch.clone(),
            commit: Some(commit),
            pushed: false,
            push_error: None,
            delivered_by_another_attempt: None,
            approval_id: approval.map(ApprovalId::to_string),
            notifications,
            author: None,
        });
        let mut audit = Vec::new();
        if self.settings.cleanup {
            audit.extend(self.remove_worktree(&outcome, false).await);
        }
        self.save(&outcome, &audit).await
    }

    async fn audit_reconciled(
        &self,
        id: &forge_domain::task::TaskId,
        line: &str,
    ) -> Result<(), DeliveryError> {
        self.ports
            .store
            .append_audit(&self.entry(id, AuditAction::Reconciled, line))
            .await?;
        Ok(())
    }
}
