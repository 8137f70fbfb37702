//! A forge event, decoded by an adapter from a webhook (GitHub's `X-GitHub-Event`, GitLab's
//! `X-Gitlab-Event`) or read through the API by `forge poll`: only what forge acts on, in
//! one shape for both forges.

use serde::{Deserialize, Serialize};

use super::repo::RepoRef;

/// A review's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewState {
    Approved,
    ChangesRequested,
    Commented,
    Dismissed,
}

impl ReviewState {
    /// GitHub's `review.state` (`approved`, `changes_requested`, `commented`, `dismissed`,
    /// in any case); anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.to_ascii_lowercase().as_str() {
            "approved" => Some(ReviewState::Approved),
            "changes_requested" => Some(ReviewState::ChangesRequested),
            "commented" => Some(ReviewState::Commented),
            "dismissed" => Some(ReviewState::Dismissed),
            _ => None,
        }
    }
}

/// How a check run or suite completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckConclusion {
    Success,
    Failure,
    TimedOut,
    Cancelled,
    Neutral,
    Skipped,
    ActionRequired,
    Stale,
}

impl CheckConclusion {
    /// GitHub's `conclusion`; unknown words are `None`.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "success" => CheckConclusion::Success,
            "failure" => CheckConclusion::Failure,
            "timed_out" => CheckConclusion::TimedOut,
            "cancelled" => CheckConclusion::Cancelled,
            "neutral" => CheckConclusion::Neutral,
            "skipped" => CheckConclusion::Skipped,
            "action_required" => CheckConclusion::ActionRequired,
            "stale" => CheckConclusion::Stale,
            _ => return None,
        })
    }

    /// A failure the agent can act on: the code failed (or ran out of time). A cancelled,
    /// skipped or stale check says nothing about the change.
    pub fn is_failure(self) -> bool {
        matches!(self, CheckConclusion::Failure | CheckConclusion::TimedOut)
    }
}

/// An inline comment on a pull request's diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewComment {
    pub id: u64,
    pub path: String,
    /// The line in the new file; `None` for a comment on a file as a whole or an outdated
    /// one.
    pub line: Option<u32>,
    pub body: String,
    /// The first comment of the thread this one replies to (GitHub `in_reply_to_id`;
    /// GitLab's discussion is kept as the thread id).
    pub thread: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ForgeEvent {
    /// A comment in a pull request's conversation (GitHub: `issue_comment` on an issue that
    /// is a pull request; GitLab: a Note Hook on a merge request without a position).
    PullRequestComment {
        repo: RepoRef,
        number: u64,
        comment_id: u64,
        author: String,
        body: String,
    },
    /// An inline comment on the diff (`pull_request_review_comment`; GitLab: a DiffNote).
    ReviewComment {
        repo: RepoRef,
        number: u64,
        author: String,
        comment: ReviewComment,
    },
    /// A submitted review (`pull_request_review`; GitLab: an approval in a Merge Request
    /// Hook).
    Review {
        repo: RepoRef,
        number: u64,
        review_id: u64,
        author: String,
        state: ReviewState,
        body: String,
    },
    /// A check run or suite that completed (`check_run` / `check_suite`, action
    /// `completed`; GitLab: a Pipeline Hook).
    CheckCompleted {
        repo: RepoRef,
        head_sha: String,
        check_id: u64,
        name: String,
        conclusion: CheckConclusion,
        /// The pull requests the check ran for.
        pull_requests: Vec<u64>,
    },
    /// A label put on an issue (`issues`, action `labeled`).
    IssueLabelled {
        repo: RepoRef,
        issue: u64,
        label: String,
        /// Who put the label on (the event's `sender`), not who wrote the issue.
        author: String,
        title: String,
        body: String,
    },
    /// A comment on an issue that is not a pull request.
    IssueComment {
        repo: RepoRef,
        issue: u64,
        comment_id: u64,
        author: String,
        body: String,
    },
    /// A pull request closed (merged or not).
    PullRequestClosed {
        repo: RepoRef,
        number: u64,
        merged: bool,
    },
    /// Anything else the forge sends (a ping, a push, an edited comment): acknowledged,
    /// nothing done. The event's name, for the log.
    Other { name: String },
}

impl ForgeEvent {
    /// The repository the event is about; `None` for [`ForgeEvent::Other`].
    pub fn repo(&self) -> Option<&RepoRef> {
        match self {
            ForgeEvent::PullRequestComment { repo, .. }
            | ForgeEvent::ReviewComment { repo, .. }
            | ForgeEvent::Review { repo, .. }
            | ForgeEvent::CheckCompleted { repo, .. }
            | ForgeEvent::IssueLabelled { repo, .. }
            | ForgeEvent::IssueComment { repo, .. }
            | ForgeEvent::PullRequestClosed { repo, .. } => Some(repo),
            ForgeEvent::Other { .. } => None,
        }
    }
}

impl ForgeEvent {
    /// The event's own identity on its forge, the same whether a webhook carried it or
    /// `forge poll` read it through the API: what makes an event seen both ways act once.
    /// `None` for [`ForgeEvent::Other`], which forge never acts on. Comments of a
    /// conversation (a pull request's or an issue's) share GitHub's issue-comment ids;
    /// inline comments, reviews and check runs have id spaces of their own; a label is put
    /// on an issue once as far as forge is concerned.
    pub fn key(&self) -> Option<String> {
        Some(match self {
            ForgeEvent::PullRequestComment { comment_id, .. }
            | ForgeEvent::IssueComment { comment_id, .. } => format!("comment:{comment_id}"),
            ForgeEvent::ReviewComment { comment, .. } => format!("review-comment:{}", comment.id),
            ForgeEvent::Review { review_id, .. } => format!("review:{review_id}"),
            ForgeEvent::CheckCompleted { check_id, .. } => format!("check:{check_id}"),
            ForgeEvent::IssueLabelled { issue, label, .. } => format!("labelled:{issue}:{label}"),
            ForgeEvent::PullRequestClosed { number, .. } => format!("closed:{number}"),
            ForgeEvent::Other { .. } => return None,
        })
        .map(|key| match self.repo() {
            Some(repo) => format!("{}/{}#{key}", repo.host, repo.path),
            None => key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_the_api() {
        assert_eq!(
            ReviewState::parse("CHANGES_REQUESTED"),
            Some(ReviewState::ChangesRequested)
        );
        assert_eq!(ReviewState::parse("approved"), Some(ReviewState::Approved));
        assert_eq!(ReviewState::parse("pending"), None);
        for (word, failure) in [
            ("failure", true),
            ("timed_out", true),
            ("success", false),
            ("cancelled", false),
            ("skipped", false),
            ("neutral", false),
            ("stale", false),
            ("action_required", false),
        ] {
            assert_eq!(
                CheckConclusion::parse(word).map(CheckConclusion::is_failure),
                Some(failure)
            );
        }
        assert_eq!(CheckConclusion::parse("Failure"), None);
    }
}
