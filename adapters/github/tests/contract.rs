//! The GitHub adapter against the contract fake: every request it makes must be an
//! operation of GitHub's OpenAPI description with a body its schema accepts (the fake
//! records any that is not, and each test ends by asserting there were none).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

use std::sync::{Arc, OnceLock};

use forge_adapter_github::GithubForge;
use forge_domain::ForgeError;
use forge_domain::forges::{
    GithubRole, Permission, PullRequestBody, PullRequestState, RepoRef, ReviewState,
};
use forge_ports::Forge;
use forge_testkit::github::{
    FakeCheckRun, FakeReview, FakeReviewComment, Fault, GithubFake, OpenApi, ensure_installed,
};
use pretty_assertions::assert_eq;

const TOKEN: &str = "ghp_contractTestToken0123456789";

fn contract() -> Arc<OpenApi> {
    static CONTRACT: OnceLock<Arc<OpenApi>> = OnceLock::new();
    CONTRACT
        .get_or_init(|| {
            let path = ensure_installed().unwrap();
            Arc::new(OpenApi::load(&path).unwrap())
        })
        .clone()
}

async fn github() -> (GithubFake, GithubForge) {
    let fake = GithubFake::start(contract(), TOKEN).await.unwrap();
    let forge = GithubForge::new(&fake.api_url(), TOKEN.to_owned()).unwrap();
    (fake, forge)
}

fn repo() -> RepoRef {
    RepoRef::parse("https://github.com/octo/hello.git").unwrap()
}

fn body(title: &str, draft: bool) -> PullRequestBody {
    PullRequestBody {
        title: title.into(),
        body: "<!-- forge-task: t-1 -->\nthe report".into(),
        draft,
    }
}

fn no_violations(fake: &GithubFake) {
    assert_eq!(fake.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn a_pull_request_is_opened_found_updated_and_marked_ready() {
    let (fake, gh) = github().await;
    assert_eq!(
        gh.find_pull_request(&repo(), "forge/t-1").await.unwrap(),
        None
    );
    let opened = gh
        .open_pull_request(&repo(), "forge/t-1", "main", &body("fix: add", true))
        .await
        .unwrap();
    assert_eq!(opened.number, 1);
    assert!(opened.draft);
    assert_eq!(opened.state, PullRequestState::Open);
    assert_eq!(opened.url, "https://github.com/octo/hello/pull/1");
    // A second open for the same head is GitHub's 422, said as an invalid request.
    let again = gh
        .open_pull_request(&repo(), "forge/t-1", "main", &body("fix: add", true))
        .await
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "invalid request: github: POST /repos/octo/hello/pulls: 422 Validation Failed \
         (A pull request already exists for octo:forge/t-1.)"
    );
    let found = gh.find_pull_request(&repo(), "forge/t-1").await.unwrap();
    assert_eq!(found, Some(opened.clone()));
    let updated = gh
        .update_pull_request(&repo(), 1, &body("fix: add (2)", true))
        .await
        .unwrap();
    assert_eq!(updated.number, 1);
    gh.set_draft(&repo(), 1, false).await.unwrap();
    assert!(!fake.state().pulls[0].draft);
    gh.set_draft(&repo(), 1, true).await.unwrap();
    assert!(fake.state().pulls[0].draft);
    assert_eq!(fake.state().pulls[0].title, "fix: add (2)");
    no_violations(&fake);
}

#[tokio::test]
async fn comments_replies_reviews_threads_and_checks_are_read_and_written() {
    let (fake, gh) = github().await;
    gh.open_pull_request(&repo(), "forge/t-1", "main", &body("t", false))
        .await
        .unwrap();
    {
        let mut s = fake.state();
        s.reviews.push(FakeReview {
            id: 50,
            repo: "octo/hello".into(),
            number: 1,
            author: "alice".into(),
            state: "CHANGES_REQUESTED".into(),
            body: "Two things.".into(),
        });
        for (id, in_reply_to, body) in [(60, None, "Name it."), (61, Some(60), "@forge please")] {
            s.review_comments.push(FakeReviewComment {
                id,
                repo: "octo/hello".into(),
                number: 1,
                review_id: Some(50),
                path: "src/a.rs".into(),
                line: Some(3),
                body: body.into(),
                in_reply_to,
                author: "alice".into(),
            });
        }
        s.check_runs.push(FakeCheckRun {
            id: 70,
            repo: "octo/hello".into(),
            name: "test".into(),
            head_sha: "abc".into(),
            conclusion: "failure".into(),
            title: Some("1 failed".into()),
            summary: None,
            text: Some("FAIL tests::add".into()),
            annotations: vec![("src/a.rs".into(), 3, 3, "failure".into(), "boom".into())],
        });
    }
    let review = gh.read_review(&repo(), 1, 50).await.unwrap();
    assert_eq!(review.state, ReviewState::ChangesRequested);
    assert_eq!(review.comments.len(), 2);
    let thread = gh.read_thread(&repo(), 1, 61).await.unwrap();
    let bodies: Vec<&str> = thread.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(bodies, ["Name it.", "@forge please"]);
    let reply = gh
        .reply_in_thread(&repo(), 1, 61, None, "Done in abc123.")
        .await
        .unwrap();
    assert!(reply > 0);
    let comment = gh.comment(&repo(), 1, "Opened.").await.unwrap();
    let conversation = gh.read_thread(&repo(), 1, comment).await.unwrap();
    assert_eq!(conversation.len(), 1);
    let check = gh.read_check_run(&repo(), 70).await.unwrap();
    assert_eq!(check.text.as_deref(), Some("FAIL tests::add"));
    assert_eq!(check.annotations[0].message, "boom");
    no_violations(&fake);
}

#[tokio::test]
async fn permissions_writers_readers_and_strangers() {
    let (fake, gh) = github().await;
    {
        let mut s = fake.state();
        for (user, p) in [("alice", "write"), ("bob", "read"), ("root", "admin")] {
            s.permissions
                .insert(("octo/hello".into(), user.into()), p.into());
        }
    }
    for (user, want) in [
        ("alice", Permission::Github(GithubRole::Write)),
        ("bob", Permission::Github(GithubRole::Read)),
        ("root", Permission::Github(GithubRole::Admin)),
        ("stranger", Permission::None),
        // Not a login at all: not asked.
        ("../admin", Permission::None),
        ("forge-bot[bot]", Permission::None),
    ] {
        assert_eq!(gh.permission(&repo(), user).await.unwrap(), want, "{user}");
    }
    no_violations(&fake);
}

#[tokio::test]
async fn rate_limits_are_waited_out_and_faults_are_said_without_the_token() {
    let (fake, gh) = github().await;
    fake.fail_next(Fault {
        status: 429,
        headers: vec![("retry-after".into(), "1".into())],
        body: r#"{"message":"API rate limit exceeded"}"#.into(),
    });
    assert_eq!(
        gh.find_pull_request(&repo(), "forge/t-1").await.unwrap(),
        None
    );
    assert_eq!(
        fake.requests().len(),
        2,
        "the rate-limited request was retried"
    );
    // A forge down: nothing listens.
    let down = GithubForge::new("http://127.0.0.1:9", TOKEN.to_owned()).unwrap();
    let err = down
        .find_pull_request(&repo(), "forge/t-1")
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Io { .. }), "{err}");
    assert!(!err.to_string().contains(TOKEN));
    // A wrong token is GitHub's 401, not an invalid request.
    let wrong = GithubForge::new(&fake.api_url(), "ghp_wrong".into()).unwrap();
    let err = wrong
        .find_pull_request(&repo(), "forge/t-1")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "github: GET /repos/octo/hello/pulls?state=open&head=octo:forge/t-1: 401 Bad credentials"
    );
    no_violations(&fake);
}

/// `forge poll`'s read: the repository's conversation and inline comments, the labels put
/// on issues, and per open pull request of forge's its reviews, its head's check runs and
/// whether a person closed it — in the webhook's shape, with the forge's newest time as the
/// cursor; read again from the cursor, only what is at or after it.
#[tokio::test]
async fn events_are_read_since_the_cursor_as_webhooks_would_carry_them() {
    use forge_domain::forges::{CheckConclusion, ForgeEvent, PolledPull};
    use forge_testkit::github::{FakeComment, FakeLabel, state::stamp};

    let (fake, gh) = github().await;
    let opened = gh
        .open_pull_request(&repo(), "forge/t-1", "main", &body("fix: add", false))
        .await
        .unwrap();
    let gone = gh
        .open_pull_request(&repo(), "forge/t-2", "main", &body("fix: other", false))
        .await
        .unwrap();
    let newest = {
        let mut s = fake.state();
        let issue = s.number("octo/hello");
        let on_pull = s.id();
        s.comments.push(FakeComment {
            id: on_pull,
            repo: "octo/hello".into(),
            number: opened.number,
            author: "alice".into(),
            body: "@forge rename it".into(),
        });
        let on_issue = s.id();
        s.comments.push(FakeComment {
            id: on_issue,
            repo: "octo/hello".into(),
            number: issue,
            author: "alice".into(),
            body: "@forge add a README".into(),
        });
        let inline = s.id();
        s.review_comments.push(FakeReviewComment {
            id: inline,
            repo: "octo/hello".into(),
            number: opened.number,
            review_id: None,
            path: "src/lib.rs".into(),
            line: Some(3),
            body: "@forge a constant".into(),
            in_reply_to: None,
            author: "bob".into(),
        });
        let label = s.id();
        s.labels.push(FakeLabel {
            id: label,
            repo: "octo/hello".into(),
            issue,
            label: "forge".into(),
            actor: "carol".into(),
            title: "Greet".into(),
            body: "in French".into(),
        });
        let review = s.id();
        s.reviews.push(FakeReview {
            id: review,
            repo: "octo/hello".into(),
            number: opened.number,
            author: "alice".into(),
            state: "CHANGES_REQUESTED".into(),
            body: "see inline".into(),
        });
        let check = s.id();
        s.check_runs.push(FakeCheckRun {
            id: check,
            repo: "octo/hello".into(),
            name: "ci / test".into(),
            head_sha: "abc123".into(),
            conclusion: "failure".into(),
            title: None,
            summary: None,
            text: None,
            annotations: Vec::new(),
        });
        // Another commit's check is not read.
        let other = FakeCheckRun {
            id: s.id(),
            head_sha: "fff000".into(),
            ..s.check_runs[0].clone()
        };
        s.check_runs.push(other);
        s.pulls[1].state = "closed".into();
        s.pulls[1].merged = true;
        check
    };
    let pulls = [
        PolledPull {
            number: opened.number,
            head_sha: "abc123".into(),
        },
        PolledPull {
            number: gone.number,
            head_sha: String::new(),
        },
    ];
    let read = gh.events_since(&repo(), &pulls, None).await.unwrap();
    let kinds: Vec<String> = read
        .events
        .iter()
        .map(|e| match e {
            ForgeEvent::PullRequestComment { number, author, .. } => {
                format!("pull comment #{number} by {author}")
            }
            ForgeEvent::IssueComment { issue, author, .. } => {
                format!("issue comment #{issue} by {author}")
            }
            ForgeEvent::ReviewComment {
                number,
                author,
                comment,
                ..
            } => format!(
                "inline #{number} by {author} at {}:{:?}",
                comment.path, comment.line
            ),
            ForgeEvent::IssueLabelled {
                issue,
                label,
                author,
                title,
                ..
            } => format!("label {label} on #{issue} by {author}: {title}"),
            ForgeEvent::Review {
                number,
                author,
                state,
                ..
            } => format!("review #{number} by {author}: {state:?}"),
            ForgeEvent::CheckCompleted {
                name,
                conclusion,
                pull_requests,
                head_sha,
                ..
            } => format!("check {name} on {head_sha} {conclusion:?} for {pull_requests:?}"),
            ForgeEvent::PullRequestClosed { number, merged, .. } => {
                format!("closed #{number} merged {merged}")
            }
            ForgeEvent::Other { name } => format!("other {name}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "pull comment #1 by alice",
            "issue comment #3 by alice",
            "inline #1 by bob at src/lib.rs:Some(3)",
            "label forge on #3 by carol: Greet",
            "review #1 by alice: ChangesRequested",
            "check ci / test on abc123 Failure for [1]",
            "closed #2 merged true",
        ]
    );
    assert!(matches!(
        read.events[5],
        ForgeEvent::CheckCompleted {
            conclusion: CheckConclusion::Failure,
            ..
        }
    ));
    assert_eq!(read.cursor, Some(stamp(newest)));
    // From the cursor: the newest check again (inclusive) and the closed pull request (not
    // a matter of time); nothing older.
    let again = gh
        .events_since(&repo(), &pulls, read.cursor.as_deref())
        .await
        .unwrap();
    assert_eq!(again.events, read.events[5..].to_vec());
    assert_eq!(again.cursor, read.cursor);
    no_violations(&fake);
    // A forge down: an error that says so (the caller keeps its cursor).
    let down = GithubForge::new("http://127.0.0.1:9", TOKEN.to_owned()).unwrap();
    let err = down.events_since(&repo(), &pulls, None).await.unwrap_err();
    assert!(matches!(err, ForgeError::Io { .. }), "{err}");
}
