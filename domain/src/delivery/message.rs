//! The commit message forge writes, and finding a task again from a commit.
//!
//! The `Forge-Task: <id>` trailer is how a commit is tied back to its task when the store
//! missed the write (forge killed between the commit and the row): reconciliation searches
//! git for the trailer.

use crate::task::TaskId;

/// The trailer key.
pub const TRAILER: &str = "Forge-Task";

/// The longest summary kept in a message: the agent's final text can be long, a commit
/// message body should not be.
const MAX_SUMMARY: usize = 2000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitMessage<'a> {
    /// `implement`, `fix`, …
    pub task_type: &'a str,
    pub title: &'a str,
    /// The agent's final text; may be empty.
    pub summary: &'a str,
    pub task_id: &'a TaskId,
}

impl CommitMessage<'_> {
    /// `<type>: <title>`, a blank line, the summary, a blank line, the trailer. The subject
    /// is one line (newlines in the title become spaces) of at most 72 characters.
    pub fn render(&self) -> String {
        let title: String = self.title.split_whitespace().collect::<Vec<_>>().join(" ");
        let subject = crate::error::excerpt(&format!("{}: {}", self.task_type, title), 72);
        let mut text = subject;
        text.push_str("\n\n");
        let summary = self.summary.trim();
        if !summary.is_empty() {
            text.push_str(&crate::error::excerpt(summary, MAX_SUMMARY));
            text.push_str("\n\n");
        }
        text.push_str(TRAILER);
        text.push_str(": ");
        text.push_str(self.task_id.as_str());
        text.push('\n');
        text
    }
}

/// The task id in a commit message's `Forge-Task` trailer, if there is one (the last one
/// wins, as git's own trailer parsing does).
pub fn task_id_from_message(message: &str) -> Option<TaskId> {
    message
        .lines()
        .rev()
        .filter_map(|line| line.trim_end().strip_prefix(TRAILER))
        .filter_map(|rest| rest.strip_prefix(':'))
        .find_map(|value| TaskId::new(value.trim()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> TaskId {
        TaskId::new(s).unwrap()
    }

    #[test]
    fn renders_subject_summary_and_trailer() {
        let task = id("t-1");
        let message = CommitMessage {
            task_type: "fix",
            title: "Fix the\nfailing   JWT test",
            summary: "  Changed the expiry check.\n",
            task_id: &task,
        };
        assert_eq!(
            message.render(),
            "fix: Fix the failing JWT test\n\nChanged the expiry check.\n\nForge-Task: t-1\n"
        );
        let bare = CommitMessage {
            summary: "",
            ..message
        };
        assert_eq!(
            bare.render(),
            "fix: Fix the failing JWT test\n\nForge-Task: t-1\n"
        );
    }

    #[test]
    fn a_long_title_is_cut_to_one_short_subject() {
        let task = id("t");
        let title = "word ".repeat(40);
        let text = CommitMessage {
            task_type: "implement",
            title: &title,
            summary: "",
            task_id: &task,
        }
        .render();
        let subject = text.lines().next().unwrap();
        assert!(subject.len() <= 72 + '…'.len_utf8(), "{subject}");
    }

    fn check(message: &str, expected: Option<&str>) {
        assert_eq!(
            task_id_from_message(message).as_ref().map(TaskId::as_str),
            expected,
            "{message:?}"
        );
    }

    #[test]
    fn finds_the_trailer_and_ignores_look_alikes() {
        check("fix: x\n\nForge-Task: abc-1\n", Some("abc-1"));
        check("fix: x\n\nForge-Task:abc\n", Some("abc"));
        check("a\n\nForge-Task: one\nForge-Task: two", Some("two"));
        check("fix: x\n\nForge-Task: ../etc\n", None);
        check("fix: x\n\nForge-Tasks: abc\n", None);
        check("fix: x\n\nforge-task abc\n", None);
        check("fix: x\n\n  Forge-Task: indented\n", None);
        check("", None);
    }
}
