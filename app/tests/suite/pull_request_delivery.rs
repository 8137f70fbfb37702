//! Delivery as a pull request (issue 39) on real git (a bare remote) and a real SQLite
//! store, the forge an in-memory fake: one pull request per task, a draft while held,
//! ready once approved, and a forge that refuses or is down leaves the branch pushed and
//! says why until a retry completes it.

use std::path::PathBuf;
use std::sync::Arc;

use forge_adapter_fs::FsFiles;
use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_store::SqliteStore;
use forge_app::delivery::{Delivery, DeliveryPorts, DeliverySettings, PullRequestTarget};
use forge_domain::delivery::ApprovalId;
use forge_domain::forges::{PullRequestState, RepoRef};
use forge_domain::task::{DeliveryDecision, TaskId, TaskStatus};
use forge_domain::{ForgeError, Redactor};
use forge_ports::CommitAuthor;
use forge_testkit::delivery::{git, init_repo, outcome, task_worktree};
use forge_testkit::fakes::{FixedClock, MemoryForge};
use pretty_assertions::assert_eq;

struct Setup {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    bare: PathBuf,
    forge: Arc<MemoryForge>,
    delivery: Delivery,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let repo = root.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    init_repo(&repo);
    let bare = root.join("remote.git");
    git(
        &repo,
        &["init", "-q", "--bare", &bare.display().to_string()],
    );
    git(
        &repo,
        &["remote", "add", "origin", &bare.display().to_string()],
    );
    let store = SqliteStore::open(repo.join(".forgecode/forge.db")).unwrap();
    let ports = DeliveryPorts {
        store: Arc::new(store),
        vcs: Arc::new(GitCli::new(Arc::new(TokioProcessRunner::new()))),
        files: Arc::new(FsFiles::new()),
        notifiers: Vec::new(),
        clock: Arc::new(FixedClock::default()),
        on_step: None,
    };
    let settings = DeliverySettings {
        author: Some(CommitAuthor {
            name: "Forge Bot".into(),
            email: "forge@forge.invalid".into(),
        }),
        actor: "tester".into(),
        reconcile_grace_ms: 0,
        // Not asked for: a pull request pushes all the same.
        push: false,
        ..DeliverySettings::default()
    };
    let forge = Arc::new(MemoryForge::new());
    let delivery = Delivery::new(ports, settings, &repo).with_pull_request(PullRequestTarget {
        forge: forge.clone(),
        repo: RepoRef::parse("https://github.com/octo/hello.git").unwrap(),
        base: "main".into(),
        redactor: Redactor::new().with_secrets(["s3cr3t-token-value"]),
        closes: None,
        reply: None,
    });
    Setup {
        _dir: dir,
        repo,
        bare,
        forge,
        delivery,
    }
}

impl Setup {
    async fn deliver(&self, id: &str, risk: u8) -> forge_domain::task::TaskOutcome {
        let tree = task_worktree(&self.repo, id, &[("src/a.rs", "fn a() {}\n")]);
        let mut o = outcome(id, &tree, risk, &["src/a.rs"]);
        o.summary = Some("uses s3cr3t-token-value".into());
        self.delivery.deliver(o).await.unwrap()
    }

    fn remote_head(&self, id: &str) -> String {
        git(
            &self.bare,
            &["rev-parse", &format!("refs/heads/forge/{id}")],
        )
        .trim()
        .to_owned()
    }
}

#[tokio::test]
async fn a_committed_change_opens_one_pull_request_with_the_report() {
    let s = setup();
    let o = s.deliver("t1", 0).await;
    let d = o.delivery.clone().unwrap();
    assert_eq!(d.decision, DeliveryDecision::Committed);
    assert!(d.pushed, "a pull request pushes the branch");
    assert_eq!(s.remote_head("t1"), d.commit.unwrap());
    let pr = o.pull_request.clone().unwrap();
    let opened = pr.opened.unwrap();
    assert_eq!((opened.number, opened.draft, pr.error), (1, false, None));
    assert_eq!(opened.state, PullRequestState::Open);
    let (body, _) = s.forge.pull("forge/t1").unwrap();
    assert!(
        body.body.contains("<!-- forge-task: t1 -->"),
        "{}",
        body.body
    );
    assert!(!body.body.contains("s3cr3t-token-value"), "{}", body.body);
    assert_eq!(s.forge.calls(), ["find forge/t1", "open forge/t1 → main"]);
    // Another delivery of the same task updates it; a lost answer is found by head.
    s.delivery
        .retry_pull_request(&TaskId::new("t1").unwrap())
        .await
        .unwrap();
    assert_eq!(
        s.forge.calls(),
        ["find forge/t1", "open forge/t1 → main", "update #1"]
    );
}

#[tokio::test]
async fn a_held_change_is_a_draft_until_it_is_approved() {
    let s = setup();
    let o = s.deliver("t2", 7).await;
    assert_eq!(o.status, TaskStatus::PendingApproval);
    let d = o.delivery.clone().unwrap();
    assert!(d.pushed);
    let held_commit = d.commit.clone().unwrap();
    assert_eq!(s.remote_head("t2"), held_commit);
    let opened = o.pull_request.unwrap().opened.unwrap();
    assert!(opened.draft);
    let (body, _) = s.forge.pull("forge/t2").unwrap();
    assert!(body.body.contains("Held for approval"), "{}", body.body);
    let approved = s
        .delivery
        .approve(&ApprovalId::for_task(&TaskId::new("t2").unwrap()))
        .await
        .unwrap();
    let after = approved.outcome;
    assert_eq!(after.status, TaskStatus::Committed);
    assert_eq!(
        after.delivery.unwrap().commit.as_deref(),
        Some(held_commit.as_str())
    );
    let ready = after.pull_request.unwrap().opened.unwrap();
    assert_eq!((ready.number, ready.draft), (1, false));
    assert_eq!(
        s.forge.calls(),
        [
            "find forge/t2",
            "open forge/t2 → main draft",
            "update #1",
            "ready #1"
        ]
    );
}

#[tokio::test]
async fn a_refusing_or_absent_forge_leaves_the_branch_pushed_until_a_retry() {
    let s = setup();
    s.forge.fail_next(ForgeError::Io {
        context: "github: GET /repos/octo/hello/pulls".into(),
        message: "connection refused".into(),
    });
    let o = s.deliver("t3", 0).await;
    let d = o.delivery.clone().unwrap();
    assert!(d.pushed);
    let pr = o.pull_request.unwrap();
    assert_eq!(pr.opened, None);
    assert_eq!(
        pr.error.as_deref(),
        Some("github: GET /repos/octo/hello/pulls: connection refused")
    );
    assert_eq!(s.remote_head("t3"), d.commit.unwrap());
    // A 422 on the retry: still said, nothing opened.
    s.forge.fail_next(ForgeError::InvalidRequest {
        reason: "github: POST /repos/octo/hello/pulls: 422 Validation Failed".into(),
    });
    let again = s
        .delivery
        .retry_pull_request(&TaskId::new("t3").unwrap())
        .await
        .unwrap();
    assert!(again.pull_request.unwrap().error.unwrap().contains("422"));
    // The forge is back: the retry completes it, once.
    let done = s
        .delivery
        .retry_pull_request(&TaskId::new("t3").unwrap())
        .await
        .unwrap();
    let pr = done.pull_request.unwrap();
    assert_eq!((pr.opened.map(|o| o.number), pr.error), (Some(1), None));
    let opens = s
        .forge
        .calls()
        .iter()
        .filter(|c| c.starts_with("open"))
        .count();
    assert_eq!(opens, 1);
}
