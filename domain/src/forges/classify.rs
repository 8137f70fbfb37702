//! What a forge event asks of forge — the rule the webhook route and `forge poll` share.
//!
//! The event is classified before anyone is asked anything: most events (a comment that
//! does not mention the handle, a check on another commit) are dropped here, and only a
//! [`Trigger`] leads to the forge's API being asked whether its actor may steer
//! ([`super::may_steer`]).

use serde::{Deserialize, Serialize};

use super::event::{ForgeEvent, ReviewComment, ReviewState};
use super::mention::{mentions, task_after_mention};
use super::pull_request::{PullRequestInfo, PullRequestState};
use crate::task::TaskId;

/// The task's pull request as forge's store knows it, when the event is about one of
/// forge's pull requests (looked up by repository and number, or by head commit for a
/// check).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownPullRequest {
    pub task_id: TaskId,
    pub info: PullRequestInfo,
    /// The commit forge last pushed to the pull request's branch.
    pub head_sha: String,
}

/// What the rule is told besides the event.
#[derive(Debug, Clone, Copy)]
pub struct EventContext<'a> {
    /// `forge` unless configured: the handle a comment mentions to ask forge.
    pub handle: &'a str,
    /// `forge` unless configured: the label that turns an issue into a task.
    pub label: &'a str,
    /// forge's own login on the forge: its replies (which quote the handle) never trigger
    /// it.
    pub bot_login: Option<&'a str>,
    pub pull_request: Option<&'a KnownPullRequest>,
}

/// Why a follow-up runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FollowupCause {
    /// A comment mentioning the handle: in the conversation (`thread` `None`) or inline.
    Comment {
        comment_id: u64,
        body: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inline: Option<ReviewComment>,
    },
    /// A review with changes requested: all its comments are read together.
    ChangesRequested { review_id: u64, body: String },
    /// A check that failed on forge's head commit: its output and annotations are read.
    CheckFailed { check_id: u64, name: String },
}

/// Something forge does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Trigger {
    /// Resume the task's agent session with the cause; push a new commit; reply.
    FollowUp {
        task_id: TaskId,
        number: u64,
        cause: FollowupCause,
        /// Who asked; `None` for a check (it ran on forge's own commit).
        actor: Option<String>,
    },
    /// A writer's approving review of a held (draft) pull request: approve, mark ready.
    MarkReady {
        task_id: TaskId,
        number: u64,
        actor: String,
    },
    /// Queue a task on the repository whose pull request closes `issue`.
    IssueTask {
        issue: u64,
        task: String,
        actor: String,
    },
    /// The pull request was closed: no more follow-ups for the task.
    Closed { task_id: TaskId, merged: bool },
}

impl Trigger {
    /// The user whose write permission must be confirmed before anything is done.
    pub fn actor(&self) -> Option<&str> {
        match self {
            Trigger::FollowUp { actor, .. } => actor.as_deref(),
            Trigger::MarkReady { actor, .. } | Trigger::IssueTask { actor, .. } => Some(actor),
            Trigger::Closed { .. } => None,
        }
    }
}

/// Why an event changes nothing; logged, and answered 202 to a webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ignored {
    /// The pull request is not one forge opened.
    NotForgesPullRequest,
    /// forge's pull request is closed: nothing more is done on it.
    PullRequestClosed,
    /// The comment does not mention the handle.
    NoMention,
    /// The comment mentions the handle but asks for nothing (an issue comment `@forge`).
    NoTask,
    /// forge's own comment.
    OwnComment,
    /// A review that neither requests changes nor approves a held change.
    ReviewAsksNothing,
    /// An approving review of a pull request that is not held (already ready).
    NotHeld,
    /// A check that did not fail (success, skipped, cancelled…).
    CheckNotFailed,
    /// A check on a commit that is not forge's head of the pull request (an older push).
    NotTheHeadCommit,
    /// A label other than forge's.
    OtherLabel,
    /// An event forge does not act on.
    OtherEvent(String),
}

/// Either what to do, or why nothing.
pub type Classified = Result<Trigger, Ignored>;

/// The rule. Pure: the caller looked the pull request up and, for a [`Trigger`] with an
/// actor, asks the forge the actor's permission next.
pub fn classify(event: &ForgeEvent, cx: &EventContext<'_>) -> Classified {
    match event {
        ForgeEvent::PullRequestComment {
            number,
            comment_id,
            author,
            body,
            ..
        } => mention_on_pull_request(
            cx,
            *number,
            author,
            body,
            FollowupCause::Comment {
                comment_id: *comment_id,
                body: body.clone(),
                inline: None,
            },
        ),
        ForgeEvent::ReviewComment {
            number,
            author,
            comment,
            ..
        } => mention_on_pull_request(
            cx,
            *number,
            author,
            &comment.body,
            FollowupCause::Comment {
                comment_id: comment.id,
                body: comment.body.clone(),
                inline: Some(comment.clone()),
            },
        ),
        ForgeEvent::Review {
            number,
            review_id,
            author,
            state,
            body,
            ..
        } => review(cx, *number, *review_id, author, *state, body),
        ForgeEvent::CheckCompleted {
            head_sha,
            check_id,
            name,
            conclusion,
            ..
        } => {
            if !conclusion.is_failure() {
                return Err(Ignored::CheckNotFailed);
            }
            check_failed(cx, head_sha, *check_id, name)
        }
        ForgeEvent::IssueLabelled {
            issue,
            label,
            author,
            title,
            body,
            ..
        } => issue_labelled(cx, *issue, label, author, title, body),
        ForgeEvent::IssueComment {
            issue,
            author,
            body,
            ..
        } => {
            if is_own(cx, author) {
                return Err(Ignored::OwnComment);
            }
            if !mentions(body, cx.handle) {
                return Err(Ignored::NoMention);
            }
            let task = task_after_mention(body, cx.handle).ok_or(Ignored::NoTask)?;
            Ok(Trigger::IssueTask {
                issue: *issue,
                task,
                actor: author.clone(),
            })
        }
        ForgeEvent::PullRequestClosed { number, merged, .. } => {
            let pr = cx
                .pull_request
                .filter(|pr| pr.info.number == *number)
                .ok_or(Ignored::NotForgesPullRequest)?;
            Ok(Trigger::Closed {
                task_id: pr.task_id.clone(),
                merged: *merged,
            })
        }
        ForgeEvent::Other { name } => Err(Ignored::OtherEvent(name.clone())),
    }
}

/// forge's own comment (its replies quote the handle and must never trigger it).
fn is_own(cx: &EventContext<'_>, author: &str) -> bool {
    cx.bot_login.is_some_and(|b| b.eq_ignore_ascii_case(author))
}

/// A comment in the conversation or inline: a follow-up when it mentions the handle.
fn mention_on_pull_request(
    cx: &EventContext<'_>,
    number: u64,
    author: &str,
    text: &str,
    cause: FollowupCause,
) -> Classified {
    let pr = open_pull_request(cx, number)?;
    if is_own(cx, author) {
        return Err(Ignored::OwnComment);
    }
    if !mentions(text, cx.handle) {
        return Err(Ignored::NoMention);
    }
    Ok(Trigger::FollowUp {
        task_id: pr.task_id.clone(),
        number,
        cause,
        actor: Some(author.to_owned()),
    })
}

/// A review: changes requested → a follow-up with all its comments; an approval of a held
/// (draft) pull request → ready.
fn review(
    cx: &EventContext<'_>,
    number: u64,
    review_id: u64,
    author: &str,
    state: ReviewState,
    body: &str,
) -> Classified {
    let pr = open_pull_request(cx, number)?;
    if is_own(cx, author) {
        return Err(Ignored::OwnComment);
    }
    match state {
        ReviewState::ChangesRequested => Ok(Trigger::FollowUp {
            task_id: pr.task_id.clone(),
            number,
            cause: FollowupCause::ChangesRequested {
                review_id,
                body: body.to_owned(),
            },
            actor: Some(author.to_owned()),
        }),
        ReviewState::Approved if pr.info.draft => Ok(Trigger::MarkReady {
            task_id: pr.task_id.clone(),
            number,
            actor: author.to_owned(),
        }),
        ReviewState::Approved => Err(Ignored::NotHeld),
        ReviewState::Commented | ReviewState::Dismissed => Err(Ignored::ReviewAsksNothing),
    }
}

/// A failed check: a follow-up only on forge's current head commit of an open pull request.
fn check_failed(cx: &EventContext<'_>, head_sha: &str, check_id: u64, name: &str) -> Classified {
    let pr = cx.pull_request.ok_or(Ignored::NotForgesPullRequest)?;
    if pr.info.state != PullRequestState::Open {
        return Err(Ignored::PullRequestClosed);
    }
    if !pr.head_sha.eq_ignore_ascii_case(head_sha) {
        return Err(Ignored::NotTheHeadCommit);
    }
    Ok(Trigger::FollowUp {
        task_id: pr.task_id.clone(),
        number: pr.info.number,
        cause: FollowupCause::CheckFailed {
            check_id,
            name: name.to_owned(),
        },
        actor: None,
    })
}

/// An issue given forge's label: a task from its title and body.
fn issue_labelled(
    cx: &EventContext<'_>,
    issue: u64,
    label: &str,
    author: &str,
    title: &str,
    body: &str,
) -> Classified {
    if !label.eq_ignore_ascii_case(cx.label) {
        return Err(Ignored::OtherLabel);
    }
    let task = if body.trim().is_empty() {
        title.trim().to_owned()
    } else {
        format!("{}\n\n{}", title.trim(), body.trim())
    };
    Ok(Trigger::IssueTask {
        issue,
        task,
        actor: author.to_owned(),
    })
}

fn open_pull_request<'a>(
    cx: &EventContext<'a>,
    number: u64,
) -> Result<&'a KnownPullRequest, Ignored> {
    let pr = cx
        .pull_request
        .filter(|pr| pr.info.number == number)
        .ok_or(Ignored::NotForgesPullRequest)?;
    if pr.info.state != PullRequestState::Open {
        return Err(Ignored::PullRequestClosed);
    }
    Ok(pr)
}

#[cfg(test)]
mod tests;
