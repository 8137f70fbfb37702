//! The review's report (`--json`, `findings.json`) and its exit-code rule.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::answer::Rejected;
use super::diff::Placement;
use super::finding::{ReviewFinding, ReviewSeverity};
use crate::usage::Usage;

/// A review gives up on the agent once its CLI has announced this many retries of a
/// rate-limited model call: the first retry may be a blip the CLI rides out, the second says
/// the limit holds, and a review in CI would rather be skipped at once than wait on it (some
/// CLIs retry a limit that never lifts for as long as they are let run).
pub const RATE_LIMITED_RETRIES_BEFORE_SKIP: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// The rules ran and the agent's findings were read.
    Completed,
    /// The agent's answer could not be read (after one follow-up), or it was stopped by
    /// the cost ceiling: the rule findings are there, the agent's may be missing.
    Partial,
    /// The provider's rate or usage limit was hit: the rule findings only.
    Skipped,
    /// The agent's run failed otherwise.
    Error,
}

impl ReviewStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStatus::Completed => "completed",
            ReviewStatus::Partial => "partial",
            ReviewStatus::Skipped => "skipped",
            ReviewStatus::Error => "error",
        }
    }
}

/// `--fail-on`: the lowest severity that fails the review; `None` never fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    At(ReviewSeverity),
    None,
}

impl Default for FailOn {
    fn default() -> Self {
        FailOn::At(ReviewSeverity::High)
    }
}

impl FromStr for FailOn {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text.trim().eq_ignore_ascii_case("none") {
            return Ok(FailOn::None);
        }
        text.parse::<ReviewSeverity>().map(FailOn::At).map_err(|_| {
            format!("unknown level {text:?} (expected critical, high, medium, low, info or none)")
        })
    }
}

impl FailOn {
    pub fn fails(self, severity: ReviewSeverity) -> bool {
        match self {
            FailOn::At(level) => severity >= level,
            FailOn::None => false,
        }
    }
}

/// A finding with where it lands in the review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedFinding {
    #[serde(flatten)]
    pub finding: ReviewFinding,
    pub placement: Placement,
}

/// What `review` reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewOutcome {
    pub status: ReviewStatus,
    pub provider: String,
    pub model: Option<String>,
    /// The revisions as given and the commits they named.
    pub base: String,
    pub head: String,
    pub merge_base: String,
    pub head_commit: String,
    /// Files in the change.
    pub files: Vec<String>,
    /// Rule findings first, then the agent's, without repeats.
    pub findings: Vec<PlacedFinding>,
    /// Entries of the agent's answer that were no usable finding.
    pub rejected: Vec<Rejected>,
    /// Why the status is not `completed`, and anything else a reader must know.
    pub notices: Vec<String>,
    /// The agent's last answer, when it could not be read (status `partial`).
    pub raw_answer: Option<String>,
    pub cost_usd: f64,
    pub usage: Usage,
    /// Agent runs, follow-ups included.
    pub runs: Vec<String>,
    /// How many parts the change was reviewed in.
    pub chunks: usize,
}

impl ReviewOutcome {
    pub fn count(&self, severity: ReviewSeverity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.finding.severity == severity)
            .count()
    }
}

/// Exit codes of `review`.
pub mod code {
    pub const PASSED: u8 = 0;
    pub const FINDINGS: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const PARTIAL: u8 = 3;
}

/// 3 for a partial review (whatever it found); a skipped review is 0 (1 under `strict`);
/// an agent's error 1; else 1 when a finding is at or above `fail_on`, 0 otherwise.
pub fn exit_code(outcome: &ReviewOutcome, fail_on: FailOn, strict: bool) -> u8 {
    match outcome.status {
        ReviewStatus::Partial => code::PARTIAL,
        ReviewStatus::Skipped if strict => code::FINDINGS,
        ReviewStatus::Skipped => code::PASSED,
        ReviewStatus::Error => code::FINDINGS,
        ReviewStatus::Completed => {
            if outcome
                .findings
                .iter()
                .any(|f| fail_on.fails(f.finding.severity))
            {
                code::FINDINGS
            } else {
                code::PASSED
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::review::finding::tests::agent;

    pub(crate) fn outcome(status: ReviewStatus, severities: &[ReviewSeverity]) -> ReviewOutcome {
        ReviewOutcome {
            status,
            provider: "claude".into(),
            model: None,
            base: "HEAD~1".into(),
            head: "HEAD".into(),
            merge_base: "1111111".into(),
            head_commit: "2222222".into(),
            files: vec!["a.py".into()],
            findings: severities
                .iter()
                .map(|s| PlacedFinding {
                    finding: agent("a.py", Some(1), *s),
                    placement: Placement::Inline,
                })
                .collect(),
            rejected: Vec::new(),
            notices: Vec::new(),
            raw_answer: None,
            cost_usd: 0.0,
            usage: Usage::default(),
            runs: Vec::new(),
            chunks: 1,
        }
    }

    /// A review of the `diff` tests' patch: a rule's key, the agent's SQL finding with a
    /// suggestion, a finding on an untouched line, one outside the change, one about the
    /// whole change.
    pub(crate) fn sample() -> ReviewOutcome {
        use crate::review::finding::FindingSource;
        let mut o = outcome(ReviewStatus::Completed, &[]);
        o.files = vec!["app/db.py".into(), "config.py".into()];
        let key = ReviewFinding {
            path: "config.py".into(),
            line: Some(1),
            end_line: Some(1),
            severity: ReviewSeverity::Critical,
            title: "AWS access key id".into(),
            body: "Rule `secret.aws_access_key` (CRITICAL).".into(),
            suggestion: None,
            source: FindingSource::Rule,
            rule: Some("secret.aws_access_key".into()),
        };
        let mut sql = agent("app/db.py", Some(7), ReviewSeverity::High);
        sql.title = "SQL built by string concatenation".into();
        sql.body = "`name` reaches the query unescaped: SQL injection.".into();
        sql.suggestion =
            Some("    cur.execute(\"SELECT * FROM users WHERE name = ?\", (name,))".into());
        let mut untouched = agent("app/db.py", Some(1), ReviewSeverity::Low);
        untouched.title = "Unused import".into();
        let mut elsewhere = agent("docs/notes with space.md", Some(3), ReviewSeverity::Medium);
        elsewhere.title = "Outdated note".into();
        let mass = ReviewFinding {
            path: String::new(),
            line: None,
            end_line: None,
            severity: ReviewSeverity::Medium,
            title: "40 files deleted".into(),
            body: "Rule `change.mass_deletion` (WARNING).".into(),
            suggestion: None,
            source: FindingSource::Rule,
            rule: Some("change.mass_deletion".into()),
        };
        o.findings = [
            (key, Placement::Inline),
            (mass, Placement::NoLine),
            (sql, Placement::Inline),
            (untouched, Placement::OutsideHunks),
            (elsewhere, Placement::NotInChange),
        ]
        .into_iter()
        .map(|(finding, placement)| PlacedFinding { finding, placement })
        .collect();
        o.cost_usd = 0.0123;
        o.usage.input_tokens = 1200;
        o.usage.output_tokens = 300;
        o.runs = vec!["run-1".into()];
        o
    }

    #[test]
    fn exit_codes() {
        use ReviewSeverity::*;
        use ReviewStatus::*;
        let high = FailOn::At(High);
        for (status, found, fail_on, strict, expected) in [
            (Completed, &[][..], high, false, 0),
            (Completed, &[Medium, Low][..], high, false, 0),
            (Completed, &[Low, High][..], high, false, 1),
            (Completed, &[Critical][..], high, false, 1),
            (Completed, &[Medium][..], FailOn::At(Medium), false, 1),
            (Completed, &[Info][..], FailOn::At(Info), false, 1),
            (Completed, &[Critical][..], FailOn::None, false, 0),
            (Completed, &[Critical][..], high, true, 1),
            (Partial, &[][..], high, false, 3),
            (Partial, &[Critical][..], high, false, 3),
            (Skipped, &[Critical][..], high, false, 0),
            (Skipped, &[][..], high, true, 1),
            (Error, &[][..], high, false, 1),
        ] {
            assert_eq!(
                exit_code(&outcome(status, found), fail_on, strict),
                expected,
                "{status:?} {found:?} {fail_on:?} strict={strict}"
            );
        }
    }

    #[test]
    fn fail_on_levels_parse() {
        for (text, expected) in [
            ("high", Ok(FailOn::At(ReviewSeverity::High))),
            ("CRITICAL", Ok(FailOn::At(ReviewSeverity::Critical))),
            ("none", Ok(FailOn::None)),
            ("info", Ok(FailOn::At(ReviewSeverity::Info))),
            ("warning", Err(())),
            ("", Err(())),
        ] {
            assert_eq!(text.parse::<FailOn>().map_err(|_| ()), expected, "{text:?}");
        }
    }
}
