//! The audit log: who did what to a task, and when. Append-only: rows are never updated.

use serde::{Deserialize, Serialize};

use crate::task::TaskId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    TaskStarted,
    Cycle,
    Review,
    Outcome,
    Committed,
    Pushed,
    PushFailed,
    ApprovalRequested,
    Notified,
    NotifyFailed,
    Approved,
    Rejected,
    RolledBack,
    Reconciled,
    CleanedUp,
    /// The task's pull request was opened or updated (issue 39).
    PullRequest,
    /// Opening or updating it failed; the branch stays pushed.
    PullRequestFailed,
}

impl AuditAction {
    pub const ALL: [AuditAction; 17] = [
        AuditAction::TaskStarted,
        AuditAction::Cycle,
        AuditAction::Review,
        AuditAction::Outcome,
        AuditAction::Committed,
        AuditAction::Pushed,
        AuditAction::PushFailed,
        AuditAction::ApprovalRequested,
        AuditAction::Notified,
        AuditAction::NotifyFailed,
        AuditAction::Approved,
        AuditAction::Rejected,
        AuditAction::RolledBack,
        AuditAction::Reconciled,
        AuditAction::CleanedUp,
        AuditAction::PullRequest,
        AuditAction::PullRequestFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::TaskStarted => "task_started",
            AuditAction::Cycle => "cycle",
            AuditAction::Review => "review",
            AuditAction::Outcome => "outcome",
            AuditAction::Committed => "committed",
            AuditAction::Pushed => "pushed",
            AuditAction::PushFailed => "push_failed",
            AuditAction::ApprovalRequested => "approval_requested",
            AuditAction::Notified => "notified",
            AuditAction::NotifyFailed => "notify_failed",
            AuditAction::Approved => "approved",
            AuditAction::Rejected => "rejected",
            AuditAction::RolledBack => "rolled_back",
            AuditAction::Reconciled => "reconciled",
            AuditAction::CleanedUp => "cleaned_up",
            AuditAction::PullRequest => "pull_request",
            AuditAction::PullRequestFailed => "pull_request_failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == text)
    }
}

/// One audit row. `seq` is the store's order (assigned on append).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    #[serde(default)]
    pub seq: u64,
    pub task_id: TaskId,
    pub at_ms: u64,
    /// Who: `forge` for the pipeline itself, or the person who decided (`$USER`).
    pub actor: String,
    pub action: AuditAction,
    /// Free text: the commit id, the error, the channel…
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl AuditEntry {
    pub fn new(
        task_id: TaskId,
        at_ms: u64,
        actor: impl Into<String>,
        action: AuditAction,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            seq: 0,
            task_id,
            at_ms,
            actor: actor.into(),
            action,
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_round_trips_through_its_text() {
        for action in AuditAction::ALL {
            assert_eq!(AuditAction::parse(action.as_str()), Some(action));
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{}\"", action.as_str()));
        }
        assert_eq!(AuditAction::parse("deleted"), None);
    }
}
