//! `forge poll` on the event path: a table of polled events → what each came to; a second
//! pass acts on nothing again; an event seen by a webhook and by a poll acts once; a forge
//! down keeps the cursor and the next pass catches up.

use forge_domain::ForgeError;
use forge_domain::forges::{CheckConclusion, ForgeEvent};
use pretty_assertions::assert_eq;

use super::*;

const T1: &str = "2026-11-28T05:00:01Z";
const T2: &str = "2026-11-28T05:00:02Z";
const T3: &str = "2026-11-28T05:00:03Z";

fn comment(id: u64, author: &str, body: &str) -> ForgeEvent {
    ForgeEvent::PullRequestComment {
        repo: repo(),
        number: 1,
        comment_id: id,
        author: author.into(),
        body: body.into(),
    }
}

fn labelled(issue: u64, label: &str, author: &str) -> ForgeEvent {
    ForgeEvent::IssueLabelled {
        repo: repo(),
        issue,
        label: label.into(),
        author: author.into(),
        title: "Greet in French".into(),
        body: "Bonjour".into(),
    }
}

fn check(id: u64, sha: &str, conclusion: CheckConclusion) -> ForgeEvent {
    ForgeEvent::CheckCompleted {
        repo: repo(),
        head_sha: sha.into(),
        check_id: id,
        name: "ci / test".into(),
        conclusion,
        pull_requests: vec![1],
    }
}

/// What an outcome is, without the fresh task ids.
fn shape(outcome: &FeedbackOutcome) -> String {
    match outcome {
        FeedbackOutcome::FollowUpQueued { parent, .. } => format!("follow-up of {parent}"),
        FeedbackOutcome::IssueTaskQueued { issue, .. } => format!("task for issue #{issue}"),
        FeedbackOutcome::NotAllowed { actor } => format!("{actor} may not steer"),
        FeedbackOutcome::Ignored { reason } => format!("ignored: {reason:?}"),
        FeedbackOutcome::Replayed => "replayed".into(),
        other => format!("{other:?}"),
    }
}

async fn poll_shapes(s: &Setup, extra: &[String]) -> (Vec<String>, PollReport) {
    let mut reports = s.feedback.poll(extra).await.unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = reports.remove(0);
    (report.outcomes.iter().map(shape).collect(), report)
}

#[tokio::test]
async fn polled_events_take_the_webhooks_path_once() {
    let s = setup(3).await;
    for (time, event) in [
        (T1, comment(501, "alice", "@forge use a constant")),
        (T1, comment(502, "rita", "@forge delete everything")),
        (T1, comment(503, "alice", "looks fine")),
        (T2, comment(504, "forge-bot", "@forge done")),
        (T2, labelled(12, "forge", "alice")),
        (T2, labelled(13, "bug", "alice")),
        (T2, check(505, "aaa", CheckConclusion::Success)),
        (T3, check(506, "aaa", CheckConclusion::Failure)),
    ] {
        s.forge.add_event(time, event);
    }
    let (shapes, report) = poll_shapes(&s, &[]).await;
    assert_eq!(
        shapes,
        [
            "follow-up of q-1",
            "rita may not steer",
            "ignored: NoMention",
            "ignored: OwnComment",
            "task for issue #12",
            "ignored: OtherLabel",
            "ignored: CheckNotFailed",
            "follow-up of q-1",
        ]
    );
    assert_eq!(report.cursor.as_deref(), Some(T3));
    assert_eq!(report.error, None);
    assert_eq!(report.repo, "github.com/octo/hello");
    // forge's open pull request #1 and its head commit were asked about.
    assert!(
        s.forge
            .calls()
            .contains(&"events since the start for #1".to_owned()),
        "{:?}",
        s.forge.calls()
    );
    assert_eq!(queued(&s.queue).await.len(), 3);
    // The next pass reads from the cursor (inclusive): the newest event again, acted on
    // no more.
    let (shapes, report) = poll_shapes(&s, &[]).await;
    assert_eq!(shapes, ["replayed"]);
    assert_eq!(report.cursor.as_deref(), Some(T3));
    assert!(
        s.forge
            .calls()
            .iter()
            .any(|c| c == &format!("events since {T3} for #1")),
        "{:?}",
        s.forge.calls()
    );
    assert_eq!(queued(&s.queue).await.len(), 3);
}

#[tokio::test]
async fn an_event_seen_by_webhook_and_by_poll_acts_once() {
    let s = setup(3).await;
    let by_webhook = comment(601, "alice", "@forge first");
    let out = s
        .feedback
        .deliver(
            ForgeKind::Github,
            "d-601",
            std::slice::from_ref(&by_webhook),
        )
        .await
        .unwrap();
    assert!(
        matches!(out[0], FeedbackOutcome::FollowUpQueued { .. }),
        "{out:?}"
    );
    let by_poll = comment(602, "alice", "@forge second");
    s.forge.add_event(T1, by_webhook);
    s.forge.add_event(T2, by_poll.clone());
    let (shapes, _) = poll_shapes(&s, &[]).await;
    assert_eq!(shapes, ["replayed", "follow-up of q-1"]);
    // The webhook of the event the poll acted on, under its own delivery id.
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "d-602", &[by_poll])
        .await
        .unwrap();
    assert_eq!(out, [FeedbackOutcome::Replayed]);
    assert_eq!(queued(&s.queue).await.len(), 2);
}

#[tokio::test]
async fn a_forge_down_keeps_the_cursor_and_the_next_pass_catches_up() {
    let s = setup(3).await;
    s.forge.add_event(T1, comment(701, "alice", "@forge one"));
    let (_, first) = poll_shapes(&s, &[]).await;
    assert_eq!(first.cursor.as_deref(), Some(T1));
    s.forge.add_event(T2, comment(702, "alice", "@forge two"));
    s.forge.fail_next(ForgeError::Io {
        context: "github: GET /repos/octo/hello/issues/comments".into(),
        message: "502 Bad Gateway".into(),
    });
    let (shapes, down) = poll_shapes(&s, &[]).await;
    assert_eq!(shapes, Vec::<String>::new());
    assert_eq!(
        down.error.as_deref(),
        Some("github: GET /repos/octo/hello/issues/comments: 502 Bad Gateway")
    );
    assert_eq!(queued(&s.queue).await.len(), 1);
    // The cursor did not move: the next pass reads from T1 and acts on "two" once.
    let (shapes, next) = poll_shapes(&s, &[]).await;
    assert_eq!(shapes, ["replayed", "follow-up of q-1"]);
    assert_eq!(next.cursor.as_deref(), Some(T2));
    assert_eq!(queued(&s.queue).await.len(), 2);
}

#[tokio::test]
async fn a_named_repository_is_polled_and_a_wrong_one_refused() {
    let s = setup(3).await;
    // The open pull request's repository, named again: polled once.
    let (shapes, _) = poll_shapes(&s, &["https://github.com/octo/hello.git".to_owned()]).await;
    assert_eq!(shapes, Vec::<String>::new());
    for (url, why) in [
        (
            "https://git.example.com/o/r.git",
            "invalid request: --repo https://git.example.com/o/r.git: no [forges.NAME] with \
             its token set serves git.example.com",
        ),
        (
            "/srv/git/app",
            "invalid request: --repo /srv/git/app: not a forge repository URL \
             (https://HOST/OWNER/REPO)",
        ),
    ] {
        let err = s.feedback.poll(&[url.to_owned()]).await.unwrap_err();
        assert_eq!(err.to_string(), why);
    }
    // A closed pull request is polled no more.
    s.feedback
        .deliver(
            ForgeKind::Github,
            "x-1",
            &[ForgeEvent::PullRequestClosed {
                repo: repo(),
                number: 1,
                merged: true,
            }],
        )
        .await
        .unwrap();
    assert_eq!(s.feedback.poll(&[]).await.unwrap(), Vec::new());
}
