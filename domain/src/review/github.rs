//! The GitHub pull-request review payload (`POST /repos/{o}/{r}/pulls/{n}/reviews`):
//! inline comments only where the lines are inside one hunk of the change, a
//! ` ```suggestion ` block when the finding carries a replacement; everything else goes into
//! the review's body, with the reason.

use serde::{Deserialize, Serialize};

use super::diff::Placement;
use super::finding::{FindingSource, ReviewFinding};
use super::outcome::{PlacedFinding, ReviewOutcome};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GithubReview {
    pub body: String,
    /// Always `COMMENT`: whether the check fails is the exit code's business.
    pub event: String,
    pub comments: Vec<GithubComment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GithubComment {
    pub path: String,
    /// The last line of the range, in the new file.
    pub line: u32,
    pub side: String,
    /// The first line of a multi-line range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_side: Option<String>,
    pub body: String,
}

pub fn review(outcome: &ReviewOutcome) -> GithubReview {
    let mut comments = Vec::new();
    let mut elsewhere: Vec<&PlacedFinding> = Vec::new();
    for placed in &outcome.findings {
        let f = &placed.finding;
        match (placed.placement, f.line) {
            (Placement::Inline, Some(first)) => {
                let last = f.last_line().unwrap_or(first);
                let multi = last > first;
                comments.push(GithubComment {
                    path: f.path.clone(),
                    line: last,
                    side: "RIGHT".into(),
                    start_line: multi.then_some(first),
                    start_side: multi.then(|| "RIGHT".to_owned()),
                    body: comment_body(f),
                });
            }
            _ => elsewhere.push(placed),
        }
    }
    let mut body = format!(
        "## forge review ({})\n\n{}",
        outcome.provider,
        super::markdown::summary_line(outcome)
    );
    for notice in &outcome.notices {
        body.push_str(&format!("\n> {notice}"));
    }
    body.push('\n');
    if !elsewhere.is_empty() {
        body.push_str("\n### Findings outside the diff\n\n");
        for placed in elsewhere {
            let f = &placed.finding;
            body.push_str(&format!(
                "- **[{}] {}** — `{}` ({}){}\n",
                f.severity.as_str().to_uppercase(),
                f.title,
                f.place(),
                placed.placement.reason(),
                if f.body.is_empty() {
                    String::new()
                } else {
                    format!(": {}", f.body)
                }
            ));
        }
    }
    GithubReview {
        body,
        event: "COMMENT".into(),
        comments,
    }
}

fn comment_body(f: &ReviewFinding) -> String {
    let mut body = format!("**[{}] {}**", f.severity.as_str().to_uppercase(), f.title);
    if !f.body.is_empty() {
        body.push_str("\n\n");
        body.push_str(&f.body);
    }
    if let Some(suggestion) = &f.suggestion {
        let fence = fence_for(suggestion);
        body.push_str(&format!("\n\n{fence}suggestion\n{suggestion}\n{fence}"));
    }
    body.push_str(&format!(
        "\n\n<sub>forge review · {}</sub>",
        match (&f.source, &f.rule) {
            (FindingSource::Rule, Some(rule)) => format!("rule `{rule}`"),
            _ => "agent".to_owned(),
        }
    ));
    body
}

/// A backtick fence longer than any run of backticks in `text`, so the text cannot close it.
pub fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::outcome::tests::sample;

    #[test]
    fn inline_comments_with_suggestions_and_the_rest_in_the_body() {
        let payload = review(&sample());
        insta::assert_json_snapshot!("review_github", payload);
        let paths: Vec<(&str, u32)> = payload
            .comments
            .iter()
            .map(|c| (c.path.as_str(), c.line))
            .collect();
        assert_eq!(paths, vec![("config.py", 1), ("app/db.py", 7)]);
        assert!(payload.comments[1].body.contains("```suggestion\n"));
        assert!(payload.body.contains("Unused import"));
        assert!(payload.body.contains("on lines this change did not touch"));
        assert!(payload.body.contains("in a file outside this change"));
    }

    #[test]
    fn a_range_is_a_multi_line_comment() {
        let mut outcome = sample();
        outcome.findings[2].finding.end_line = Some(9);
        let payload = review(&outcome);
        let c = &payload.comments[1];
        assert_eq!((c.start_line, c.line), (Some(7), 9));
    }

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fence_for("x = 1"), "```");
        assert_eq!(fence_for("```rust\nx\n```"), "````");
        assert_eq!(fence_for("a ````` b"), "``````");
    }
}
