//! The risk score of a change: 0–10, with the reasons that produced it.
//!
//! The rule (each line a contribution; the sum is capped at 10):
//! - **critical finding**: +4 each (one is enough to reach the default threshold 3);
//! - **warning finding**: +1 each, at most +3 together; info findings add nothing;
//! - **sensitive path** (a path word naming auth, login, security, crypto, payment, billing,
//!   migration, permission, secret, infra, terraform, deploy, or a Dockerfile): +1 when any;
//! - **size**: lines added + removed over 50 → +1, over 300 → +2, over 1000 → +3; more than
//!   20 files → +1;
//! - **validation**: the last validation failed on a step the baseline passed → +3; no
//!   validation ran, or it had no step → +2; a step that already failed on the untouched worktree (baseline)
//!   and still fails is not blamed (a reason with +0 says so).
//!
//! Level: low < 3 ≤ medium < 6 ≤ high. Decision: score < threshold → commit.

use super::change::FileChange;
use super::finding::{ReviewReport, Severity};
use super::risk_score::{RiskLevel, RiskScore};
use super::validation::ValidationReport;

const SENSITIVE_WORDS: &[&str] = &[
    "auth",
    "authn",
    "authz",
    "authentication",
    "authorization",
    "oauth",
    "login",
    "security",
    "crypto",
    "cryptography",
    "payment",
    "payments",
    "billing",
    "migration",
    "migrations",
    "permission",
    "permissions",
    "secret",
    "secrets",
    "infra",
    "infrastructure",
    "terraform",
    "deploy",
    "deployment",
    "deployments",
];

/// What the score reads.
#[derive(Debug, Clone, Copy)]
pub struct RiskInputs<'a> {
    pub review: &'a ReviewReport,
    pub files: &'a [FileChange],
    /// The last validation of the change; `None` when none ran.
    pub validation: Option<&'a ValidationReport>,
    pub baseline: Option<&'a ValidationReport>,
}

pub fn score(inputs: &RiskInputs<'_>) -> RiskScore {
    let mut total: u32 = 0;
    let mut reasons = Vec::new();
    let mut add = |points: u32, reason: String| {
        total += points;
        reasons.push(format!("+{points} {reason}"));
    };

    for f in inputs.review.critical() {
        add(
            4,
            format!("critical finding {} in {}", f.rule, place(&f.path, f.line)),
        );
    }
    let warnings = inputs.review.count(Severity::Warning);
    if warnings > 0 {
        let points = u32::try_from(warnings).unwrap_or(u32::MAX).min(3);
        add(points, format!("{warnings} warning finding(s)"));
    }

    let sensitive: Vec<&str> = inputs
        .files
        .iter()
        .map(|f| f.path.as_str())
        .filter(|p| is_sensitive_path(p))
        .collect();
    if let Some(first) = sensitive.first() {
        let more = sensitive.len() - 1;
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        add(1, format!("sensitive path {first}{tail}"));
    }

    let lines: u64 = inputs.files.iter().map(|f| f.added + f.removed).sum();
    let size_points = match lines {
        0..=50 => 0,
        51..=300 => 1,
        301..=1000 => 2,
        _ => 3,
    };
    if size_points > 0 {
        add(size_points, format!("{lines} lines changed"));
    }
    if inputs.files.len() > 20 {
        add(1, format!("{} files changed", inputs.files.len()));
    }

    match inputs.validation {
        None => add(2, "not validated".to_owned()),
        // Nothing configured or detected: a report with no steps passed nothing.
        Some(v) if v.steps.is_empty() => add(2, "not validated (no steps)".to_owned()),
        Some(v) if !v.passed => {
            let (blamed, inherited): (Vec<_>, Vec<_>) = v
                .failing()
                .map(|s| s.name)
                .partition(|name| v.regressions(inputs.baseline).any(|r| r.name == *name));
            if !blamed.is_empty() {
                let names: Vec<&str> = blamed.iter().map(|n| n.as_str()).collect();
                add(3, format!("validation failed: {}", names.join(", ")));
            }
            if !inherited.is_empty() {
                let names: Vec<&str> = inherited.iter().map(|n| n.as_str()).collect();
                add(
                    0,
                    format!(
                        "{} already failing before the change (baseline), not blamed",
                        names.join(", ")
                    ),
                );
            }
        }
        Some(_) => {}
    }

    let score = u8::try_from(total.min(10)).unwrap_or(10);
    RiskScore {
        score,
        level: RiskLevel::of(score),
        reasons,
    }
}

fn place(path: &str, line: Option<u32>) -> String {
    match line {
        Some(l) => format!("{path}:{l}"),
        None if path.is_empty() => "the change".to_owned(),
        None => path.to_owned(),
    }
}

/// A path segment with a sensitive word (split at `.`, `_`, `-`), or a Dockerfile.
pub fn is_sensitive_path(path: &str) -> bool {
    path.split('/').any(|seg| {
        let seg = seg.to_ascii_lowercase();
        seg.starts_with("dockerfile")
            || seg
                .split(['.', '_', '-'])
                .any(|word| SENSITIVE_WORDS.contains(&word))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::change::ChangeKind;
    use crate::task::finding::Finding;
    use crate::task::validation::{StepName, ValidationStep};

    fn file(path: &str, added: u64, removed: u64) -> FileChange {
        FileChange {
            path: path.into(),
            change: ChangeKind::Modified,
            added,
            removed,
        }
    }

    fn finding(rule: &str, severity: Severity) -> Finding {
        Finding {
            rule: rule.into(),
            severity,
            path: "a.rs".into(),
            line: Some(3),
            message: String::new(),
        }
    }

    fn validation(failing: &[StepName]) -> ValidationReport {
        ValidationReport::from_steps(
            [StepName::Build, StepName::Test]
                .into_iter()
                .map(|name| ValidationStep {
                    name,
                    command: name.as_str().into(),
                    exit_code: Some(i32::from(failing.contains(&name))),
                    duration_ms: 1,
                    output_tail: String::new(),
                    timed_out: false,
                    cache: None,
                    failed_tests: None,
                    sandbox_denied: Vec::new(),
                })
                .collect(),
        )
    }

    struct Case {
        findings: Vec<Finding>,
        files: Vec<FileChange>,
        validation: Option<ValidationReport>,
        baseline: Option<ValidationReport>,
    }

    fn case() -> Case {
        Case {
            findings: vec![],
            files: vec![file("src/lib.rs", 10, 2)],
            validation: Some(validation(&[])),
            baseline: Some(validation(&[])),
        }
    }

    fn check(c: Case, expected: (u8, RiskLevel, &[&str])) {
        let review = ReviewReport {
            findings: c.findings,
        };
        let got = score(&RiskInputs {
            review: &review,
            files: &c.files,
            validation: c.validation.as_ref(),
            baseline: c.baseline.as_ref(),
        });
        let (score, level, reasons) = expected;
        assert_eq!((got.score, got.level), (score, level), "{:?}", got.reasons);
        assert_eq!(got.reasons, reasons);
    }

    #[test]
    fn risk_table() {
        use RiskLevel::*;
        use Severity::*;
        check(case(), (0, Low, &[]));
        check(
            Case {
                findings: vec![finding("secret.aws_access_key", Critical)],
                ..case()
            },
            (
                4,
                Medium,
                &["+4 critical finding secret.aws_access_key in a.rs:3"],
            ),
        );
        check(
            Case {
                findings: vec![
                    finding("x", Critical),
                    finding("y", Critical),
                    finding("z", Critical),
                ],
                ..case()
            },
            (
                10,
                High,
                &[
                    "+4 critical finding x in a.rs:3",
                    "+4 critical finding y in a.rs:3",
                    "+4 critical finding z in a.rs:3",
                ],
            ),
        );
        check(
            Case {
                findings: (0..5)
                    .map(|_| finding("w", Warning))
                    .chain([finding("i", Info)])
                    .collect(),
                ..case()
            },
            (3, Medium, &["+3 5 warning finding(s)"]),
        );
        check(
            Case {
                files: vec![file("src/auth/jwt.rs", 40, 0), file("Dockerfile", 1, 0)],
                ..case()
            },
            (1, Low, &["+1 sensitive path src/auth/jwt.rs and 1 more"]),
        );
        check(
            Case {
                files: vec![file("src/a.rs", 200, 120)],
                ..case()
            },
            (2, Low, &["+2 320 lines changed"]),
        );
        check(
            Case {
                files: (0..21).map(|i| file(&format!("f{i}.rs"), 100, 0)).collect(),
                ..case()
            },
            (4, Medium, &["+3 2100 lines changed", "+1 21 files changed"]),
        );
        check(
            Case {
                validation: Some(validation(&[StepName::Test])),
                ..case()
            },
            (3, Medium, &["+3 validation failed: test"]),
        );
        check(
            Case {
                validation: None,
                ..case()
            },
            (2, Low, &["+2 not validated"]),
        );
        // A validation with no step is no validation.
        check(
            Case {
                validation: Some(ValidationReport::from_steps(Vec::new())),
                ..case()
            },
            (2, Low, &["+2 not validated (no steps)"]),
        );
        // The baseline's failing test is not blamed; a new build failure is.
        check(
            Case {
                validation: Some(validation(&[StepName::Test])),
                baseline: Some(validation(&[StepName::Test])),
                ..case()
            },
            (
                0,
                Low,
                &["+0 test already failing before the change (baseline), not blamed"],
            ),
        );
        check(
            Case {
                validation: Some(validation(&[StepName::Build, StepName::Test])),
                baseline: Some(validation(&[StepName::Test])),
                ..case()
            },
            (
                3,
                Medium,
                &[
                    "+3 validation failed: build",
                    "+0 test already failing before the change (baseline), not blamed",
                ],
            ),
        );
    }

    #[test]
    fn sensitive_paths() {
        for (path, expected) in [
            ("src/auth/jwt.rs", true),
            ("src/authentication.ts", true),
            ("db/migrations/001.sql", true),
            ("infra/main.tf", true),
            ("docker/Dockerfile.dev", true),
            ("src/payment_gateway.py", true),
            // Look-alikes.
            ("src/author.rs", false),
            ("src/cryptic.rs", false),
            ("src/blogin.rs", false),
            ("src/lib.rs", false),
            ("src/redeploy_notes.md", false),
        ] {
            assert_eq!(is_sensitive_path(path), expected, "{path}");
        }
    }
}
