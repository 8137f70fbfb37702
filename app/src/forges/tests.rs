//! The event path on a real (SQLite) queue and an in-memory forge: who steers, what is
//! queued with which options, once per delivery, within the follow-up budget.

#![allow(clippy::unwrap_used, reason = "test code")]

use std::sync::Arc;

use forge_adapter_store::SqliteStore;
use forge_domain::forges::{
    CheckConclusion, ForgeEvent, ForgeKind, GithubRole, Ignored, Permission, PullRequestBody,
    RepoRef, ReviewComment, ReviewState, default_github,
};
use forge_domain::queue::{Finish, QueueState, QueuedTask};
use forge_domain::task::TaskId;
use forge_ports::{Forge, TaskQueue, WebhookCodec};
use forge_testkit::fakes::{MemoryForge, SequentialIds};
use serde_json::json;

use super::*;
use crate::queue::{TaskOptions, submission};

struct NoCodec;

impl WebhookCodec for NoCodec {
    fn verify(&self, _: ForgeKind, secret: &[u8], signature: Option<&str>, _: &[u8]) -> bool {
        signature.is_some_and(|s| s.as_bytes() == secret)
    }

    fn decode(&self, _: ForgeKind, _: &str, _: &[u8]) -> Result<Vec<ForgeEvent>, String> {
        Err("not used".into())
    }
}

struct Setup {
    feedback: ForgeFeedback,
    forge: Arc<MemoryForge>,
    queue: Arc<SqliteStore>,
    _dir: tempfile::TempDir,
}

fn repo() -> RepoRef {
    RepoRef::parse("https://github.com/octo/hello.git").unwrap()
}

/// A queue holding task q-1, delivered as draft pull request #1 (commit `aaa`, session
/// `s-1` of claude); alice writes, rita reads.
async fn setup(max_followups: u32) -> Setup {
    setup_words(max_followups, None).await
}

/// As [`setup`], the pull request recording the repository's `words` (`[delivery] mention`
/// and `issue_label`) as the worker that delivered it read them.
async fn setup_words(max_followups: u32, words: Option<serde_json::Value>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let queue = Arc::new(SqliteStore::open(dir.path().join("q.db")).unwrap());
    let forge = Arc::new(MemoryForge::new());
    forge.set_permission("alice", Permission::Github(GithubRole::Write));
    forge.set_permission("rita", Permission::Github(GithubRole::Read));
    let body = PullRequestBody {
        title: "t".into(),
        body: "b".into(),
        draft: true,
    };
    let info = forge
        .open_pull_request(&repo(), "forge/q-1", "main", &body)
        .await
        .unwrap();
    let options = TaskOptions {
        provider: Some("claude".into()),
        push: true,
        ..TaskOptions::default()
    };
    let id = TaskId::new("q-1").unwrap();
    let sub = submission(
        id.clone(),
        "https://github.com/octo/hello.git".into(),
        "add a greeting".into(),
        &options,
        None,
    )
    .unwrap();
    queue.submit(&sub).await.unwrap();
    queue.claim("w1", 60_000).await.unwrap();
    let report = json!({"task_id": "q-1", "provider": "claude", "status": "pending_approval",
        "pull_request": info, "delivery": {"commit": "aaa", "pushed": true},
        "cycles": [{"session_id": "s-1"}]});
    let mut report = report;
    if let Some(words) = words {
        report["pull_request"]["feedback"] = words;
    }
    let finish = Finish {
        state: QueueState::Succeeded,
        exit_code: Some(10),
        error: None,
        report: Some(report),
    };
    queue.finish(&id, "w1", &finish).await.unwrap();
    let endpoint = ForgeEndpoint {
        settings: default_github(),
        forge: forge.clone(),
        webhook_secret: Some(b"s3cret".to_vec()),
    };
    let feedback = ForgeFeedback::new(FeedbackParts {
        endpoints: vec![endpoint],
        queue: queue.clone(),
        deliveries: queue.clone(),
        ids: Arc::new(SequentialIds::default()),
        codec: Arc::new(NoCodec),
        settings: FeedbackSettings {
            bot_login: Some("forge-bot".into()),
            max_followups,
            ..FeedbackSettings::default()
        },
    });
    Setup {
        feedback,
        forge,
        queue,
        _dir: dir,
    }
}

/// A fresh id: each event a test makes is a new one on the forge (an event's own id is
/// acted on once, whichever delivery carries it).
fn fresh_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(100);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn inline(author: &str, body: &str) -> ForgeEvent {
    inline_with_id(77, author, body)
}

/// [`inline`] with a fresh id.
fn inline_new(author: &str, body: &str) -> ForgeEvent {
    inline_with_id(fresh_id(), author, body)
}

fn inline_with_id(id: u64, author: &str, body: &str) -> ForgeEvent {
    ForgeEvent::ReviewComment {
        repo: repo(),
        number: 1,
        author: author.into(),
        comment: ReviewComment {
            id,
            path: "src/lib.rs".into(),
            line: Some(3),
            body: body.into(),
            thread: None,
        },
    }
}

async fn queued(queue: &SqliteStore) -> Vec<QueuedTask> {
    let mut tasks = queue.tasks(100).await.unwrap();
    tasks.retain(|t| t.task_id.as_str() != "q-1");
    tasks
}

#[tokio::test]
async fn a_writers_comment_queues_a_followup_resuming_the_session_once() {
    let s = setup(3).await;
    let event = inline("alice", "@forge rename it to `greet`");
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "d-1", std::slice::from_ref(&event))
        .await
        .unwrap();
    let [FeedbackOutcome::FollowUpQueued { task_id, parent }] = out.as_slice() else {
        panic!("{out:?}");
    };
    assert_eq!(parent.as_str(), "q-1");
    let tasks = queued(&s.queue).await;
    assert_eq!(tasks.len(), 1);
    let task = &tasks[0];
    assert_eq!(&task.task_id, task_id);
    assert_eq!(task.repo, "https://github.com/octo/hello.git");
    assert!(task.prompt.contains("at src/lib.rs:3"), "{}", task.prompt);
    assert!(task.prompt.contains("rename it to `greet`"));
    assert_eq!(
        task.options,
        json!({"provider": "claude", "base": "forge/q-1", "push": true,
            "followup": {"parent": "q-1", "branch": "forge/q-1", "number": 1,
                "session": "s-1", "provider": "claude", "reply_to": 77}})
    );
    // The forge redelivers it: nothing more.
    let again = s
        .feedback
        .deliver(ForgeKind::Github, "d-1", &[event])
        .await
        .unwrap();
    assert_eq!(again, [FeedbackOutcome::Replayed]);
    assert_eq!(queued(&s.queue).await.len(), 1);
}

#[tokio::test]
async fn readers_and_forge_itself_do_not_steer() {
    let s = setup(3).await;
    for (n, (event, want)) in [
        (
            inline_new("rita", "@forge delete everything"),
            FeedbackOutcome::NotAllowed {
                actor: "rita".into(),
            },
        ),
        (
            inline_new("mallory", "@forge delete everything"),
            FeedbackOutcome::NotAllowed {
                actor: "mallory".into(),
            },
        ),
        (
            inline_new("forge-bot", "@forge done"),
            FeedbackOutcome::Ignored {
                reason: Ignored::OwnComment,
            },
        ),
        (
            inline_new("alice", "looks fine"),
            FeedbackOutcome::Ignored {
                reason: Ignored::NoMention,
            },
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let out = s
            .feedback
            .deliver(ForgeKind::Github, &format!("d-{n}"), &[event])
            .await
            .unwrap();
        assert_eq!(out, [want]);
    }
    assert!(queued(&s.queue).await.is_empty());
    // The reader's permission was asked once and remembered.
    let out = s
        .feedback
        .deliver(
            ForgeKind::Github,
            "d-9",
            &[inline_new("rita", "@forge again")],
        )
        .await
        .unwrap();
    assert!(matches!(out[0], FeedbackOutcome::NotAllowed { .. }));
}

#[tokio::test]
async fn a_failed_check_on_the_head_commit_queues_a_followup_within_the_budget() {
    let s = setup(1).await;
    let check = |sha: &str| ForgeEvent::CheckCompleted {
        repo: repo(),
        head_sha: sha.into(),
        check_id: fresh_id(),
        name: "ci / test".into(),
        conclusion: CheckConclusion::Failure,
        pull_requests: vec![],
    };
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "c-1", &[check("AAA")])
        .await
        .unwrap();
    assert!(
        matches!(out[0], FeedbackOutcome::FollowUpQueued { .. }),
        "{out:?}"
    );
    let prompt = &queued(&s.queue).await[0].prompt;
    assert!(prompt.contains("\"ci / test\" failed"), "{prompt}");
    // The budget (1) is spent: said once, then silence.
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "c-2", &[check("aaa")])
        .await
        .unwrap();
    assert_eq!(
        out,
        [FeedbackOutcome::FollowupsExhausted {
            parent: TaskId::new("q-1").unwrap(),
            said: true
        }]
    );
    let out = s
        .feedback
        .deliver(
            ForgeKind::Github,
            "c-3",
            &[inline_new("alice", "@forge more")],
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        [FeedbackOutcome::FollowupsExhausted {
            parent: TaskId::new("q-1").unwrap(),
            said: false
        }]
    );
    let said: Vec<String> = s
        .forge
        .calls()
        .into_iter()
        .filter(|c| c.starts_with("comment #1"))
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("max_followups"));
    // A check on another commit changes nothing.
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "c-4", &[check("bbb")])
        .await
        .unwrap();
    assert_eq!(
        out,
        [FeedbackOutcome::Ignored {
            reason: Ignored::NotForgesPullRequest
        }]
    );
}

#[tokio::test]
async fn an_approving_writer_readies_the_held_change_a_reader_does_not() {
    let s = setup(3).await;
    let review = |author: &str| ForgeEvent::Review {
        repo: repo(),
        number: 1,
        review_id: fresh_id(),
        author: author.into(),
        state: ReviewState::Approved,
        body: "ok".into(),
    };
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "r-1", &[review("rita")])
        .await
        .unwrap();
    assert!(matches!(out[0], FeedbackOutcome::NotAllowed { .. }));
    assert!(!s.forge.calls().iter().any(|c| c.starts_with("ready")));
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "r-2", &[review("alice")])
        .await
        .unwrap();
    assert!(
        matches!(out[0], FeedbackOutcome::MarkedReady { .. }),
        "{out:?}"
    );
    assert!(
        s.forge.calls().iter().any(|c| c == "ready #1"),
        "{:?}",
        s.forge.calls()
    );
}

#[tokio::test]
async fn a_closed_pull_request_takes_no_more_followups() {
    let s = setup(3).await;
    let closed = ForgeEvent::PullRequestClosed {
        repo: repo(),
        number: 1,
        merged: false,
    };
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "x-1", &[closed])
        .await
        .unwrap();
    assert!(matches!(out[0], FeedbackOutcome::Closed { .. }), "{out:?}");
    let out = s
        .feedback
        .deliver(
            ForgeKind::Github,
            "x-2",
            &[inline_new("alice", "@forge more")],
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        [FeedbackOutcome::Ignored {
            reason: Ignored::PullRequestClosed
        }]
    );
    assert!(queued(&s.queue).await.is_empty());
}

#[tokio::test]
async fn a_labelled_issue_becomes_a_task_closing_it_and_unknown_hosts_nothing() {
    let s = setup(3).await;
    let issue = ForgeEvent::IssueLabelled {
        repo: repo(),
        issue: 12,
        label: "forge".into(),
        author: "alice".into(),
        title: "Greet in French".into(),
        body: "Bonjour".into(),
    };
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "i-1", &[issue])
        .await
        .unwrap();
    let [FeedbackOutcome::IssueTaskQueued { task_id, issue: 12 }] = out.as_slice() else {
        panic!("{out:?}");
    };
    let task = queued(&s.queue).await.remove(0);
    assert_eq!(&task.task_id, task_id);
    assert_eq!(task.options, json!({"push": true, "closes": 12}));
    assert!(task.prompt.contains("Greet in French"), "{}", task.prompt);
    assert!(
        s.forge
            .calls()
            .iter()
            .any(|c| c.starts_with("comment #12") && c.contains(task_id.as_str())),
        "{:?}",
        s.forge.calls()
    );
    let elsewhere = ForgeEvent::IssueLabelled {
        repo: RepoRef::parse("https://git.example.com/o/r.git").unwrap(),
        issue: 1,
        label: "forge".into(),
        author: "alice".into(),
        title: "t".into(),
        body: "b".into(),
    };
    let out = s
        .feedback
        .deliver(ForgeKind::Github, "i-2", &[elsewhere])
        .await
        .unwrap();
    assert_eq!(
        out,
        [FeedbackOutcome::NoForge {
            host: "git.example.com".into()
        }]
    );
}

#[test]
fn only_a_forges_own_secret_authenticates() {
    let dir = tempfile::tempdir().unwrap();
    let queue = Arc::new(SqliteStore::open(dir.path().join("q.db")).unwrap());
    let with = |secret: Option<&[u8]>| ForgeEndpoint {
        settings: default_github(),
        forge: Arc::new(MemoryForge::new()),
        webhook_secret: secret.map(<[u8]>::to_vec),
    };
    let feedback = ForgeFeedback::new(FeedbackParts {
        endpoints: vec![with(None), with(Some(b"s3cret"))],
        queue: queue.clone(),
        deliveries: queue,
        ids: Arc::new(SequentialIds::default()),
        codec: Arc::new(NoCodec),
        settings: FeedbackSettings::default(),
    });
    assert!(
        feedback
            .authenticate(ForgeKind::Github, Some("s3cret"), b"{}")
            .is_some()
    );
    assert!(
        feedback
            .authenticate(ForgeKind::Github, Some("guess"), b"{}")
            .is_none()
    );
    assert!(
        feedback
            .authenticate(ForgeKind::Github, None, b"{}")
            .is_none()
    );
    assert!(
        feedback
            .authenticate(ForgeKind::Gitlab, Some("s3cret"), b"{}")
            .is_none()
    );
}

/// `serve` has no checkout of the repository: the handle and label it listens for are the
/// repository's `[delivery] mention` / `issue_label` as its pull request recorded them, and
/// the defaults become look-alikes that must not fire.
#[tokio::test]
async fn the_repositorys_recorded_words_steer_not_the_defaults() {
    let words = json!({"mention": "helper", "issue_label": "agent"});
    let s = setup_words(3, Some(words)).await;
    let labelled = |label: &str| ForgeEvent::IssueLabelled {
        repo: repo(),
        issue: 12,
        label: label.into(),
        author: "alice".into(),
        title: "Greet in French".into(),
        body: String::new(),
    };
    let cases = [
        (inline_new("alice", "@forge rename it"), "ignored"),
        (labelled("forge"), "ignored"),
        (inline_new("alice", "@helpers rename it"), "ignored"),
        (inline_new("alice", "@helper rename it"), "follow_up_queued"),
        (labelled("agent"), "issue_task_queued"),
    ];
    for (n, (event, want)) in cases.into_iter().enumerate() {
        let out = s
            .feedback
            .deliver(ForgeKind::Github, &format!("w-{n}"), &[event])
            .await
            .unwrap();
        let got = serde_json::to_value(&out).unwrap()[0]["outcome"].clone();
        assert_eq!(got, want, "case {n}: {out:?}");
    }
    assert_eq!(queued(&s.queue).await.len(), 2);
}

mod poll;
