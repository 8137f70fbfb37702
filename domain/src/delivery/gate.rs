//! The delivery gate: a deterministic rule, no judgement call.
//!
//! A change whose risk score is below the threshold is committed (and pushed when enabled);
//! one at or above it waits for a person. A task that did not validate is never delivered; one with no validation step
//! to run is, by its score.

use serde::{Deserialize, Serialize};

use crate::task::TaskStatus;

/// The seed's threshold: risk < 3 commits.
pub const DEFAULT_RISK_THRESHOLD: u8 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Commit now.
    Commit,
    /// Hold for approval.
    HoldForApproval,
    /// Nothing to deliver: the pipeline did not end `validated`.
    NotDeliverable,
}

/// What to do with a task that ended in `status` with risk `score`. A change no validation
/// step checked (`not_validated`) goes through the same rule: its score carries the +2 of
/// an unvalidated change.
pub fn gate(status: TaskStatus, score: u8, threshold: u8) -> Gate {
    if !status.is_deliverable() {
        return Gate::NotDeliverable;
    }
    if score < threshold {
        Gate::Commit
    } else {
        Gate::HoldForApproval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(status: TaskStatus, score: u8, threshold: u8, expected: Gate) {
        assert_eq!(
            gate(status, score, threshold),
            expected,
            "{status:?} score {score} threshold {threshold}"
        );
    }

    #[test]
    fn the_gate_commits_below_the_threshold_only() {
        use TaskStatus::*;
        let t = DEFAULT_RISK_THRESHOLD;
        check(Validated, 0, t, Gate::Commit);
        check(Validated, 2, t, Gate::Commit);
        // At the threshold: held (the rule is strictly below).
        check(Validated, 3, t, Gate::HoldForApproval);
        check(Validated, 10, t, Gate::HoldForApproval);
        // A threshold of 0 holds everything; 11 commits everything a score can say.
        check(Validated, 0, 0, Gate::HoldForApproval);
        check(Validated, 10, 11, Gate::Commit);
        // No validation step: the same rule on its (already raised) score.
        check(NotValidated, 2, t, Gate::Commit);
        check(NotValidated, 3, t, Gate::HoldForApproval);
        check(NotValidated, 0, 0, Gate::HoldForApproval);
        // Not validated: never delivered, whatever the score.
        check(Failed, 0, t, Gate::NotDeliverable);
        check(Stopped, 0, t, Gate::NotDeliverable);
        check(Committed, 0, t, Gate::NotDeliverable);
    }
}
