//! The classification table: every event kind with what fires and the look-alikes that must
//! not.

use super::*;
use crate::forges::event::CheckConclusion;
use crate::forges::repo::RepoRef;

fn repo() -> RepoRef {
    RepoRef {
        host: "github.com".into(),
        path: "octo/hello".into(),
    }
}

fn known(draft: bool, state: PullRequestState) -> KnownPullRequest {
    KnownPullRequest {
        task_id: TaskId::new("t-1").unwrap(),
        info: PullRequestInfo {
            url: "https://github.com/octo/hello/pull/7".into(),
            number: 7,
            state,
            draft,
        },
        head_sha: "abc123".into(),
    }
}

fn comment(number: u64, author: &str, body: &str) -> ForgeEvent {
    ForgeEvent::PullRequestComment {
        repo: repo(),
        number,
        comment_id: 11,
        author: author.into(),
        body: body.into(),
    }
}

fn inline(body: &str) -> ForgeEvent {
    ForgeEvent::ReviewComment {
        repo: repo(),
        number: 7,
        author: "alice".into(),
        comment: ReviewComment {
            id: 12,
            path: "src/add.rs".into(),
            line: Some(3),
            body: body.into(),
            thread: None,
        },
    }
}

fn review(state: ReviewState) -> ForgeEvent {
    ForgeEvent::Review {
        repo: repo(),
        number: 7,
        review_id: 13,
        author: "alice".into(),
        state,
        body: "see comments".into(),
    }
}

fn check_run(sha: &str, conclusion: CheckConclusion) -> ForgeEvent {
    ForgeEvent::CheckCompleted {
        repo: repo(),
        head_sha: sha.into(),
        check_id: 14,
        name: "ci / test".into(),
        conclusion,
        pull_requests: vec![7],
    }
}

fn labelled(label: &str) -> ForgeEvent {
    ForgeEvent::IssueLabelled {
        repo: repo(),
        issue: 3,
        label: label.into(),
        author: "alice".into(),
        title: "Handle empty input".into(),
        body: "It panics on \"\".".into(),
    }
}

fn issue_comment(author: &str, body: &str) -> ForgeEvent {
    ForgeEvent::IssueComment {
        repo: repo(),
        issue: 3,
        comment_id: 15,
        author: author.into(),
        body: body.into(),
    }
}

/// What fired, in a word, or why not.
fn check(event: ForgeEvent, pr: Option<&KnownPullRequest>, want: Result<&str, Ignored>) {
    let cx = EventContext {
        handle: "forge",
        label: "forge",
        bot_login: Some("forge-bot[bot]"),
        pull_request: pr,
    };
    let got = classify(&event, &cx).map(|t| match t {
        Trigger::FollowUp { cause, actor, .. } => match cause {
            FollowupCause::Comment { inline: None, .. } => {
                format!("follow-up comment by {actor:?}")
            }
            FollowupCause::Comment {
                inline: Some(c), ..
            } => {
                format!("follow-up inline {}:{:?} by {actor:?}", c.path, c.line)
            }
            FollowupCause::ChangesRequested { .. } => format!("follow-up review by {actor:?}"),
            FollowupCause::CheckFailed { name, .. } => {
                format!("follow-up check {name} by {actor:?}")
            }
        },
        Trigger::MarkReady { actor, .. } => format!("ready by {actor}"),
        Trigger::IssueTask { issue, task, actor } => format!("task #{issue} {task:?} by {actor}"),
        Trigger::Closed { merged, .. } => format!("closed merged={merged}"),
    });
    assert_eq!(got.as_deref().map_err(Clone::clone), want, "{event:?}");
}

#[test]
fn comments_on_forges_pull_request() {
    let open = known(false, PullRequestState::Open);
    let pr = Some(&open);
    check(
        comment(7, "alice", "@forge handle the empty case"),
        pr,
        Ok("follow-up comment by Some(\"alice\")"),
    );
    check(
        inline("@forge off by one here"),
        pr,
        Ok("follow-up inline src/add.rs:Some(3) by Some(\"alice\")"),
    );
    // Look-alikes.
    check(comment(7, "alice", "LGTM"), pr, Err(Ignored::NoMention));
    check(
        comment(7, "alice", "@forgebot fix"),
        pr,
        Err(Ignored::NoMention),
    );
    check(inline("nit: spacing"), pr, Err(Ignored::NoMention));
    check(
        comment(7, "forge-bot[bot]", "Done — answering @forge in abc123"),
        pr,
        Err(Ignored::OwnComment),
    );
    check(
        comment(8, "alice", "@forge fix"),
        pr,
        Err(Ignored::NotForgesPullRequest),
    );
    check(
        comment(7, "alice", "@forge fix"),
        None,
        Err(Ignored::NotForgesPullRequest),
    );
    let closed = known(false, PullRequestState::Closed);
    check(
        comment(7, "alice", "@forge fix"),
        Some(&closed),
        Err(Ignored::PullRequestClosed),
    );
    let merged = known(false, PullRequestState::Merged);
    check(
        inline("@forge fix"),
        Some(&merged),
        Err(Ignored::PullRequestClosed),
    );
}

#[test]
fn reviews() {
    let ready = known(false, PullRequestState::Open);
    let draft = known(true, PullRequestState::Open);
    check(
        review(ReviewState::ChangesRequested),
        Some(&ready),
        Ok("follow-up review by Some(\"alice\")"),
    );
    check(
        review(ReviewState::Approved),
        Some(&draft),
        Ok("ready by alice"),
    );
    // Look-alikes.
    check(
        review(ReviewState::Approved),
        Some(&ready),
        Err(Ignored::NotHeld),
    );
    check(
        review(ReviewState::Commented),
        Some(&ready),
        Err(Ignored::ReviewAsksNothing),
    );
    check(
        review(ReviewState::Dismissed),
        Some(&draft),
        Err(Ignored::ReviewAsksNothing),
    );
    check(
        review(ReviewState::Approved),
        None,
        Err(Ignored::NotForgesPullRequest),
    );
    let closed = known(true, PullRequestState::Closed);
    check(
        review(ReviewState::Approved),
        Some(&closed),
        Err(Ignored::PullRequestClosed),
    );
}

#[test]
fn checks_on_forges_head_commit() {
    let open = known(false, PullRequestState::Open);
    let pr = Some(&open);
    check(
        check_run("abc123", CheckConclusion::Failure),
        pr,
        Ok("follow-up check ci / test by None"),
    );
    check(
        check_run("ABC123", CheckConclusion::TimedOut),
        pr,
        Ok("follow-up check ci / test by None"),
    );
    // Look-alikes.
    check(
        check_run("abc123", CheckConclusion::Success),
        pr,
        Err(Ignored::CheckNotFailed),
    );
    check(
        check_run("abc123", CheckConclusion::Cancelled),
        pr,
        Err(Ignored::CheckNotFailed),
    );
    check(
        check_run("abc123", CheckConclusion::Skipped),
        pr,
        Err(Ignored::CheckNotFailed),
    );
    check(
        check_run("0ld5ha", CheckConclusion::Failure),
        pr,
        Err(Ignored::NotTheHeadCommit),
    );
    check(
        check_run("abc123", CheckConclusion::Failure),
        None,
        Err(Ignored::NotForgesPullRequest),
    );
    let closed = known(false, PullRequestState::Closed);
    check(
        check_run("abc123", CheckConclusion::Failure),
        Some(&closed),
        Err(Ignored::PullRequestClosed),
    );
}

#[test]
fn issues_become_tasks() {
    check(
        labelled("forge"),
        None,
        Ok("task #3 \"Handle empty input\\n\\nIt panics on \\\"\\\".\" by alice"),
    );
    check(
        labelled("Forge"),
        None,
        Ok("task #3 \"Handle empty input\\n\\nIt panics on \\\"\\\".\" by alice"),
    );
    check(
        issue_comment("alice", "@forge add a guard for empty input"),
        None,
        Ok("task #3 \"add a guard for empty input\" by alice"),
    );
    // Look-alikes.
    check(labelled("bug"), None, Err(Ignored::OtherLabel));
    check(labelled("forge-later"), None, Err(Ignored::OtherLabel));
    check(issue_comment("alice", "@forge"), None, Err(Ignored::NoTask));
    check(
        issue_comment("alice", "ask forge to do it"),
        None,
        Err(Ignored::NoMention),
    );
    check(
        issue_comment("forge-bot[bot]", "@forge opened #9"),
        None,
        Err(Ignored::OwnComment),
    );
}

#[test]
fn closing_and_other_events() {
    let open = known(false, PullRequestState::Open);
    let closed = |number| ForgeEvent::PullRequestClosed {
        repo: repo(),
        number,
        merged: true,
    };
    check(closed(7), Some(&open), Ok("closed merged=true"));
    check(closed(8), Some(&open), Err(Ignored::NotForgesPullRequest));
    check(
        ForgeEvent::Other {
            name: "ping".into(),
        },
        None,
        Err(Ignored::OtherEvent("ping".into())),
    );
}

#[test]
fn who_must_be_a_writer() {
    let task_id = TaskId::new("t-1").unwrap();
    let check_failed = Trigger::FollowUp {
        task_id: task_id.clone(),
        number: 7,
        cause: FollowupCause::CheckFailed {
            check_id: 1,
            name: "ci".into(),
        },
        actor: None,
    };
    assert_eq!(check_failed.actor(), None);
    let ready = Trigger::MarkReady {
        task_id: task_id.clone(),
        number: 7,
        actor: "bob".into(),
    };
    assert_eq!(ready.actor(), Some("bob"));
    assert_eq!(
        Trigger::Closed {
            task_id,
            merged: false
        }
        .actor(),
        None
    );
}
