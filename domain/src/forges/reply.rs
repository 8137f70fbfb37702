//! What forge answers on the pull request once a follow-up is delivered: the new commit on
//! the branch and how validation went (or why no commit was made), in the thread that
//! asked for it.

use std::fmt::Write as _;

use crate::task::{TaskOutcome, TaskStatus};

/// The reply to the comment, review or check a follow-up answered.
pub fn followup_reply(outcome: &TaskOutcome) -> String {
    let commit = outcome
        .delivery
        .as_ref()
        .filter(|d| d.pushed)
        .and_then(|d| d.commit.as_deref());
    let mut text = match commit {
        Some(sha) => format!(
            "forge pushed {sha} onto `{}` (task `{}`).",
            outcome.branch, outcome.task_id
        ),
        None => format!(
            "forge made no commit for this (task `{}`, {}).",
            outcome.task_id, outcome.status
        ),
    };
    match outcome.validation() {
        Some(v) => {
            let steps: Vec<String> = v
                .steps
                .iter()
                .map(|s| {
                    let mark = if s.exit_code == Some(0) { "✓" } else { "✗" };
                    format!("{mark} {}", s.name.as_str())
                })
                .collect();
            let _ = write!(
                text,
                " Validation {}: {}.",
                if v.passed { "passed" } else { "failed" },
                if steps.is_empty() {
                    "no steps".to_owned()
                } else {
                    steps.join(", ")
                }
            );
        }
        None => text.push_str(" No validation ran."),
    }
    if outcome.status == TaskStatus::PendingApproval {
        text.push_str(" The change is held for approval (its risk is at or over the threshold).");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::report::tests::sample;

    #[test]
    fn the_reply_names_the_commit_and_the_validation() {
        let mut outcome = sample();
        outcome.branch = "forge/q-1".into();
        outcome.delivery = Some(crate::task::Delivery {
            decision: crate::task::DeliveryDecision::Committed,
            branch: "forge/q-1".into(),
            commit: Some("0123abc".into()),
            pushed: true,
            push_error: None,
            delivered_by_another_attempt: None,
            approval_id: None,
            notifications: Vec::new(),
            author: None,
        });
        let pushed = followup_reply(&outcome);
        outcome.delivery = None;
        outcome.status = TaskStatus::Failed;
        let none = followup_reply(&outcome);
        insta::assert_snapshot!("followup_reply", format!("{pushed}\n{none}"));
    }
}
