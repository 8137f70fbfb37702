//! Where a task ended (`status`) and why its loop stopped (`stop_reason`).

use serde::{Deserialize, Serialize};

/// The task's status. The pipeline ends in one of the first three; the delivery step turns
/// a validated task into one of the last four.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The change builds, passes the validation steps and the review found nothing critical
    /// that a correction could not remove.
    Validated,
    /// The change passed every check there was, but there were none: no validation step was
    /// configured or detected. Delivered like a validated change (the risk score counts it),
    /// unless `[task] require_validation` refuses it before the agent runs.
    NotValidated,
    /// The agent or the validation failed and no guardrail stopped it: no changes, an error,
    /// or validation still failing after the loop ended.
    Failed,
    /// A guardrail ended the loop: cost ceiling, timeout, cycle limit, cancel.
    Stopped,
    Committed,
    PendingApproval,
    Rejected,
    RolledBack,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Validated => "validated",
            TaskStatus::NotValidated => "not_validated",
            TaskStatus::Failed => "failed",
            TaskStatus::Stopped => "stopped",
            TaskStatus::Committed => "committed",
            TaskStatus::PendingApproval => "pending_approval",
            TaskStatus::Rejected => "rejected",
            TaskStatus::RolledBack => "rolled_back",
        }
    }

    /// A pipeline that ended here has a change the delivery step may commit or hold:
    /// validated, or passed with no validation step to run.
    pub fn is_deliverable(self) -> bool {
        matches!(self, TaskStatus::Validated | TaskStatus::NotValidated)
    }

    /// The words a person reads: `not validated (no steps)` for a change no step checked.
    pub fn label(self) -> &'static str {
        match self {
            TaskStatus::NotValidated => "not validated (no steps)",
            other => other.as_str(),
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the correction loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Validation passed and the review left no critical finding.
    Validated,
    /// The agent finished with a change and the review left no critical finding, but no
    /// validation step ran: nothing was configured or detected.
    NoSteps,
    /// The agent changed no file.
    NoChanges,
    /// Cumulative cost reached `max_total_cost_usd`.
    CostCeiling,
    /// Total elapsed time reached the task timeout.
    Timeout,
    /// The correction loop used all its cycles and validation still fails.
    MaxCycles,
    /// Review-fix cycles used up and a critical finding remains; the outcome carries it to
    /// the delivery step (which will hold it for approval).
    ReviewFindings,
    /// The user (Ctrl-C) or the caller cancelled.
    Cancelled,
    /// A single agent run hit its own per-run budget (`max_budget_usd`).
    RunBudget,
    /// A single agent run hit `max_turns`.
    MaxTurns,
    /// Anything else: the agent run failed, a validation command is missing, a git step failed.
    Error,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Validated => "validated",
            StopReason::NoSteps => "no_steps",
            StopReason::NoChanges => "no_changes",
            StopReason::CostCeiling => "cost_ceiling",
            StopReason::Timeout => "timeout",
            StopReason::MaxCycles => "max_cycles",
            StopReason::ReviewFindings => "review_findings",
            StopReason::Cancelled => "cancelled",
            StopReason::RunBudget => "run_budget",
            StopReason::MaxTurns => "max_turns",
            StopReason::Error => "error",
        }
    }

    /// The pipeline's status for a loop that stopped for this reason.
    pub fn status(self) -> TaskStatus {
        match self {
            StopReason::Validated | StopReason::ReviewFindings => TaskStatus::Validated,
            StopReason::NoSteps => TaskStatus::NotValidated,
            StopReason::NoChanges | StopReason::Error | StopReason::MaxCycles => TaskStatus::Failed,
            StopReason::CostCeiling
            | StopReason::Timeout
            | StopReason::Cancelled
            | StopReason::RunBudget
            | StopReason::MaxTurns => TaskStatus::Stopped,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_serde_and_reasons_map_to_statuses() {
        for (reason, status) in [
            (StopReason::Validated, TaskStatus::Validated),
            (StopReason::ReviewFindings, TaskStatus::Validated),
            (StopReason::NoSteps, TaskStatus::NotValidated),
            (StopReason::NoChanges, TaskStatus::Failed),
            (StopReason::MaxCycles, TaskStatus::Failed),
            (StopReason::Error, TaskStatus::Failed),
            (StopReason::CostCeiling, TaskStatus::Stopped),
            (StopReason::Timeout, TaskStatus::Stopped),
            (StopReason::Cancelled, TaskStatus::Stopped),
            (StopReason::RunBudget, TaskStatus::Stopped),
            (StopReason::MaxTurns, TaskStatus::Stopped),
        ] {
            assert_eq!(reason.status(), status, "{reason}");
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
            assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
        }
        assert_eq!(
            serde_json::to_value(TaskStatus::PendingApproval).unwrap(),
            "pending_approval"
        );
        assert_eq!(TaskStatus::RolledBack.as_str(), "rolled_back");
    }
}
