//! One review finding, from a rule or from the agent, and the five severities.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::task::finding::{Finding, Severity};

/// Ordered: `Info < Low < Medium < High < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewSeverity {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

impl ReviewSeverity {
    pub const ALL: [ReviewSeverity; 5] = [
        ReviewSeverity::Critical,
        ReviewSeverity::High,
        ReviewSeverity::Medium,
        ReviewSeverity::Low,
        ReviewSeverity::Info,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ReviewSeverity::Info => "info",
            ReviewSeverity::Low => "low",
            ReviewSeverity::Medium => "medium",
            ReviewSeverity::High => "high",
            ReviewSeverity::Critical => "critical",
        }
    }
}

impl std::fmt::Display for ReviewSeverity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ReviewSeverity {
    type Err = String;

    /// The five names in any case (an agent may answer `HIGH`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lower = text.trim().to_ascii_lowercase();
        ReviewSeverity::ALL
            .into_iter()
            .find(|s| s.as_str() == lower)
            .ok_or_else(|| {
                format!("unknown severity {text:?} (expected critical, high, medium, low or info)")
            })
    }
}

/// A rule's CRITICAL is critical, WARNING medium, INFO info.
impl From<Severity> for ReviewSeverity {
    fn from(severity: Severity) -> Self {
        match severity {
            Severity::Critical => ReviewSeverity::Critical,
            Severity::Warning => ReviewSeverity::Medium,
            Severity::Info => ReviewSeverity::Info,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingSource {
    Rule,
    Agent,
}

/// `{path, line, end_line, severity, title, body, suggestion, source, rule}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewFinding {
    /// Repository-relative, `/`-separated; empty for a finding about the change as a whole.
    pub path: String,
    /// 1-based line in the new file.
    pub line: Option<u32>,
    /// Last line of the range (`line` when absent).
    pub end_line: Option<u32>,
    pub severity: ReviewSeverity,
    pub title: String,
    pub body: String,
    /// Replacement for lines `line..=end_line`, when the finding carries one.
    pub suggestion: Option<String>,
    pub source: FindingSource,
    /// The rule id, for rule findings.
    pub rule: Option<String>,
}

impl ReviewFinding {
    /// The last line of the finding's range.
    pub fn last_line(&self) -> Option<u32> {
        match (self.line, self.end_line) {
            (Some(line), Some(end)) if end >= line => Some(end),
            (line, _) => line,
        }
    }

    /// `path:line` or `path` or `(the change)`.
    pub fn place(&self) -> String {
        match (self.path.as_str(), self.line) {
            ("", _) => "(the change as a whole)".to_owned(),
            (path, Some(line)) => format!("{path}:{line}"),
            (path, None) => path.to_owned(),
        }
    }
}

impl From<&Finding> for ReviewFinding {
    fn from(f: &Finding) -> Self {
        ReviewFinding {
            path: f.path.clone(),
            line: f.line,
            end_line: f.line,
            severity: f.severity.into(),
            title: f.message.clone(),
            body: format!("Rule `{}` ({}).", f.rule, f.severity.label()),
            suggestion: None,
            source: FindingSource::Rule,
            rule: Some(f.rule.clone()),
        }
    }
}

/// Findings in order without repeats: two findings at the same place with the same title
/// (ignoring case and surrounding space) are one; the first, or the more severe, is kept.
/// Chunks of a large change and a follow-up answer can report the same thing twice.
pub fn dedupe(findings: Vec<ReviewFinding>) -> Vec<ReviewFinding> {
    let mut kept: Vec<ReviewFinding> = Vec::with_capacity(findings.len());
    for finding in findings {
        let key = |f: &ReviewFinding| {
            (
                f.path.clone(),
                f.line,
                f.title.trim().to_lowercase(),
                f.source,
                f.rule.clone(),
            )
        };
        let k = key(&finding);
        match kept.iter_mut().find(|f| key(f) == k) {
            Some(existing) if finding.severity > existing.severity => *existing = finding,
            Some(_) => {}
            None => kept.push(finding),
        }
    }
    kept
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn agent(path: &str, line: Option<u32>, severity: ReviewSeverity) -> ReviewFinding {
        ReviewFinding {
            path: path.to_owned(),
            line,
            end_line: line,
            severity,
            title: format!("{severity} at {path}"),
            body: "Why it matters.".to_owned(),
            suggestion: None,
            source: FindingSource::Agent,
            rule: None,
        }
    }

    #[test]
    fn severities_parse_in_any_case_and_map_from_rules() {
        for (text, expected) in [
            ("critical", Ok(ReviewSeverity::Critical)),
            ("HIGH", Ok(ReviewSeverity::High)),
            (" Medium ", Ok(ReviewSeverity::Medium)),
            ("low", Ok(ReviewSeverity::Low)),
            ("info", Ok(ReviewSeverity::Info)),
            ("warning", Err(())),
            ("", Err(())),
            ("severe", Err(())),
        ] {
            assert_eq!(
                text.parse::<ReviewSeverity>().map_err(|_| ()),
                expected,
                "{text:?}"
            );
        }
        assert_eq!(
            ReviewSeverity::from(Severity::Critical),
            ReviewSeverity::Critical
        );
        assert_eq!(
            ReviewSeverity::from(Severity::Warning),
            ReviewSeverity::Medium
        );
        assert_eq!(ReviewSeverity::from(Severity::Info), ReviewSeverity::Info);
        assert!(ReviewSeverity::Critical > ReviewSeverity::High);
        assert!(ReviewSeverity::Low > ReviewSeverity::Info);
    }

    #[test]
    fn dedupe_keeps_the_first_or_the_more_severe() {
        let a = agent("a.py", Some(3), ReviewSeverity::Low);
        let mut louder = a.clone();
        louder.severity = ReviewSeverity::High;
        louder.title = a.title.to_uppercase();
        let other_line = agent("a.py", Some(4), ReviewSeverity::Low);
        let kept = dedupe(vec![
            a.clone(),
            other_line.clone(),
            louder.clone(),
            a.clone(),
        ]);
        assert_eq!(kept, vec![louder, other_line]);
    }
}
