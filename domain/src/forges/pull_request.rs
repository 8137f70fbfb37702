//! A task's pull request: what forge keeps of it, and its title and body rendered from the
//! task report — kept current on every later cycle, so the body is always the report of
//! what the branch holds now.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::redact::Redactor;
use crate::task::TaskOutcome;

/// A pull request's state as the forge reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PullRequestState {
    Open,
    Closed,
    Merged,
}

impl PullRequestState {
    pub fn as_str(self) -> &'static str {
        match self {
            PullRequestState::Open => "open",
            PullRequestState::Closed => "closed",
            PullRequestState::Merged => "merged",
        }
    }
}

/// What `GET /v1/tasks/{id}` carries as `pull_request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestInfo {
    pub url: String,
    pub number: u64,
    pub state: PullRequestState,
    pub draft: bool,
}

/// A task's pull request as its report keeps it: the forge's pull request once opened, why
/// the last attempt to open or update it failed (the branch stays pushed; a retry completes
/// it), and the issue it closes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PullRequestDelivery {
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub opened: Option<PullRequestInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closes: Option<u64>,
    /// How the repository's team steers forge, as its `forge.toml` said when the pull
    /// request was delivered: `serve` takes the webhooks without the repository at hand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<FeedbackWords>,
}

/// A repository's `[delivery] mention` (the handle a comment mentions, without `@`) and
/// `issue_label` (the label that turns an issue into a task); `forge` both by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedbackWords {
    pub mention: String,
    pub issue_label: String,
}

impl Default for FeedbackWords {
    fn default() -> Self {
        Self {
            mention: super::DEFAULT_HANDLE.to_owned(),
            issue_label: super::DEFAULT_HANDLE.to_owned(),
        }
    }
}

/// The title, body and draft flag of a task's pull request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequestBody {
    pub title: String,
    pub body: String,
    /// A held change (risk at or over the threshold) opens as a draft.
    pub draft: bool,
}

/// The marker forge finds its own pull request by (an HTML comment the forge does not
/// show): a delivery retried after a lost answer updates the pull request it opened.
pub fn marker(task_id: &str) -> String {
    format!("<!-- forge-task: {task_id} -->")
}

const TITLE_MAX: usize = 100;
/// A step's output is the agent's and the tools'; a pull request shows its end only.
const OUTPUT_TAIL_LINES: usize = 15;

/// Renders the pull request of `outcome`. `held` is the gate's decision (risk at or over the
/// threshold: a draft, with the reasons and how to approve it); `closes` the issue the task
/// came from (`Closes #N`). Every known secret and token shape is masked by `redactor`
/// before the text leaves forge.
pub fn render(
    outcome: &TaskOutcome,
    held: bool,
    closes: Option<u64>,
    redactor: &Redactor,
) -> PullRequestBody {
    let title = redactor.redact(&title(outcome)).into_owned();
    let body = redactor.redact(&body(outcome, held, closes)).into_owned();
    PullRequestBody {
        title,
        body,
        draft: held,
    }
}

fn title(outcome: &TaskOutcome) -> String {
    let first = outcome
        .task
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    // The same subject the commit has: `<type>: <title>`.
    let prefix = outcome.task_type.as_str();
    let text = format!("{prefix}: {}", first.trim());
    if text.chars().count() <= TITLE_MAX {
        return text;
    }
    let cut: String = text.chars().take(TITLE_MAX - 1).collect();
    format!("{}…", cut.trim_end())
}

fn body(o: &TaskOutcome, held: bool, closes: Option<u64>) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "{}", marker(o.task_id.as_str()));
    if let Some(issue) = closes {
        let _ = writeln!(b, "Closes #{issue}\n");
    }
    if held {
        let _ = writeln!(
            b,
            "> [!WARNING]\n> **Held for approval**: risk {}/10 ({}) is at or over the threshold. \
             This draft becomes ready for review when a person approves it \
             (`forge-code-agent approvals approve`, the board, or an approving review by a \
             user with write permission).\n",
            o.risk.score,
            o.risk.level.as_str()
        );
    }
    let _ = writeln!(b, "## Task\n\n{}\n", o.task.trim());
    if let Some(summary) = o.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        let _ = writeln!(b, "## Summary\n\n{}\n", summary.trim());
    }
    validation_section(&mut b, o);
    tests_section(&mut b, o);
    review_section(&mut b, o);
    let _ = writeln!(
        b,
        "## Risk: {}/10 ({})\n",
        o.risk.score,
        o.risk.level.as_str()
    );
    for reason in &o.risk.reasons {
        let _ = writeln!(b, "- {reason}");
    }
    if o.risk.reasons.is_empty() {
        let _ = writeln!(b, "- nothing raised it");
    }
    let _ = writeln!(b, "\n## Run\n\n| | |\n|---|---|");
    let _ = writeln!(b, "| task | `{}` |", o.task_id);
    let _ = writeln!(b, "| type | {} |", o.task_type.as_str());
    let agent = match &o.model {
        Some(model) => format!("{} ({model})", o.provider),
        None => o.provider.to_string(),
    };
    let _ = writeln!(b, "| agent | {agent} |");
    if let Some(session) = o.cycles.iter().rev().find_map(|c| c.session_id.as_ref()) {
        let _ = writeln!(b, "| session | `{session}` |");
    }
    let _ = writeln!(b, "| cycles | {} |", o.cycles.len());
    let _ = writeln!(b, "| cost | ${:.4} |", o.cost_usd);
    let _ = writeln!(
        b,
        "| tokens | {} in, {} out |",
        o.usage.input_tokens, o.usage.output_tokens
    );
    let _ = writeln!(b, "| files | {} |", o.files.len());
    b
}

fn validation_section(b: &mut String, o: &TaskOutcome) {
    let _ = writeln!(b, "## Validation\n");
    let Some(validation) = o.validation() else {
        let _ = writeln!(b, "No validation ran.\n");
        return;
    };
    if validation.steps.is_empty() {
        let _ = writeln!(b, "No validation commands are configured or detected.\n");
        return;
    }
    let _ = writeln!(b, "| step | command | result | time |\n|---|---|---|---|");
    for step in &validation.steps {
        let result = if step.passed() {
            "✅ passed".to_owned()
        } else if step.timed_out {
            "⏱️ timed out".to_owned()
        } else {
            match step.exit_code {
                Some(code) => format!("❌ exit {code}"),
                None => "❌ killed".to_owned(),
            }
        };
        let _ = writeln!(
            b,
            "| {} | `{}` | {result} | {:.1}s |",
            step.name,
            step.command.replace('|', "\\|").replace('`', "'"),
            step.duration_ms as f64 / 1000.0
        );
    }
    let _ = writeln!(b);
    for step in validation.failing() {
        let lines: Vec<&str> = step.output_tail.lines().collect();
        let tail = &lines[lines.len().saturating_sub(OUTPUT_TAIL_LINES)..];
        let _ = writeln!(
            b,
            "<details><summary>{} output (last lines)</summary>\n\n```text\n{}\n```\n</details>\n",
            step.name,
            tail.join("\n").replace("```", "'''")
        );
    }
}

fn tests_section(b: &mut String, o: &TaskOutcome) {
    let fixed: Vec<&String> = o.tests.iter().flat_map(|t| &t.fixed).collect();
    let newly: Vec<&String> = o.tests.iter().flat_map(|t| &t.newly_failing).collect();
    let already: Vec<&String> = o.tests.iter().flat_map(|t| &t.already_failing).collect();
    if fixed.is_empty() && newly.is_empty() && already.is_empty() {
        return;
    }
    let _ = writeln!(b, "## Tests\n");
    for (label, names) in [
        ("Fixed", &fixed),
        ("Newly failing", &newly),
        ("Already failing before the change", &already),
    ] {
        if names.is_empty() {
            continue;
        }
        let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(b, "- **{label}** ({}): {}", names.len(), list.join(", "));
    }
    let _ = writeln!(b);
}

fn review_section(b: &mut String, o: &TaskOutcome) {
    let _ = writeln!(b, "## Review\n");
    if o.review.findings.is_empty() {
        let _ = writeln!(b, "No findings.\n");
        return;
    }
    for f in &o.review.findings {
        let place = match (f.path.as_str(), f.line) {
            ("", _) => String::new(),
            (path, Some(line)) => format!(" `{path}:{line}`"),
            (path, None) => format!(" `{path}`"),
        };
        let _ = writeln!(
            b,
            "- **{}** `{}`{place}: {}",
            f.severity.label(),
            f.rule,
            f.message
        );
    }
    let _ = writeln!(b);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::report::tests::sample;

    #[test]
    fn a_committed_change_is_a_ready_pull_request_with_the_report() {
        let body = render(&sample(), false, None, &Redactor::new());
        assert!(!body.draft);
        insta::assert_snapshot!(
            "pull_request_committed",
            format!("{}\n\n{}", body.title, body.body)
        );
    }

    #[test]
    fn a_held_change_is_a_draft_with_its_reasons_and_an_issue_is_closed() {
        let mut o = sample();
        o.risk.score = 7;
        o.risk.level = crate::task::RiskLevel::High;
        o.risk.reasons = vec!["+4 critical finding secret.aws_access_key in a.rs:3".into()];
        let body = render(&o, true, Some(42), &Redactor::new());
        assert!(body.draft);
        insta::assert_snapshot!("pull_request_held", body.body);
    }

    #[test]
    fn secrets_never_reach_the_pull_request() {
        let mut o = sample();
        o.task = "use token hunter2-secret-value to call the API".into();
        o.summary = Some("set ghp_abcdefghijklmnopqrstuvwxyz0123456789 in CI".into());
        let body = render(
            &o,
            false,
            None,
            &Redactor::new().with_secrets(["hunter2-secret-value"]),
        );
        for text in [&body.title, &body.body] {
            assert!(!text.contains("hunter2-secret-value"), "{text}");
            assert!(!text.contains("ghp_abcdefghijklmnopqrstuvwxyz"), "{text}");
        }
        // The worktree path is the worker's, not the team's.
        assert!(!body.body.contains("/repo/.forgecode/worktrees"));
    }

    #[test]
    fn a_delivery_reads_as_the_api_shows_it() {
        let opened = PullRequestDelivery {
            opened: Some(PullRequestInfo {
                url: "https://github.com/o/r/pull/7".into(),
                number: 7,
                state: PullRequestState::Open,
                draft: true,
            }),
            error: None,
            closes: Some(3),
            feedback: None,
        };
        let json = serde_json::to_string(&opened).unwrap();
        assert_eq!(
            json,
            r#"{"url":"https://github.com/o/r/pull/7","number":7,"state":"open","draft":true,"closes":3}"#
        );
        assert_eq!(
            serde_json::from_str::<PullRequestDelivery>(&json).unwrap(),
            opened
        );
        let failed = PullRequestDelivery {
            opened: None,
            error: Some("github down".into()),
            closes: None,
            feedback: Some(FeedbackWords {
                mention: "helper".into(),
                issue_label: "agent".into(),
            }),
        };
        let json = serde_json::to_string(&failed).unwrap();
        assert_eq!(
            json,
            r#"{"error":"github down","feedback":{"mention":"helper","issue_label":"agent"}}"#
        );
        assert_eq!(
            serde_json::from_str::<PullRequestDelivery>(&json).unwrap(),
            failed
        );
    }

    #[test]
    fn titles_are_the_first_line_and_bounded() {
        for (task, want) in [
            ("Fix the failing add test", "fix: Fix the failing add test"),
            ("\n\n  Fix it  \nmore detail", "fix: Fix it"),
        ] {
            let mut o = sample();
            o.task = task.into();
            assert_eq!(title(&o), want);
        }
        let mut o = sample();
        o.task = "x".repeat(300);
        let t = title(&o);
        assert_eq!(t.chars().count(), TITLE_MAX);
        assert!(t.ends_with('…'));
        assert_eq!(marker("t-1"), "<!-- forge-task: t-1 -->");
    }
}
