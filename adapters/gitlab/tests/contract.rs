//! The GitLab adapter against the contract fake: every request it makes must be a route of
//! GitLab's documented v4 API with its required parameters and no undocumented one (the
//! fake records any that is not, and each test ends by asserting there were none).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic is how a test fails"
)]

use std::time::{Duration, Instant};

use forge_adapter_gitlab::GitlabForge;
use forge_domain::ForgeError;
use forge_domain::forges::{
    Permission, PullRequestBody, PullRequestState, RepoRef, ReviewState, ThreadComment, may_steer,
};
use forge_ports::Forge;
use forge_testkit::gitlab::{Fault, GitlabFake};
use pretty_assertions::assert_eq;

const TOKEN: &str = "glpat-contractTestToken0123456789";
const HOST: &str = "gitlab.example.com";
const PROJECT: &str = "group/sub/app";

async fn gitlab() -> (GitlabFake, GitlabForge) {
    let fake = GitlabFake::start(HOST, TOKEN).await.unwrap();
    fake.state().add_project(PROJECT);
    let forge = GitlabForge::new(&fake.api_url(), TOKEN).unwrap();
    (fake, forge)
}

fn repo() -> RepoRef {
    RepoRef::parse(&format!("https://{HOST}/{PROJECT}.git")).unwrap()
}

fn body(title: &str, draft: bool) -> PullRequestBody {
    PullRequestBody {
        title: title.into(),
        body: "<!-- forge-task: t-1 -->\nthe report".into(),
        draft,
    }
}

/// No request broke the contract, and every one carried the token as `PRIVATE-TOKEN`.
fn held_to_the_contract(fake: &GitlabFake) {
    assert_eq!(fake.violations(), Vec::<String>::new());
    let auth = fake.state().auth.clone();
    assert!(auth.iter().all(|a| *a == "private-token"), "{auth:?}");
}

fn comment(id: u64, author: &str, body: &str) -> ThreadComment {
    ThreadComment {
        id,
        author: author.into(),
        body: body.into(),
    }
}

#[tokio::test]
async fn a_merge_request_is_opened_found_updated_and_marked_ready() {
    let (fake, gl) = gitlab().await;
    assert_eq!(
        gl.find_pull_request(&repo(), "forge/t-1").await.unwrap(),
        None
    );
    let opened = gl
        .open_pull_request(&repo(), "forge/t-1", "main", &body("fix: add", true))
        .await
        .unwrap();
    assert_eq!(opened.number, 1);
    assert!(opened.draft);
    assert_eq!(opened.state, PullRequestState::Open);
    assert_eq!(
        opened.url,
        "https://gitlab.example.com/group/sub/app/-/merge_requests/1"
    );
    assert_eq!(fake.state().merge_requests[0].title, "Draft: fix: add");
    // A second one for the branch is GitLab's 409, said as an invalid request.
    let again = gl
        .open_pull_request(&repo(), "forge/t-1", "main", &body("fix: add", true))
        .await
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "invalid request: gitlab: opening a merge request from forge/t-1 onto main: 409 \
         Another open merge request already exists for this source branch: !1"
    );
    let found = gl.find_pull_request(&repo(), "forge/t-1").await.unwrap();
    assert_eq!(found, Some(opened.clone()));
    assert_eq!(
        gl.find_pull_request(&repo(), "forge/t-2").await.unwrap(),
        None
    );
    // A new title keeps the draft it has.
    let updated = gl
        .update_pull_request(&repo(), 1, &body("fix: add (2)", false))
        .await
        .unwrap();
    assert!(updated.draft);
    assert_eq!(fake.state().merge_requests[0].title, "Draft: fix: add (2)");
    gl.set_draft(&repo(), 1, false).await.unwrap();
    assert_eq!(fake.state().merge_requests[0].title, "fix: add (2)");
    assert!(!fake.state().merge_requests[0].draft());
    // Already ready: only read.
    let before = fake.requests().len();
    gl.set_draft(&repo(), 1, false).await.unwrap();
    assert_eq!(fake.requests()[before..].len(), 1);
    assert_eq!(fake.requests()[before].method, "GET");
    gl.set_draft(&repo(), 1, true).await.unwrap();
    assert_eq!(fake.state().merge_requests[0].title, "Draft: fix: add (2)");
    assert_eq!(
        fake.state().merge_requests[0].description,
        "<!-- forge-task: t-1 -->\nthe report"
    );
    // GitLab noted each change of draft state; nobody wrote those.
    let system: Vec<String> = fake
        .state()
        .notes(PROJECT, 1)
        .iter()
        .filter(|n| n.system)
        .map(|n| n.body.clone())
        .collect();
    assert_eq!(
        system,
        [
            "marked this merge request as **ready**",
            "marked this merge request as **draft**"
        ]
    );
    // A closed merge request stays as it is.
    "closed".clone_into(&mut fake.state().merge_requests[0].state);
    let err = gl.set_draft(&repo(), 1, false).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request: gitlab: merge request !1 is closed, so it stays as it is"
    );
    held_to_the_contract(&fake);
}

#[tokio::test]
async fn notes_replies_and_threads() {
    let (fake, gl) = gitlab().await;
    gl.open_pull_request(&repo(), "forge/t-1", "main", &body("t", false))
        .await
        .unwrap();
    let (thread, first) =
        fake.state()
            .add_discussion(PROJECT, 1, "alice", "Name it.", Some(("src/a.rs", 3)));
    let (_, other) = fake
        .state()
        .add_discussion(PROJECT, 1, "bob", "@forge add a test", None);
    let said = gl.comment(&repo(), 1, "Working on it.").await.unwrap();
    // A reply in the thread a webhook named.
    let reply = gl
        .reply_in_thread(&repo(), 1, first, Some(&thread), "Renamed in abc123.")
        .await
        .unwrap();
    assert_eq!(
        gl.read_thread(&repo(), 1, reply).await.unwrap(),
        [
            comment(first, "alice", "Name it."),
            comment(reply, "forge-bot", "Renamed in abc123.")
        ]
    );
    assert_eq!(
        gl.discussion(&repo(), 1, &thread).await.unwrap(),
        gl.read_thread(&repo(), 1, first).await.unwrap()
    );
    // A note on its own: the conversation is its thread.
    assert_eq!(
        gl.read_thread(&repo(), 1, other).await.unwrap(),
        [
            comment(other, "bob", "@forge add a test"),
            comment(said, "forge-bot", "Working on it.")
        ]
    );
    // A reply to a note found by id turns it into a thread.
    let answer = gl
        .reply_in_thread(&repo(), 1, other, None, "Added in def456.")
        .await
        .unwrap();
    assert_eq!(
        gl.read_thread(&repo(), 1, other).await.unwrap(),
        [
            comment(other, "bob", "@forge add a test"),
            comment(answer, "forge-bot", "Added in def456.")
        ]
    );
    let err = gl.read_thread(&repo(), 1, 999_999).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request: gitlab: merge request !1 has no note 999999"
    );
    let err = gl
        .reply_in_thread(&repo(), 1, 999_999, None, "x")
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::InvalidRequest { .. }), "{err}");
    // A thread id that is none of GitLab's is not sent.
    let before = fake.requests().len();
    let err = gl
        .reply_in_thread(&repo(), 1, first, Some("../../merge_requests"), "x")
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::InvalidRequest { .. }), "{err}");
    assert_eq!(fake.requests().len(), before);
    // An unknown discussion is GitLab's 404.
    let err = gl
        .reply_in_thread(&repo(), 1, first, Some(&"f".repeat(40)), "x")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request: gitlab: replying in a thread of merge request !1: 404 Not found"
    );
    held_to_the_contract(&fake);
}

#[tokio::test]
async fn approvals_and_failed_pipelines_are_read() {
    let (fake, gl) = gitlab().await;
    gl.open_pull_request(&repo(), "forge/t-1", "main", &body("t", true))
        .await
        .unwrap();
    let review = gl.read_review(&repo(), 1, 77).await.unwrap();
    assert_eq!(
        (review.author.as_str(), review.state),
        ("", ReviewState::Commented)
    );
    fake.state().approve(PROJECT, 1, "carol");
    let review = gl.read_review(&repo(), 1, 77).await.unwrap();
    assert_eq!(
        (review.id, review.author.as_str(), review.state),
        (77, "carol", ReviewState::Approved)
    );
    let pipeline = fake.state().add_pipeline(
        PROJECT,
        "forge/t-1",
        "failed",
        &[
            ("build", "build", "success", "built\n"),
            (
                "test",
                "test",
                "failed",
                "section_start:1732700000:step_script\r\u{1b}[0K\u{1b}[36;1m$ sh test.sh\u{1b}[0;m\nFAIL: answer.txt\n\u{1b}[31;1mERROR: Job failed: exit code 1\u{1b}[0;m\n",
            ),
        ],
    );
    let check = gl.read_check_run(&repo(), pipeline).await.unwrap();
    assert_eq!(check.id, pipeline);
    assert_eq!(check.name, format!("pipeline #{pipeline}"));
    assert_eq!(
        check.title.as_deref(),
        Some(format!("pipeline #{pipeline} failed on forge/t-1").as_str())
    );
    assert_eq!(
        check.summary.as_deref(),
        Some("Failed jobs:\n- test (stage test): script_failure\n")
    );
    assert_eq!(
        check.text.as_deref(),
        Some(
            "### test (stage test)\n\n```\n$ sh test.sh\nFAIL: answer.txt\nERROR: Job failed: exit code 1\n```"
        )
    );
    let err = gl.read_check_run(&repo(), 424_242).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request: gitlab: reading pipeline 424242: 404 Not found"
    );
    held_to_the_contract(&fake);
}

#[tokio::test]
async fn developers_and_above_steer_reporters_and_strangers_do_not() {
    let (fake, gl) = gitlab().await;
    {
        let mut s = fake.state();
        for (user, level) in [("dev", 30), ("rep", 20), ("guest", 10), ("owner", 50)] {
            s.add_member(PROJECT, user, level);
        }
        s.add_user("outsider");
    }
    for (user, want, steers) in [
        ("dev", Permission::GitlabAccess(30), true),
        ("owner", Permission::GitlabAccess(50), true),
        ("rep", Permission::GitlabAccess(20), false),
        ("guest", Permission::GitlabAccess(10), false),
        // A user, but no member: GitLab's 404.
        ("outsider", Permission::None, false),
        // No such user.
        ("nobody", Permission::None, false),
    ] {
        let got = gl.permission(&repo(), user).await.unwrap();
        assert_eq!((got, may_steer(got)), (want, steers), "{user}");
    }
    // Not a username at all: not asked.
    let before = fake.requests().len();
    assert_eq!(
        gl.permission(&repo(), "../admin").await.unwrap(),
        Permission::None
    );
    assert_eq!(fake.requests().len(), before);
    // GitLab refusing to say is an error, not "no permission".
    fake.fail_next(Fault {
        status: 403,
        headers: vec![],
        body: r#"{"message":"403 Forbidden"}"#.into(),
    });
    let err = gl.permission(&repo(), "dev").await.unwrap_err();
    assert!(matches!(err, ForgeError::Io { .. }), "{err}");
    held_to_the_contract(&fake);
}

#[tokio::test]
async fn rate_limits_are_waited_out_and_faults_are_said_without_the_token() {
    let (fake, gl) = gitlab().await;
    fake.fail_next(Fault {
        status: 429,
        headers: vec![("retry-after".into(), "1".into())],
        body: "Retry later".into(),
    });
    let started = Instant::now();
    assert_eq!(
        gl.find_pull_request(&repo(), "forge/t-1").await.unwrap(),
        None
    );
    assert!(started.elapsed() >= Duration::from_secs(1), "waited");
    assert_eq!(
        fake.requests().len(),
        2,
        "the rate-limited request was retried"
    );
    // Rate limited on every try: an I/O error, after three.
    for _ in 0..3 {
        fake.fail_next(Fault {
            status: 429,
            headers: vec![("retry-after".into(), "0".into())],
            body: "Retry later".into(),
        });
    }
    let before = fake.requests().len();
    let err = gl.comment(&repo(), 1, "x").await.unwrap_err();
    assert!(matches!(err, ForgeError::Io { .. }), "{err}");
    assert_eq!(fake.requests().len() - before, 3);
    // A wrong token is GitLab's 401, not an invalid request; the token is in no message.
    let wrong = GitlabForge::new(&fake.api_url(), "glpat-wrong").unwrap();
    let err = wrong
        .find_pull_request(&repo(), "forge/t-1")
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "gitlab: finding the merge request of forge/t-1: 401 Unauthorized"
    );
    // The same branch for source and target: GitLab's 422.
    let err = gl
        .open_pull_request(&repo(), "main", "main", &body("t", false))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request: gitlab: opening a merge request from main onto main: 422 You can't \
         use same project/branch for source and target"
    );
    // An unknown project: 404.
    let elsewhere = RepoRef::parse(&format!("https://{HOST}/other/app.git")).unwrap();
    let err = gl.comment(&elsewhere, 1, "x").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request: gitlab: commenting on merge request !1: 404 Project Not Found"
    );
    // A 500 whose page quotes the token: masked.
    fake.fail_next(Fault {
        status: 500,
        headers: vec![],
        body: format!("<html>oops {TOKEN}</html>"),
    });
    let err = gl.comment(&repo(), 1, "x").await.unwrap_err();
    assert!(matches!(err, ForgeError::Io { .. }), "{err}");
    assert!(!err.to_string().contains(TOKEN), "{err}");
    // A forge down: nothing listens.
    let down = GitlabForge::new("http://127.0.0.1:9/api/v4", TOKEN).unwrap();
    let err = down
        .find_pull_request(&repo(), "forge/t-1")
        .await
        .unwrap_err();
    assert!(matches!(err, ForgeError::Io { .. }), "{err}");
    assert!(!err.to_string().contains(TOKEN), "{err}");
    // The fake took the wrong token as GitLab would; every other request was forge's own.
    let violations = fake.violations();
    assert_eq!(violations, Vec::<String>::new());
}

#[tokio::test]
async fn the_fake_refuses_what_gitlab_refuses() {
    let (fake, _) = gitlab().await;
    let http = reqwest::Client::new();
    let base = fake.api_url();
    let send = |method: reqwest::Method, path: &str, form: &[(&str, &str)]| {
        http.request(method, format!("{base}/{path}"))
            .header("PRIVATE-TOKEN", TOKEN)
            .form(form)
            .send()
    };
    let create = "projects/group%2Fsub%2Fapp/merge_requests";
    let r = send(reqwest::Method::POST, create, &[("source_branch", "a")])
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(
        r.text().await.unwrap(),
        r#"{"error":"target_branch is missing, title is missing"}"#
    );
    let r = send(
        reqwest::Method::POST,
        "projects/1/merge_requests/1/draft",
        &[],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.text().await.unwrap(), r#"{"error":"404 Not Found"}"#);
    let r = send(
        reqwest::Method::POST,
        create,
        &[
            ("source_branch", "a"),
            ("target_branch", "b"),
            ("title", "t"),
            ("draft", "true"),
        ],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 201);
    let violations = fake.violations();
    assert_eq!(violations.len(), 3, "{violations:?}");
    assert!(violations[2].contains("parameter \"draft\" is not documented"));
}
