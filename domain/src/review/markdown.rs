//! The Markdown review: status and counts, notices, the findings by file, those outside
//! the diff, rejected answer entries, and the agent's raw answer when it was unreadable.

use std::fmt::Write as _;

use super::finding::{FindingSource, ReviewSeverity};
use super::github::fence_for;
use super::outcome::ReviewOutcome;

/// `Status completed · 1 critical, 2 high · claude · $0.0123`.
pub fn summary_line(outcome: &ReviewOutcome) -> String {
    let counts: Vec<String> = ReviewSeverity::ALL
        .into_iter()
        .filter_map(|s| {
            let n = outcome.count(s);
            (n > 0).then(|| format!("{n} {s}"))
        })
        .collect();
    format!(
        "Status **{}** · {} · {} file(s) · cost ${:.4}",
        outcome.status.as_str(),
        if counts.is_empty() {
            "no findings".to_owned()
        } else {
            counts.join(", ")
        },
        outcome.files.len(),
        outcome.cost_usd
    )
}

pub fn render(outcome: &ReviewOutcome) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Review of `{}...{}`\n", outcome.base, outcome.head);
    let _ = writeln!(md, "{}\n", summary_line(outcome));
    let _ = writeln!(
        md,
        "Provider `{}`{} · merge base `{}` · head `{}` · {} part(s)\n",
        outcome.provider,
        outcome
            .model
            .as_deref()
            .map(|m| format!(" (model `{m}`)"))
            .unwrap_or_default(),
        short(&outcome.merge_base),
        short(&outcome.head_commit),
        outcome.chunks
    );
    for notice in &outcome.notices {
        let _ = writeln!(md, "> **Note:** {notice}\n");
    }
    let (inline, other): (Vec<_>, Vec<_>) = outcome
        .findings
        .iter()
        .partition(|p| p.placement == super::diff::Placement::Inline);
    if !inline.is_empty() {
        let _ = writeln!(md, "## Findings in the diff\n");
        for placed in inline {
            finding(&mut md, placed, None);
        }
    }
    if !other.is_empty() {
        let _ = writeln!(md, "## Findings outside the diff\n");
        for placed in other {
            finding(&mut md, placed, Some(placed.placement.reason()));
        }
    }
    if outcome.findings.is_empty() {
        let _ = writeln!(md, "No findings.\n");
    }
    if !outcome.rejected.is_empty() {
        let _ = writeln!(md, "## Entries of the answer that were no finding\n");
        for r in &outcome.rejected {
            let _ = writeln!(
                md,
                "- #{}: {} — `{}`",
                r.index,
                r.reason,
                r.entry.replace('`', "'")
            );
        }
        md.push('\n');
    }
    if let Some(raw) = &outcome.raw_answer {
        let fence = fence_for(raw);
        let _ = writeln!(
            md,
            "## The agent's answer (unreadable)\n\n{fence}text\n{raw}\n{fence}\n"
        );
    }
    md
}

fn finding(md: &mut String, placed: &super::outcome::PlacedFinding, why: Option<&str>) {
    let f = &placed.finding;
    let source = match (&f.source, &f.rule) {
        (FindingSource::Rule, Some(rule)) => format!("rule `{rule}`"),
        _ => "agent".to_owned(),
    };
    let _ = write!(
        md,
        "### [{}] {}\n\n`{}` · {source}",
        f.severity.as_str().to_uppercase(),
        f.title,
        f.place()
    );
    if let Some(why) = why {
        let _ = write!(md, " · {why}");
    }
    md.push_str("\n\n");
    if !f.body.is_empty() {
        let _ = writeln!(md, "{}\n", f.body);
    }
    if let Some(suggestion) = &f.suggestion {
        let fence = fence_for(suggestion);
        let _ = writeln!(
            md,
            "Suggested replacement:\n\n{fence}\n{suggestion}\n{fence}\n"
        );
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::outcome::ReviewStatus;
    use crate::review::outcome::tests::sample;

    #[test]
    fn the_markdown_review() {
        insta::assert_snapshot!("review_markdown", render(&sample()));
    }

    #[test]
    fn a_partial_review_shows_the_raw_answer_in_a_fence_it_cannot_close() {
        let mut outcome = sample();
        outcome.status = ReviewStatus::Partial;
        outcome.notices = vec!["the agent's answer had no findings block, twice".into()];
        outcome.raw_answer = Some("I think ``` it is fine".into());
        let md = render(&outcome);
        assert!(md.contains("Status **partial**"));
        assert!(md.contains("````text\nI think ``` it is fine\n````"));
    }
}
