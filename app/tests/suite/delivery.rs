//! The delivery use case on real git repositories and a real SQLite store, with a
//! hand-built task outcome (no agent): commit, push, hold, approve, reject, rollback,
//! reconcile.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_adapter_fs::FsFiles;
use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_store::SqliteStore;
use forge_app::delivery::{Delivery, DeliveryError, DeliveryPorts, DeliverySettings};
use forge_domain::delivery::{ApprovalId, ApprovalState, AuditAction, TRAILER};
use forge_domain::task::{DeliveryDecision, TaskId, TaskStatus};
use forge_ports::{Clock, CommitAuthor, Notifier, TaskStore};
use forge_testkit::delivery::{git, init_repo, outcome, task_worktree};
use forge_testkit::fakes::{FixedClock, RecordingNotifier};
use pretty_assertions::assert_eq;

struct Setup {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    store: SqliteStore,
    delivery: Delivery,
}

impl Setup {
    /// Task `id` changed one file (`path`, `text`) in its work tree, scored `risk`:
    /// delivered, its outcome after delivery.
    async fn deliver_file(
        &self,
        id: &str,
        (path, text): (&str, &str),
        risk: u8,
    ) -> forge_domain::task::TaskOutcome {
        let tree = task_worktree(&self.repo, id, &[(path, text)]);
        self.delivery
            .deliver(outcome(id, &tree, risk, &[path]))
            .await
            .unwrap()
    }
}

fn settings() -> DeliverySettings {
    DeliverySettings {
        author: Some(CommitAuthor {
            name: "Forge Bot".into(),
            email: "forge@forge.invalid".into(),
        }),
        actor: "tester".into(),
        reconcile_grace_ms: 0,
        ..DeliverySettings::default()
    }
}

fn setup_with(settings: DeliverySettings, notifiers: Vec<Arc<dyn Notifier>>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let repo = std::fs::canonicalize(dir.path()).unwrap();
    init_repo(&repo);
    let store = SqliteStore::open(repo.join(".forgecode/forge.db")).unwrap();
    let delivery = delivery_over(&repo, &store, settings, notifiers);
    Setup {
        _dir: dir,
        repo,
        store,
        delivery,
    }
}

fn delivery_over(
    repo: &Path,
    store: &SqliteStore,
    settings: DeliverySettings,
    notifiers: Vec<Arc<dyn Notifier>>,
) -> Delivery {
    delivery_at(repo, store, settings, notifiers, FixedClock::default())
}

/// A delivery over `repo` whose clock reads `clock`.
fn delivery_at(
    repo: &Path,
    store: &SqliteStore,
    settings: DeliverySettings,
    notifiers: Vec<Arc<dyn Notifier>>,
    clock: FixedClock,
) -> Delivery {
    let ports = DeliveryPorts {
        store: Arc::new(store.clone()),
        vcs: Arc::new(GitCli::new(Arc::new(TokioProcessRunner::new()))),
        files: Arc::new(FsFiles::new()),
        notifiers,
        clock: Arc::new(clock),
        on_step: None,
    };
    Delivery::new(ports, settings, repo)
}

fn setup() -> Setup {
    setup_with(settings(), Vec::new())
}

fn id(s: &str) -> TaskId {
    TaskId::new(s).unwrap()
}

fn branches(repo: &Path) -> Vec<String> {
    git(repo, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_owned)
        .collect()
}

fn worktree_count(repo: &Path) -> usize {
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .count()
}

async fn actions(store: &SqliteStore, task: &str) -> Vec<AuditAction> {
    store
        .audit(&id(task))
        .await
        .unwrap()
        .iter()
        .map(|e| e.action)
        .collect()
}

#[tokio::test]
async fn a_low_risk_change_is_committed_on_its_branch_without_forge_files() {
    let s = setup();
    let done = s.deliver_file("t1", ("greet.txt", "hi\n"), 1).await;
    assert_eq!(done.status, TaskStatus::Committed);
    let d = done.delivery.clone().unwrap();
    assert_eq!(d.decision, DeliveryDecision::Committed);
    let commit = d.commit.unwrap();
    // On the task branch, with the trailer, by the configured author, forge's files out.
    assert_eq!(git(&s.repo, &["rev-parse", "forge/t1"]).trim(), commit);
    let files = git(&s.repo, &["show", "--name-only", "--format=", &commit]);
    assert_eq!(files.trim(), "greet.txt");
    let message = git(&s.repo, &["log", "-1", "--format=%B", &commit]);
    assert_eq!(
        message.trim(),
        "implement: Add the greeting module\n\nAdded greet.txt with a greeting.\n\nForge-Task: t1"
    );
    let author = git(&s.repo, &["log", "-1", "--format=%an <%ae>", &commit]);
    assert_eq!(author.trim(), "Forge Bot <forge@forge.invalid>");
    // The user's checkout did not move; the work tree is gone, the branch stays.
    assert_eq!(
        git(&s.repo, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    assert_eq!(worktree_count(&s.repo), 1);
    assert!(branches(&s.repo).contains(&"forge/t1".to_owned()));
    // Rows and audit agree with git.
    let change = s.store.change(&id("t1")).await.unwrap().unwrap();
    assert_eq!(change.commit.as_deref(), Some(commit.as_str()));
    let row = s.store.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(row.status, TaskStatus::Committed);
    assert_eq!(
        actions(&s.store, "t1").await,
        vec![
            AuditAction::TaskStarted,
            AuditAction::Review,
            AuditAction::Outcome,
            AuditAction::Committed,
            AuditAction::CleanedUp,
        ]
    );
    // report.json follows the store.
    let report = std::fs::read_to_string(s.repo.join(".forgecode/tasks/t1/report.json")).unwrap();
    assert!(report.contains("\"committed\""), "{report}");
}

#[tokio::test]
async fn push_goes_to_a_bare_remote_and_a_refusing_remote_keeps_the_commit() {
    let (s, _remote_dir, bare) = setup_with_remote();
    let done = s.deliver_file("t1", ("a.txt", "a\n"), 0).await;
    let d = done.delivery.unwrap();
    assert!(d.pushed, "{d:?}");
    let remote_head = git(&bare, &["rev-parse", "refs/heads/forge/t1"]);
    assert_eq!(remote_head.trim(), d.commit.unwrap());

    // A remote that refuses (a pre-receive hook says no): committed, error recorded.
    let hook = bare.join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n").unwrap();
    let mut perms = std::fs::metadata(&hook).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&hook, perms).unwrap();
    let done = s.deliver_file("t2", ("b.txt", "b\n"), 0).await;
    let d = done.delivery.unwrap();
    assert_eq!(done.status, TaskStatus::Committed);
    assert!(!d.pushed);
    let error = d.push_error.unwrap();
    assert!(error.contains("no pushes today"), "{error}");
    assert_eq!(
        git(&s.repo, &["rev-parse", "forge/t2"]).trim(),
        d.commit.unwrap()
    );
    assert!(
        actions(&s.store, "t2")
            .await
            .contains(&AuditAction::PushFailed)
    );
}

/// A repository with push enabled and `origin` set to a bare remote of its own; the
/// setup and the remote's path (kept alive by the returned directory).
fn setup_with_remote() -> (Setup, tempfile::TempDir, PathBuf) {
    let s = setup_with(
        DeliverySettings {
            push: true,
            ..settings()
        },
        Vec::new(),
    );
    let remote_dir = tempfile::tempdir().unwrap();
    let bare = remote_dir.path().join("remote.git");
    git(
        &s.repo,
        &["init", "-q", "--bare", &bare.display().to_string()],
    );
    git(
        &s.repo,
        &["remote", "add", "origin", &bare.display().to_string()],
    );
    (s, remote_dir, bare)
}

/// Two attempts of one task (a worker lost its lease, another took the task over): the
/// second pushes first, then the first one's push is refused. When the remote's branch
/// holds this task's `Forge-Task` trailer, that is "delivered by another attempt" (no
/// error, nothing pushed); when it holds anything else, the refusal stays an error that
/// says what the branch holds.
#[tokio::test]
async fn a_push_refused_because_another_attempt_delivered_is_not_an_error() {
    // (what the other side pushed to forge/t1 first, the error's words when it is one)
    let cases: [(&str, Option<&str>); 3] = [
        ("Implement: another attempt\n\nForge-Task: t1\n", None),
        (
            "a person's commit on the branch\n",
            Some("which is not a delivery of task t1: no Forge-Task trailer"),
        ),
        (
            "Implement: something else\n\nForge-Task: t9\n",
            Some("a delivery of another task, t9"),
        ),
    ];
    for (message, error) in cases {
        let (late, _remote, bare) = setup_with_remote();
        // The other attempt, on another machine: its own clone, its commit pushed first.
        let other_dir = tempfile::tempdir().unwrap();
        let other = other_dir.path().join("clone");
        git(
            &late.repo,
            &["push", "-q", "origin", "HEAD:refs/heads/main"],
        );
        git(
            other_dir.path(),
            &["clone", "-q", &bare.display().to_string(), "clone"],
        );
        git(&other, &["checkout", "-q", "-b", "forge/t1"]);
        std::fs::write(other.join("a.txt"), "the other attempt\n").unwrap();
        git(&other, &["add", "-A"]);
        git(&other, &["commit", "-q", "-m", message]);
        git(&other, &["push", "-q", "origin", "forge/t1"]);
        let theirs = git(&other, &["rev-parse", "HEAD"]).trim().to_owned();

        let tree = task_worktree(&late.repo, "t1", &[("a.txt", "the late attempt\n")]);
        let done = late
            .delivery
            .deliver(outcome("t1", &tree, 0, &["a.txt"]))
            .await
            .unwrap();
        let d = done.delivery.unwrap();
        assert_eq!(done.status, TaskStatus::Committed, "{message}");
        assert!(!d.pushed, "{message}: {d:?}");
        // The remote's branch is the first delivery's, untouched.
        let remote_head = git(&bare, &["rev-parse", "refs/heads/forge/t1"]);
        assert_eq!(remote_head.trim(), theirs, "{message}");
        let audit = actions(&late.store, "t1").await;
        match error {
            None => {
                assert_eq!(d.push_error, None, "{message}");
                assert_eq!(d.delivered_by_another_attempt, Some(theirs.clone()));
                assert!(!audit.contains(&AuditAction::PushFailed), "{audit:?}");
                assert!(audit.contains(&AuditAction::Reconciled), "{audit:?}");
            }
            Some(words) => {
                let got = d.push_error.unwrap_or_default();
                assert!(got.contains(words), "{message}: {got}");
                assert!(got.contains(&theirs), "{message}: {got}");
                assert_eq!(d.delivered_by_another_attempt, None, "{message}");
                assert!(audit.contains(&AuditAction::PushFailed), "{audit:?}");
            }
        }
    }
}

#[tokio::test]
async fn a_risky_change_waits_and_notifies_then_approve_commits_once() {
    let hook = RecordingNotifier::new("webhook", &[true]);
    let chat = RecordingNotifier::new("telegram", &[false]);
    let s = setup_with(
        settings(),
        vec![Arc::new(hook.clone()), Arc::new(chat.clone())],
    );
    let held = s.deliver_file("t1", (".env", "KEY=1\n"), 6).await;
    assert_eq!(held.status, TaskStatus::PendingApproval);
    let d = held.delivery.clone().unwrap();
    assert_eq!(d.approval_id.as_deref(), Some("ap-t1"));
    assert_eq!(d.commit, None);
    let channels: Vec<(String, bool)> = d
        .notifications
        .iter()
        .map(|n| (n.channel.clone(), n.ok))
        .collect();
    assert_eq!(
        channels,
        vec![("webhook".into(), true), ("telegram".into(), false)]
    );
    assert_eq!(
        hook.sent()[0].approve_command,
        "forge-code-agent approvals approve ap-t1"
    );
    // The work tree is kept, nothing is committed yet.
    assert_eq!(worktree_count(&s.repo), 2);
    assert_eq!(
        git(&s.repo, &["rev-parse", "forge/t1"]),
        git(&s.repo, &["rev-parse", "main"])
    );

    let approval = ApprovalId::new("ap-t1").unwrap();
    let approved = s.delivery.approve(&approval).await.unwrap();
    assert_eq!(approved.base_moved, None);
    let d = approved.outcome.delivery.unwrap();
    assert_eq!(d.decision, DeliveryDecision::Committed);
    assert_eq!(d.approval_id.as_deref(), Some("ap-t1"));
    assert_eq!(d.notifications.len(), 2, "kept from the hold");
    let files = git(&s.repo, &["show", "--name-only", "--format=", "forge/t1"]);
    assert_eq!(files.trim(), ".env");
    // A second approver is told it is decided; nothing changes.
    let again = s.delivery.approve(&approval).await.unwrap_err();
    assert!(
        matches!(&again, DeliveryError::AlreadyDecided { state: ApprovalState::Approved, by: Some(by), .. } if by == "tester"),
        "{again:?}"
    );
    assert_eq!(
        again.to_string(),
        "approval ap-t1 already decided: approved by tester"
    );
}

#[tokio::test]
async fn reject_leaves_no_branch_and_no_work_tree() {
    let s = setup();
    s.deliver_file("t1", (".env", "KEY=1\n"), 9).await;
    let rejected = s
        .delivery
        .reject(&ApprovalId::new("ap-t1").unwrap(), Some("no secrets"))
        .await
        .unwrap();
    assert_eq!(rejected.status, TaskStatus::Rejected);
    assert_eq!(worktree_count(&s.repo), 1);
    assert_eq!(branches(&s.repo), vec!["main"]);
    let approval = s
        .store
        .approval(&ApprovalId::new("ap-t1").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(approval.reason.as_deref(), Some("no secrets"));
    let err = s
        .delivery
        .reject(&ApprovalId::new("ap-nope").unwrap(), None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "no_such_approval");
}

#[tokio::test]
async fn approving_after_the_base_moved_commits_on_the_branch_and_says_so() {
    let s = setup();
    s.deliver_file("t1", ("x.txt", "x\n"), 5).await;
    std::fs::write(s.repo.join("other.txt"), "moved\n").unwrap();
    git(&s.repo, &["add", "other.txt"]);
    git(&s.repo, &["commit", "-q", "-m", "main moves on"]);
    let approved = s
        .delivery
        .approve(&ApprovalId::new("ap-t1").unwrap())
        .await
        .unwrap();
    let note = approved.base_moved.unwrap();
    assert!(note.contains("the commit is on forge/t1 only"), "{note}");
    let files = git(&s.repo, &["show", "--name-only", "--format=", "forge/t1"]);
    assert_eq!(files.trim(), "x.txt");
}

#[tokio::test]
async fn rollback_removes_an_unmerged_branch_and_reverts_a_merged_commit() {
    let s = setup();
    s.deliver_file("t1", ("a.txt", "a\n"), 0).await;
    let rolled = s.delivery.rollback(&id("t1")).await.unwrap();
    assert_eq!(rolled.status, TaskStatus::RolledBack);
    assert_eq!(branches(&s.repo), vec!["main"]);
    let again = s.delivery.rollback(&id("t1")).await.unwrap_err();
    assert_eq!(again.kind(), "wrong_state");

    s.deliver_file("t2", ("b.txt", "b\n"), 0).await;
    git(&s.repo, &["merge", "-q", "--ff-only", "forge/t2"]);
    assert!(s.repo.join("b.txt").exists());
    s.delivery.rollback(&id("t2")).await.unwrap();
    assert!(!s.repo.join("b.txt").exists(), "reverted in the checkout");
    let subject = git(&s.repo, &["log", "-1", "--format=%s"]);
    assert!(
        subject.starts_with("Revert \"implement: Add the greeting module\""),
        "{subject}"
    );
    let audit = s.store.audit(&id("t2")).await.unwrap();
    let last = audit.last().unwrap();
    assert_eq!(last.action, AuditAction::RolledBack);
    assert!(last.detail.starts_with("reverted "), "{}", last.detail);
}

#[tokio::test]
async fn reconcile_finds_a_commit_the_store_missed_and_resends_failed_notices() {
    let s = setup();
    // A forge killed between its commit and the store write: the row says validated, git
    // has the commit with the trailer.
    let tree = task_worktree(&s.repo, "t1", &[("a.txt", "a\n")]);
    let o = outcome("t1", &tree, 0, &["a.txt"]);
    let row = forge_domain::delivery::TaskRecord {
        task_id: o.task_id.clone(),
        status: TaskStatus::Validated,
        title: o.task.clone(),
        repo: s.repo.display().to_string(),
        branch: o.branch.clone(),
        worktree: Some(o.worktree.clone()),
        risk_score: 0,
        created_at_ms: 1,
        updated_at_ms: 1,
        report: serde_json::to_value(&o).unwrap(),
    };
    s.store.save_task(&row, &[]).await.unwrap();
    git(&tree, &["add", "a.txt"]);
    git(
        &tree,
        &[
            "commit",
            "-q",
            "-m",
            &format!("implement: x\n\n{TRAILER}: t1"),
        ],
    );
    let commit = git(&tree, &["rev-parse", "HEAD"]).trim().to_owned();

    // A held task whose telegram notice failed.
    let chat = RecordingNotifier::new("telegram", &[false, true]);
    let held_tree = task_worktree(&s.repo, "t2", &[(".env", "K=1\n")]);
    let delivery = delivery_over(&s.repo, &s.store, settings(), vec![Arc::new(chat.clone())]);
    delivery
        .deliver(outcome("t2", &held_tree, 7, &[".env"]))
        .await
        .unwrap();
    assert_eq!(chat.sent().len(), 1);

    let report = delivery.reconcile().await.unwrap();
    assert_eq!(
        report.fixed,
        vec![format!(
            "t1: commit {commit} found by its trailer, recorded as committed"
        )]
    );
    assert_eq!(report.renotified, vec!["t2: telegram sent"]);
    let t1 = s.store.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(t1.status, TaskStatus::Committed);
    let change = s.store.change(&id("t1")).await.unwrap().unwrap();
    assert_eq!(change.commit, Some(commit));
    // Reconciling again finds nothing to do.
    let report = delivery.reconcile().await.unwrap();
    assert!(
        report.fixed.is_empty() && report.renotified.is_empty(),
        "{report:?}"
    );
}

#[tokio::test]
async fn reconcile_finishes_an_approval_a_killed_forge_decided_but_did_not_commit() {
    let s = setup();
    s.deliver_file("t1", ("a.txt", "a\n"), 5).await;
    // The decision is stored, the commit never happened.
    s.store
        .decide_approval(
            &ApprovalId::new("ap-t1").unwrap(),
            forge_domain::delivery::Decision::Approve,
            "alice",
            None,
            5,
        )
        .await
        .unwrap();
    let report = s.delivery.reconcile().await.unwrap();
    assert_eq!(
        report.fixed,
        vec!["t1: approved before a stop, committed now"]
    );
    let t1 = s.store.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(t1.status, TaskStatus::Committed);
    let files = git(&s.repo, &["show", "--name-only", "--format=", "forge/t1"]);
    assert_eq!(files.trim(), "a.txt");
}

/// Another forge decided a moment ago and is committing right now: a forge starting meanwhile
/// leaves the decision to it (committing too would race it for the same change); once the
/// decision is older than the grace, it is a killed forge's, finished on start.
#[tokio::test]
async fn reconcile_leaves_a_decision_younger_than_the_grace_to_the_forge_that_made_it() {
    let s = setup();
    s.deliver_file("t1", ("a.txt", "a\n"), 5).await;
    let decided_at = FixedClock::default().now_ms() + 100_000;
    s.store
        .decide_approval(
            &ApprovalId::new("ap-t1").unwrap(),
            forge_domain::delivery::Decision::Approve,
            "alice",
            None,
            decided_at,
        )
        .await
        .unwrap();
    let at = |now: u64| {
        let settings = DeliverySettings {
            reconcile_grace_ms: 60_000,
            ..settings()
        };
        delivery_at(
            &s.repo,
            &s.store,
            settings,
            Vec::new(),
            FixedClock::new(now),
        )
    };
    let report = at(decided_at + 10_000).reconcile().await.unwrap();
    assert!(report.fixed.is_empty(), "{report:?}");
    let t1 = s.store.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(t1.status, TaskStatus::PendingApproval);
    let report = at(decided_at + 61_000).reconcile().await.unwrap();
    assert_eq!(
        report.fixed,
        vec!["t1: approved before a stop, committed now"]
    );
}

#[tokio::test]
async fn an_outcome_that_did_not_validate_is_stored_not_delivered() {
    let s = setup();
    let tree = task_worktree(&s.repo, "t1", &[("a.txt", "a\n")]);
    let mut failed = outcome("t1", &tree, 0, &["a.txt"]);
    failed.status = TaskStatus::Failed;
    failed.stop_reason = forge_domain::task::StopReason::MaxCycles;
    let done = s.delivery.deliver(failed).await.unwrap();
    assert_eq!(done.status, TaskStatus::Failed);
    assert_eq!(done.delivery, None);
    assert_eq!(
        git(&s.repo, &["rev-parse", "forge/t1"]),
        git(&s.repo, &["rev-parse", "main"])
    );
    assert_eq!(
        s.store.task(&id("t1")).await.unwrap().unwrap().status,
        TaskStatus::Failed
    );
}

#[tokio::test]
async fn reconcile_rebuilds_a_missing_row_from_the_trailer_and_report_json() {
    let s = setup();
    let done = s.deliver_file("t1", ("a.txt", "a\n"), 0).await;
    let commit = done.delivery.unwrap().commit.unwrap();
    // A new, empty store for the same repository: git and report.json still know t1.
    let fresh = SqliteStore::open(s.repo.join(".forgecode/other.db")).unwrap();
    let delivery = delivery_over(&s.repo, &fresh, settings(), Vec::new());
    let report = delivery.reconcile().await.unwrap();
    assert_eq!(
        report.fixed,
        vec![format!(
            "t1: commit {commit} had no row; rebuilt from report.json"
        )]
    );
    let row = fresh.task(&id("t1")).await.unwrap().unwrap();
    assert_eq!(row.status, TaskStatus::Committed);
    let change = fresh.change(&id("t1")).await.unwrap().unwrap();
    assert_eq!(change.commit, Some(commit));
    assert!(delivery.reconcile().await.unwrap().fixed.is_empty());
}
