//! What forge reads back from a forge for a follow-up: a review with all its comments, a
//! review thread so far, a failed check's output and annotations — and the prompt text the
//! resumed agent session is told.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::event::{ReviewComment, ReviewState};

/// A review and every comment it holds (one follow-up for all of them, not one each).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    pub id: u64,
    pub author: String,
    pub state: ReviewState,
    pub body: String,
    pub comments: Vec<ReviewComment>,
}

/// One comment of a thread, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadComment {
    pub id: u64,
    pub author: String,
    pub body: String,
}

/// One annotation a check put on a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// `notice`, `warning` or `failure`.
    pub level: String,
    pub message: String,
}

/// A completed check's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRunOutput {
    pub id: u64,
    pub name: String,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub annotations: Vec<Annotation>,
}

/// The most of a check's text (and of a thread) the prompt carries: the end, where the
/// failure usually is.
const PROMPT_TEXT_MAX: usize = 8_000;

/// The follow-up prompt for a comment: the comment, its file and line, and the thread so
/// far.
pub fn comment_prompt(
    author: &str,
    body: &str,
    place: Option<(&str, Option<u32>)>,
    thread: &[ThreadComment],
) -> String {
    let mut p = String::from("A reviewer commented on your pull request");
    match place {
        Some((path, Some(line))) => {
            let _ = write!(p, " at {path}:{line}");
        }
        Some((path, None)) => {
            let _ = write!(p, " on {path}");
        }
        None => {}
    }
    let _ = write!(
        p,
        ". Make the change they ask for.\n\n{author} wrote:\n{}\n",
        quote(body)
    );
    if thread.len() > 1 {
        let _ = writeln!(p, "\nThe thread so far:");
        for c in thread {
            let _ = writeln!(
                p,
                "- {}: {}",
                c.author,
                tail(c.body.trim()).replace('\n', " ")
            );
        }
    }
    p
}

/// The follow-up prompt for a review with changes requested: every comment together.
pub fn review_prompt(review: &Review) -> String {
    let mut p = format!(
        "{} requested changes on your pull request. Address every comment.\n",
        review.author
    );
    if !review.body.trim().is_empty() {
        let _ = writeln!(p, "\nThe review says:\n{}", quote(&review.body));
    }
    for c in &review.comments {
        let place = match c.line {
            Some(line) => format!("{}:{line}", c.path),
            None => c.path.clone(),
        };
        let _ = writeln!(p, "\nAt {place}:\n{}", quote(&c.body));
    }
    p
}

/// The follow-up prompt for a failed check: its output and annotations.
pub fn check_prompt(check: &CheckRunOutput) -> String {
    let mut p = format!(
        "The check {:?} failed on your pull request's latest commit. Fix the cause.\n",
        check.name
    );
    for (label, text) in [
        ("Title", &check.title),
        ("Summary", &check.summary),
        ("Output", &check.text),
    ] {
        if let Some(text) = text.as_deref().filter(|t| !t.trim().is_empty()) {
            let _ = writeln!(p, "\n{label}:\n{}", tail(text.trim()));
        }
    }
    if !check.annotations.is_empty() {
        let _ = writeln!(p, "\nAnnotations:");
        for a in &check.annotations {
            let _ = writeln!(
                p,
                "- {}:{}-{} [{}] {}",
                a.path, a.start_line, a.end_line, a.level, a.message
            );
        }
    }
    p
}

fn quote(text: &str) -> String {
    tail(text.trim())
        .lines()
        .map(|l| format!("> {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn tail(text: &str) -> &str {
    if text.len() <= PROMPT_TEXT_MAX {
        return text;
    }
    let mut start = text.len() - PROMPT_TEXT_MAX;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_carry_the_comment_its_place_and_the_thread() {
        let thread = vec![
            ThreadComment {
                id: 1,
                author: "alice".into(),
                body: "Why 3?".into(),
            },
            ThreadComment {
                id: 2,
                author: "forge-bot".into(),
                body: "It is the limit.".into(),
            },
            ThreadComment {
                id: 3,
                author: "alice".into(),
                body: "@forge make it a constant".into(),
            },
        ];
        insta::assert_snapshot!(
            "comment_prompt",
            comment_prompt(
                "alice",
                "@forge make it a constant",
                Some(("src/a.rs", Some(3))),
                &thread
            )
        );
        let review = Review {
            id: 9,
            author: "bob".into(),
            state: ReviewState::ChangesRequested,
            body: "Two things.".into(),
            comments: vec![
                ReviewComment {
                    id: 1,
                    path: "src/a.rs".into(),
                    line: Some(3),
                    body: "Name it.".into(),
                    thread: None,
                },
                ReviewComment {
                    id: 2,
                    path: "README.md".into(),
                    line: None,
                    body: "Document it.".into(),
                    thread: None,
                },
            ],
        };
        insta::assert_snapshot!("review_prompt", review_prompt(&review));
        let check = CheckRunOutput {
            id: 5,
            name: "ci / test".into(),
            title: Some("1 test failed".into()),
            summary: None,
            text: Some("x".repeat(9_000) + "\nFAIL tests::add"),
            annotations: vec![Annotation {
                path: "src/a.rs".into(),
                start_line: 3,
                end_line: 3,
                level: "failure".into(),
                message: "assertion failed".into(),
            }],
        };
        let p = check_prompt(&check);
        assert!(p.contains("FAIL tests::add"));
        assert!(p.contains("- src/a.rs:3-3 [failure] assertion failed"));
        assert!(p.len() < 9_000);
    }
}
