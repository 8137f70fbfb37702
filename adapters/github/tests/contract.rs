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
