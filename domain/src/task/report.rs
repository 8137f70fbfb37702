//! The pipeline's result: what `task run --json` prints, `report.json` holds and the delivery
//! step consumes.

use serde::{Deserialize, Serialize};

use super::change::FileChange;
use super::cycle::Cycle;
use super::delivery::Delivery;
use super::finding::ReviewReport;
use super::id::TaskId;
use super::kind::TaskType;
use super::risk_score::RiskScore;
use super::status::{StopReason, TaskStatus};
use super::validation::{StepTests, ValidationReport};
use crate::ids::ProviderId;
use crate::usage::Usage;

/// One task's outcome. Field names are the report's JSON names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskOutcome {
    pub task_id: TaskId,
    pub status: TaskStatus,
    pub stop_reason: StopReason,
    pub provider: ProviderId,
    /// The task text as given; the delivery step's commit title.
    pub task: String,
    pub task_type: TaskType,
    /// The model asked for (`fix_model` for FIX); `None` when the provider's default.
    pub model: Option<String>,
    pub branch: String,
    pub worktree: String,
    pub cycles: Vec<Cycle>,
    /// The validation commands on the untouched worktree; a failure here is not the agent's.
    pub baseline: Option<ValidationReport>,
    /// Per step that fails now or failed on the baseline, the last validation's tests
    /// against the baseline: already failing, newly failing (the change's), fixed.
    #[serde(default)]
    pub tests: Vec<StepTests>,
    pub review: ReviewReport,
    pub risk: RiskScore,
    pub files: Vec<FileChange>,
    /// Summed over every cycle.
    pub cost_usd: f64,
    /// Summed over every cycle.
    pub usage: Usage,
    pub duration_ms: u64,
    /// The shell command that discards the change.
    pub rollback: String,
    /// The agent's last text, for the commit message (redacted by the caller).
    #[serde(default)]
    pub summary: Option<String>,
    /// What went wrong when `stop_reason` is `error` (or a cancel's detail).
    #[serde(default)]
    pub error: Option<String>,
    /// Filled by the delivery step.
    #[serde(default)]
    pub delivery: Option<Delivery>,
    /// The files the repository map ranked first for the task (most relevant first), as
    /// the instruction file showed them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_files: Vec<String>,
    /// How the agent and its code were confined: `off`, or `on (<mechanism>; <network>)`
    /// (issue 31) — what the run results' `sandbox` says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The report's sandbox section: everything the sandbox refused the agent over the
    /// task's runs (each refused connection), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_denied: Vec<crate::sandbox::SandboxDenial>,
    /// The task's pull request when it is delivered as one (issue 39): `{url, number,
    /// state, draft}`, or why it could not be opened yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<crate::forges::PullRequestDelivery>,
    /// The agent session's travel (issue 39): a follow-up's parent session resumed here or
    /// not (and why), this task's session kept for its follow-ups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_travel: Option<super::travel::SessionTravel>,
}

/// The same value under the name the issue's report section uses.
pub type TaskReport = TaskOutcome;

impl TaskOutcome {
    /// The last validation that ran, i.e. the state of the change as delivered.
    pub fn validation(&self) -> Option<&ValidationReport> {
        self.cycles.iter().rev().find_map(|c| c.validation.as_ref())
    }

    /// Records the delivery step's decision; the task's status becomes the decision.
    pub fn deliver(&mut self, delivery: Delivery) {
        self.status = delivery.decision.status();
        self.delivery = Some(delivery);
    }
}

/// Sum of cost and usage over the cycles.
pub fn totals(cycles: &[Cycle]) -> (f64, Usage) {
    cycles
        .iter()
        .fold((0.0, Usage::default()), |(cost, usage), c| {
            (cost + c.cost_usd, usage.saturating_add(&c.usage))
        })
}

/// `git worktree remove --force '<worktree>' && git branch -D '<branch>'`, each argument
/// single-quoted for a POSIX shell.
pub fn discard_command(worktree: &str, branch: &str) -> String {
    format!(
        "git worktree remove --force {} && git branch -D {}",
        shell_quote(worktree),
        shell_quote(branch)
    )
}

/// POSIX single-quote: `'` inside becomes `'\''`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ids::{RunId, SessionId};
    use crate::task::change::ChangeKind;
    use crate::task::cycle::CycleKind;
    use crate::task::delivery::{DeliveryDecision, NotificationResult};
    use crate::task::finding::{Finding, Severity};
    use crate::task::risk_score::RiskLevel;
    use crate::task::validation::{StepName, ValidationStep};

    fn step(name: StepName, exit: i32, tail: &str) -> ValidationStep {
        ValidationStep {
            name,
            command: "sh test.sh".into(),
            exit_code: Some(exit),
            duration_ms: 12,
            output_tail: tail.into(),
            timed_out: false,
            cache: None,
            failed_tests: None,
            sandbox_denied: Vec::new(),
        }
    }

    pub(crate) fn sample() -> TaskOutcome {
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 20,
            ..Usage::default()
        };
        let cycles = vec![
            Cycle {
                kind: CycleKind::Main,
                run_id: Some(RunId::new("run-1").unwrap()),
                session_id: Some(SessionId::new("sess-1").unwrap()),
                cost_usd: 0.25,
                usage,
                validation: Some(ValidationReport::from_steps(vec![step(
                    StepName::Test,
                    1,
                    "FAIL: add(2,2) = 5",
                )])),
                fresh_session: false,
                sandbox_denied: Vec::new(),
            },
            Cycle {
                kind: CycleKind::ValidationFix,
                run_id: Some(RunId::new("run-2").unwrap()),
                session_id: Some(SessionId::new("sess-1").unwrap()),
                cost_usd: 0.5,
                usage,
                validation: Some(ValidationReport::from_steps(vec![step(
                    StepName::Test,
                    0,
                    "ok",
                )])),
                fresh_session: false,
                sandbox_denied: Vec::new(),
            },
        ];
        let (cost_usd, usage) = totals(&cycles);
        let id = TaskId::new("t-1").unwrap();
        TaskOutcome {
            branch: id.branch(),
            task_id: id,
            status: TaskStatus::Validated,
            stop_reason: StopReason::Validated,
            provider: ProviderId::new("claude").unwrap(),
            task: "Fix the failing add test".into(),
            task_type: TaskType::Fix,
            model: Some("haiku".into()),
            worktree: "/repo/.forgecode/worktrees/t-1".into(),
            cycles,
            baseline: Some(ValidationReport::from_steps(vec![step(
                StepName::Test,
                1,
                "FAIL: add(2,2) = 5",
            )])),
            tests: vec![StepTests {
                step: StepName::Test,
                already_failing: vec![],
                newly_failing: vec![],
                fixed: vec!["tests::add".into()],
                regression: false,
                reason: None,
            }],
            review: ReviewReport {
                findings: vec![Finding {
                    rule: "change.lockfile".into(),
                    severity: Severity::Info,
                    path: "Cargo.lock".into(),
                    line: None,
                    message: "lockfile changed".into(),
                }],
            },
            risk: RiskScore {
                score: 1,
                level: RiskLevel::Low,
                reasons: vec!["+1 lockfile changed (Cargo.lock)".into()],
            },
            files: vec![FileChange {
                path: "src/add.rs".into(),
                change: ChangeKind::Modified,
                added: 1,
                removed: 1,
            }],
            cost_usd,
            usage,
            duration_ms: 1234,
            rollback: discard_command("/repo/.forgecode/worktrees/t-1", "forge/t-1"),
            summary: Some("Fixed add.".into()),
            error: None,
            delivery: None,
            sandbox_denied: Vec::new(),
            context_files: Vec::new(),
            sandbox: None,
            pull_request: None,
            session_travel: None,
        }
    }

    #[test]
    fn report_json_has_the_issue_field_names() {
        insta::assert_json_snapshot!("report_validated", sample());
    }

    #[test]
    fn delivery_sets_the_status_and_round_trips() {
        let mut o = sample();
        o.deliver(Delivery {
            decision: DeliveryDecision::PendingApproval,
            branch: "forge/t-1".into(),
            commit: None,
            pushed: false,
            push_error: None,
            delivered_by_another_attempt: None,
            approval_id: Some("a-1".into()),
            notifications: vec![NotificationResult {
                channel: "webhook".into(),
                ok: false,
                error: Some("HTTP 500".into()),
            }],
            author: None,
        });
        assert_eq!(o.status, TaskStatus::PendingApproval);
        insta::assert_json_snapshot!("report_pending_approval_delivery", o.delivery);
        let back: TaskOutcome = serde_json::from_str(&serde_json::to_string(&o).unwrap()).unwrap();
        assert_eq!(back, o);
        assert!(o.validation().unwrap().passed);
    }

    #[test]
    fn totals_sum_every_cycle_and_quoting_survives_quotes() {
        let o = sample();
        assert!((o.cost_usd - 0.75).abs() < 1e-9);
        assert_eq!(o.usage.input_tokens, 200);
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
