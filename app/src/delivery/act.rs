//! The gate and its two roads: commit (and push), or hold for approval.

use std::path::{Path, PathBuf};

use forge_domain::delivery::{
    Approval, ApprovalId, ApprovalState, AuditAction, AuditEntry, CodeChange, CommitMessage, Gate,
    TRAILER, choose_identity, gate,
};
use forge_domain::task::instructions::file_name;
use forge_domain::task::{CommitIdentity, Delivery as Delivered, DeliveryDecision, TaskOutcome};
use forge_ports::CommitAuthor;

use super::remote::RefusedPush;
use super::{Delivery, DeliveryError};

/// forge's own files, never committed: its state directory (artifacts, the store, work
/// trees) and the instruction file written for the provider.
const FORGE_DIR: &str = ".forgecode";

impl Delivery {
    /// Stores the pipeline's outcome and delivers it: committed (and pushed) when its risk
    /// is below the threshold, held for approval (and notified) otherwise. An outcome that
    /// did not validate is stored and left as it is. Returns the outcome with its
    /// `delivery` object filled and its status the decision.
    ///
    /// # Errors
    /// [`DeliveryError::Forge`] when the store or git fails; what was done before the
    /// failure is recorded.
    pub async fn deliver(&self, outcome: TaskOutcome) -> Result<TaskOutcome, DeliveryError> {
        let audit = self.outcome_audit(&outcome);
        self.save(&outcome, &audit).await?;
        self.step(super::DeliveryStep::Stored);
        self.apply_gate(outcome).await
    }

    /// The gate on a stored outcome (also what reconciliation re-runs).
    pub(super) async fn apply_gate(
        &self,
        outcome: TaskOutcome,
    ) -> Result<TaskOutcome, DeliveryError> {
        match gate(
            outcome.status,
            outcome.risk.score,
            self.settings.risk_threshold,
        ) {
            Gate::NotDeliverable => Ok(outcome),
            Gate::Commit => self.commit_and_push(undone_by_forge(outcome), None).await,
            Gate::HoldForApproval => self.hold(undone_by_forge(outcome)).await,
        }
    }

    fn outcome_audit(&self, outcome: &TaskOutcome) -> Vec<AuditEntry> {
        let id = &outcome.task_id;
        let mut audit = vec![self.entry(
            id,
            AuditAction::TaskStarted,
            format!(
                "{} {} on {}",
                outcome.provider,
                outcome.task_type.as_str(),
                outcome.branch
            ),
        )];
        for (n, cycle) in outcome.cycles.iter().enumerate() {
            let kind = serde_json::to_value(cycle.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let passed = match &cycle.validation {
                Some(v) if v.passed => "validation passed",
                Some(_) => "validation failed",
                None => "not validated",
            };
            let run = cycle.run_id.as_ref().map_or("-", |r| r.as_str());
            audit.push(self.entry(
                id,
                AuditAction::Cycle,
                format!("{} {kind} run {run} ${:.4} {passed}", n + 1, cycle.cost_usd),
            ));
        }
        audit.push(self.entry(
            id,
            AuditAction::Review,
            format!("{} finding(s)", outcome.review.findings.len()),
        ));
        audit.push(self.entry(
            id,
            AuditAction::Outcome,
            format!(
                "{} ({}), risk {}",
                outcome.status,
                outcome.stop_reason.as_str(),
                outcome.risk.score
            ),
        ));
        audit
    }

    /// The commit message: the template (or forge's default) plus the trailer.
    pub(super) fn message(&self, outcome: &TaskOutcome) -> String {
        let summary = outcome.summary.as_deref().unwrap_or("");
        let Some(template) = &self.settings.message else {
            return CommitMessage {
                task_type: outcome.task_type.as_str(),
                title: &outcome.task,
                summary,
                task_id: &outcome.task_id,
            }
            .render();
        };
        let body = template
            .replace("{type}", outcome.task_type.as_str())
            .replace("{title}", outcome.task.trim())
            .replace("{summary}", summary.trim())
            .replace("{task_id}", outcome.task_id.as_str());
        format!("{}\n\n{TRAILER}: {}\n", body.trim_end(), outcome.task_id)
    }

    fn excluded(&self, outcome: &TaskOutcome) -> Vec<String> {
        vec![
            FORGE_DIR.to_owned(),
            file_name(&outcome.provider).to_owned(),
        ]
    }

    /// Commits the work tree on the task branch, records it, pushes when enabled (a failed
    /// push keeps the commit and records the error), cleans the work tree up.
    pub(super) async fn commit_and_push(
        &self,
        mut outcome: TaskOutcome,
        approval: Option<&ApprovalId>,
    ) -> Result<TaskOutcome, DeliveryError> {
        let id = outcome.task_id.clone();
        let worktree = PathBuf::from(&outcome.worktree);
        let vcs = &self.ports.vcs;
        let base = vcs.resolve_commit(&worktree, "HEAD").await?;
        let message = self.message(&outcome);
        let identity = self.identity(&worktree).await?;
        let author = CommitAuthor {
            name: identity.name.clone(),
            email: identity.email.clone(),
        };
        let mut commit = vcs
            .commit(&worktree, &message, Some(&author), &self.excluded(&outcome))
            .await?;
        if commit.is_none() && self.pull_request.is_some() {
            // A held change delivered as a draft pull request was committed when it was
            // held; its approval has nothing new to commit and pushes that commit.
            commit = self.ports.store.change(&id).await?.and_then(|c| c.commit);
        }
        self.step(super::DeliveryStep::Committed);
        let mut change = CodeChange {
            task_id: id.clone(),
            branch: outcome.branch.clone(),
            commit: commit.clone(),
            base,
            pushed: false,
            push_error: None,
            files: outcome.files.iter().map(|f| f.path.clone()).collect(),
            at_ms: self.now(),
        };
        let detail = commit
            .clone()
            .unwrap_or_else(|| "nothing to commit".to_owned());
        let committed = self.entry(&id, AuditAction::Committed, detail);
        self.ports.store.save_change(&change, &[committed]).await?;

        let mut by_another = None;
        if let (true, Some(own)) = (self.settings.push, commit.as_deref()) {
            let pushed = vcs
                .push(&worktree, &self.settings.remote, &outcome.branch)
                .await;
            let entry = match pushed {
                Ok(()) => {
                    change.pushed = true;
                    self.entry(&id, AuditAction::Pushed, &self.settings.remote)
                }
                Err(e) => match self.refused_push(&id, &outcome.branch, own, &e).await {
                    RefusedPush::OwnCommitThere => {
                        change.pushed = true;
                        self.entry(&id, AuditAction::Pushed, &self.settings.remote)
                    }
                    RefusedPush::DeliveredByAnotherAttempt(theirs) => {
                        let line = format!(
                            "not pushed: another attempt of the task delivered first \
                             (commit {theirs} on {})",
                            outcome.branch
                        );
                        by_another = Some(theirs);
                        self.entry(&id, AuditAction::Reconciled, line)
                    }
                    RefusedPush::Failed(error) => {
                        change.push_error = Some(error.clone());
                        self.entry(&id, AuditAction::PushFailed, error)
                    }
                },
            };
            self.ports.store.save_change(&change, &[entry]).await?;
        }

        let notifications = outcome
            .delivery
            .as_ref()
            .map(|d| d.notifications.clone())
            .unwrap_or_default();
        outcome.deliver(Delivered {
            decision: DeliveryDecision::Committed,
            branch: outcome.branch.clone(),
            commit,
            pushed: change.pushed,
            push_error: change.push_error.clone(),
            delivered_by_another_attempt: by_another.clone(),
            approval_id: approval.map(ApprovalId::to_string),
            notifications,
            author: Some(identity),
        });
        if change.pushed {
            self.publish_pull_request(&mut outcome, false).await;
        } else if self.pull_request.is_some() {
            outcome.pull_request = Some(not_pushed(&outcome, &change.push_error));
        }
        let mut audit = Vec::new();
        if self.settings.cleanup {
            audit.extend(self.remove_worktree(&outcome, false).await);
        }
        self.save(&outcome, &audit).await?;
        Ok(outcome)
    }

    /// Who commits: `[delivery] author`, else git's identity in `dir`, else forge's
    /// built-in one (a machine with no git identity still delivers, and says so).
    pub(super) async fn identity(&self, dir: &Path) -> Result<CommitIdentity, DeliveryError> {
        let configured = self.settings.author.as_ref();
        let git = match configured {
            Some(_) => None,
            None => self.ports.vcs.identity(dir).await?,
        };
        let pair = |a: &CommitAuthor| (a.name.clone(), a.email.clone());
        let (configured, git) = (configured.map(pair), git.as_ref().map(pair));
        Ok(choose_identity(
            configured.as_ref().map(|(n, e)| (n.as_str(), e.as_str())),
            git.as_ref().map(|(n, e)| (n.as_str(), e.as_str())),
        ))
    }

    /// Stores a pending approval, keeps the work tree, notifies.
    async fn hold(&self, mut outcome: TaskOutcome) -> Result<TaskOutcome, DeliveryError> {
        let id = outcome.task_id.clone();
        let approval = Approval {
            id: ApprovalId::for_task(&id),
            task_id: id.clone(),
            state: ApprovalState::Pending,
            risk_score: outcome.risk.score,
            reasons: outcome.risk.reasons.clone(),
            files: outcome.files.iter().map(|f| f.path.clone()).collect(),
            requested_at_ms: self.now(),
            decided_at_ms: None,
            decided_by: None,
            reason: None,
        };
        let base = self
            .ports
            .vcs
            .resolve_commit(std::path::Path::new(&outcome.worktree), "HEAD")
            .await?;
        let change = CodeChange {
            task_id: id.clone(),
            branch: outcome.branch.clone(),
            commit: None,
            base,
            pushed: false,
            push_error: None,
            files: approval.files.clone(),
            at_ms: self.now(),
        };
        self.ports.store.save_change(&change, &[]).await?;
        let drafted = if self.pull_request.is_some() {
            Some(self.commit_held(&outcome, change).await?)
        } else {
            None
        };
        let requested = self.entry(
            &id,
            AuditAction::ApprovalRequested,
            format!(
                "{} (risk {} ≥ threshold {})",
                approval.id, outcome.risk.score, self.settings.risk_threshold
            ),
        );
        self.ports
            .store
            .create_approval(&approval, &[requested])
            .await?;
        let (commit, pushed, push_error) = match &drafted {
            Some(change) => (
                change.commit.clone(),
                change.pushed,
                change.push_error.clone(),
            ),
            None => (None, false, None),
        };
        outcome.deliver(Delivered {
            decision: DeliveryDecision::PendingApproval,
            branch: outcome.branch.clone(),
            commit,
            pushed,
            push_error,
            delivered_by_another_attempt: None,
            approval_id: Some(approval.id.to_string()),
            notifications: Vec::new(),
            author: None,
        });
        match &drafted {
            Some(change) if change.pushed => self.publish_pull_request(&mut outcome, true).await,
            Some(change) => outcome.pull_request = Some(not_pushed(&outcome, &change.push_error)),
            None => {}
        }
        // Stored before any channel is tried: a notifier that hangs or a kill here loses
        // nothing (the next start resends).
        self.save(&outcome, &[]).await?;
        let results = self.send_notice(&outcome, &approval, None).await?;
        if let Some(delivery) = outcome.delivery.as_mut() {
            delivery.notifications = results;
        }
        self.save(&outcome, &[]).await?;
        Ok(outcome)
    }

    /// Commits a held change and pushes it, for its draft pull request; the work tree
    /// stays for the approval. The change row as stored afterwards.
    async fn commit_held(
        &self,
        outcome: &TaskOutcome,
        mut change: CodeChange,
    ) -> Result<CodeChange, DeliveryError> {
        let id = &outcome.task_id;
        let worktree = PathBuf::from(&outcome.worktree);
        let identity = self.identity(&worktree).await?;
        let author = CommitAuthor {
            name: identity.name,
            email: identity.email,
        };
        let vcs = &self.ports.vcs;
        change.commit = vcs
            .commit(
                &worktree,
                &self.message(outcome),
                Some(&author),
                &self.excluded(outcome),
            )
            .await?;
        let mut audit = vec![self.entry(
            id,
            AuditAction::Committed,
            format!(
                "{} (held: for its draft pull request)",
                change.commit.as_deref().unwrap_or("nothing to commit")
            ),
        )];
        if change.commit.is_some() {
            match vcs
                .push(&worktree, &self.settings.remote, &outcome.branch)
                .await
            {
                Ok(()) => {
                    change.pushed = true;
                    audit.push(self.entry(id, AuditAction::Pushed, &self.settings.remote));
                }
                Err(e) => {
                    change.push_error = Some(e.to_string());
                    audit.push(self.entry(id, AuditAction::PushFailed, e.to_string()));
                }
            }
        }
        self.ports.store.save_change(&change, &audit).await?;
        Ok(change)
    }

    /// Removes the task's work tree (and its branch when `branch_too`); returns the audit
    /// entries. Failures are recorded, not raised: the decision already stands.
    pub(super) async fn remove_worktree(
        &self,
        outcome: &TaskOutcome,
        branch_too: bool,
    ) -> Vec<AuditEntry> {
        let id = &outcome.task_id;
        let vcs = &self.ports.vcs;
        let mut done = Vec::new();
        let mut failed = Vec::new();
        let worktree = PathBuf::from(&outcome.worktree);
        let present = vcs
            .worktrees(&self.repo)
            .await
            .map(|trees| trees.iter().any(|t| t.path == worktree))
            .unwrap_or(true);
        if present && !outcome.worktree.is_empty() {
            match vcs.remove_worktree(&self.repo, &worktree).await {
                Ok(()) => done.push(format!("work tree {} removed", outcome.worktree)),
                Err(e) => failed.push(e.to_string()),
            }
        }
        if branch_too {
            match vcs.delete_branch(&self.repo, &outcome.branch).await {
                Ok(true) => done.push(format!("branch {} deleted", outcome.branch)),
                Ok(false) => {}
                Err(e) => failed.push(e.to_string()),
            }
        }
        let mut audit = Vec::new();
        if !done.is_empty() {
            audit.push(self.entry(id, AuditAction::CleanedUp, done.join("; ")));
        }
        if !failed.is_empty() {
            audit.push(self.entry(
                id,
                AuditAction::CleanedUp,
                format!("cleanup failed: {}", failed.join("; ")),
            ));
        }
        audit
    }
}

/// The report's pull request when the branch did not reach the forge.
fn not_pushed(
    outcome: &TaskOutcome,
    push_error: &Option<String>,
) -> forge_domain::forges::PullRequestDelivery {
    forge_domain::forges::PullRequestDelivery {
        opened: outcome.pull_request.as_ref().and_then(|p| p.opened.clone()),
        error: Some(format!(
            "not opened: the branch was not pushed ({})",
            push_error.as_deref().unwrap_or("nothing to push")
        )),
        closes: outcome.pull_request.as_ref().and_then(|p| p.closes),
        feedback: outcome
            .pull_request
            .as_ref()
            .and_then(|p| p.feedback.clone()),
    }
}

/// A change forge delivers (or holds) is undone by `task rollback`, which knows whether to
/// revert a merged commit, delete the branch or discard the held work tree; the pipeline's
/// plain discard command would leave the store's rows behind.
fn undone_by_forge(mut outcome: TaskOutcome) -> TaskOutcome {
    outcome.rollback = format!("forge-code-agent task rollback {}", outcome.task_id);
    outcome
}
