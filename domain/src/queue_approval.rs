//! Approvals through the queue: a queued task whose change the gate held waits in the cache
//! of the worker that ran it; anyone with the queue decides it once, and that worker
//! carries the decision out (commit and push, or remove) and records the outcome.
//!
//! A row moves `pending` → `approved | rejected` once (the decision), then gets its
//! outcome once (what the holding worker did). Until then a decided approval is waiting
//! for its worker, and says so.

use serde::{Deserialize, Serialize};

use crate::delivery::{ApprovalId, ApprovalState, Decision};
use crate::task::TaskId;

/// A held change as the queue knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueApproval {
    pub approval_id: ApprovalId,
    pub task_id: TaskId,
    /// The worker whose repository cache holds the change (only it can carry it out).
    pub worker: String,
    pub risk_score: u8,
    pub reasons: Vec<String>,
    pub files: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The task asked for `--push`: an approval pushes too.
    pub push: bool,
    pub state: ApprovalState,
    /// When it was recorded (Unix ms, the queue's clock); ignored when recording.
    #[serde(default)]
    pub requested_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at_ms: Option<u64>,
    /// What the holding worker did with the decision; `None` while it has not yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ApprovalOutcome>,
}

/// What carrying a decision out came to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ApprovalOutcome {
    /// Done: the local command's report (`approvals approve|reject --json`, with its
    /// `delivery`).
    Done { report: serde_json::Value },
    /// The local command failed; the change stays where it was.
    Failed { error: String },
}

/// A decision asked for through the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueDecision {
    pub decision: Decision,
    /// Who decided (the deciding machine's user), for the record.
    pub by: String,
    pub reason: Option<String>,
    /// An approval pushes even if the task did not ask to (`approvals approve --push`).
    pub push: bool,
}

/// What a decision through the queue came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Decided {
    /// This decision stands; the approval as it now is.
    Now(QueueApproval),
    /// Another decision came first; the approval as that one left it.
    Already(QueueApproval),
}

impl QueueApproval {
    /// Decided, and its worker has not carried it out yet.
    pub fn awaits_worker(&self) -> bool {
        self.state != ApprovalState::Pending && self.outcome.is_none()
    }

    /// The state as a person reads it: `pending`, `approved (waiting for worker w1)`,
    /// `approved, delivered` (pushed), `approved, committed` (in the worker's cache, not
    /// pushed), `rejected, removed`, `approved, failed: …`.
    pub fn status_text(&self) -> String {
        let state = self.state.as_str();
        match (&self.outcome, self.state) {
            (_, ApprovalState::Pending) => state.to_owned(),
            (None, _) => format!("{state} (waiting for worker {})", self.worker),
            (Some(ApprovalOutcome::Done { report }), ApprovalState::Approved) => {
                let pushed = report.pointer("/delivery/pushed") == Some(&true.into());
                format!(
                    "{state}, {}",
                    if pushed { "delivered" } else { "committed" }
                )
            }
            (Some(ApprovalOutcome::Done { .. }), _) => format!("{state}, removed"),
            (Some(ApprovalOutcome::Failed { error }), _) => format!("{state}, failed: {error}"),
        }
    }
}

/// The approval a finished task's report (`task run --json`'s object) asks for: its
/// change is held (`delivery.decision` `pending_approval`, with an approval id). `None`
/// for any other report.
pub fn held_approval(
    task_id: &TaskId,
    worker: &str,
    push: bool,
    report: &serde_json::Value,
) -> Option<QueueApproval> {
    let delivery = report.get("delivery")?;
    if delivery.get("decision")?.as_str()? != "pending_approval" {
        return None;
    }
    let approval_id = ApprovalId::new(delivery.get("approval_id")?.as_str()?).ok()?;
    let texts = |value: Option<&serde_json::Value>, field: Option<&str>| -> Vec<String> {
        value
            .and_then(serde_json::Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| field.map_or(Some(item), |f| item.get(f))?.as_str())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let risk = report.get("risk");
    Some(QueueApproval {
        approval_id,
        task_id: task_id.clone(),
        worker: worker.to_owned(),
        risk_score: risk
            .and_then(|r| r.get("score"))
            .and_then(serde_json::Value::as_u64)
            .map_or(0, |s| u8::try_from(s).unwrap_or(u8::MAX)),
        reasons: texts(risk.and_then(|r| r.get("reasons")), None),
        files: texts(report.get("files"), Some("path")),
        summary: report
            .get("summary")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        push,
        state: ApprovalState::Pending,
        requested_at_ms: 0,
        decided_by: None,
        reason: None,
        decided_at_ms: None,
        outcome: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> TaskId {
        TaskId::new(s).unwrap_or_else(|e| panic!("{e}"))
    }

    fn held_report() -> serde_json::Value {
        serde_json::json!({
            "status": "pending_approval",
            "risk": {"score": 6, "level": "high", "reasons": ["+6 sensitive file .env"]},
            "files": [{"path": ".env", "change": "added"}, {"path": "a.txt"}],
            "summary": "Wrote the answer.",
            "delivery": {"decision": "pending_approval", "branch": "forge/t1",
                         "approval_id": "ap-t1", "pushed": false}
        })
    }

    #[test]
    fn a_held_report_asks_for_an_approval() {
        let held = held_approval(&id("t1"), "w1", true, &held_report());
        let held = held.unwrap_or_else(|| panic!("no approval"));
        assert_eq!(held.approval_id.as_str(), "ap-t1");
        assert_eq!(held.worker, "w1");
        assert_eq!(held.risk_score, 6);
        assert_eq!(held.reasons, ["+6 sensitive file .env"]);
        assert_eq!(held.files, [".env", "a.txt"]);
        assert_eq!(held.summary.as_deref(), Some("Wrote the answer."));
        assert!(held.push);
        assert_eq!(held.state, ApprovalState::Pending);
        assert!(!held.awaits_worker());
    }

    #[test]
    fn other_reports_ask_for_nothing() {
        let with = |path: &str, value: serde_json::Value| {
            let mut report = held_report();
            if let Some(slot) = report.pointer_mut(path) {
                *slot = value;
            }
            report
        };
        // Look-alikes: committed, no delivery, no or a bad approval id, decision as status.
        for report in [
            with("/delivery/decision", "committed".into()),
            with("/delivery", serde_json::Value::Null),
            with("/delivery/approval_id", serde_json::Value::Null),
            with("/delivery/approval_id", "ap t1".into()),
            serde_json::json!({"status": "pending_approval"}),
        ] {
            assert_eq!(
                held_approval(&id("t1"), "w1", false, &report),
                None,
                "{report}"
            );
        }
    }

    #[test]
    fn the_status_text_says_who_it_waits_for_and_how_it_ended() {
        let base = held_approval(&id("t1"), "w1", false, &held_report())
            .unwrap_or_else(|| panic!("no approval"));
        let check = |state: ApprovalState, outcome: Option<ApprovalOutcome>, expected: &str| {
            let a = QueueApproval {
                state,
                outcome: outcome.clone(),
                ..base.clone()
            };
            assert_eq!(a.status_text(), expected);
            let waits = state != ApprovalState::Pending && outcome.is_none();
            assert_eq!(a.awaits_worker(), waits, "{expected}");
        };
        let done = Some(ApprovalOutcome::Done {
            report: serde_json::json!({"delivery": {"decision": "committed", "pushed": true}}),
        });
        let committed = Some(ApprovalOutcome::Done {
            report: serde_json::json!({"delivery": {"decision": "committed", "pushed": false}}),
        });
        let failed = Some(ApprovalOutcome::Failed {
            error: "push refused".into(),
        });
        check(ApprovalState::Pending, None, "pending");
        check(
            ApprovalState::Approved,
            None,
            "approved (waiting for worker w1)",
        );
        check(
            ApprovalState::Rejected,
            None,
            "rejected (waiting for worker w1)",
        );
        check(ApprovalState::Approved, done.clone(), "approved, delivered");
        check(ApprovalState::Approved, committed, "approved, committed");
        check(ApprovalState::Rejected, done, "rejected, removed");
        check(
            ApprovalState::Approved,
            failed,
            "approved, failed: push refused",
        );
    }

    #[test]
    fn outcomes_round_trip_tagged() {
        for outcome in [
            ApprovalOutcome::Done {
                report: serde_json::json!({"pushed": true}),
            },
            ApprovalOutcome::Failed { error: "x".into() },
        ] {
            let text = serde_json::to_string(&outcome).unwrap_or_default();
            assert!(text.starts_with("{\"result\":"), "{text}");
            let back: ApprovalOutcome =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back, outcome);
        }
    }
}
