//! `task list | show | rollback` and `approvals …` on a real repository and store, with
//! outcomes delivered through the library (no agent): JSON snapshots, two processes racing
//! to decide, a corrupt store.

use std::path::Path;
use std::sync::Arc;

use forge_adapter_fs::FsFiles;
use forge_adapter_git::GitCli;
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_store::SqliteStore;
use forge_app::delivery::{Delivery, DeliveryPorts, DeliverySettings};
use forge_testkit::delivery::{git, init_repo, outcome, task_worktree};
use forge_testkit::fakes::FixedClock;
use serde_json::Value;

use super::harness::Sandbox;

/// When the prepared tasks were delivered: 2026-11-25 18:51:47 UTC.
const DELIVERED_AT_MS: u64 = 1_795_632_707_596;

/// A repository in the sandbox's `work/` with t1 committed (risk 1) and t2 and t3 held
/// (risk 6, a `.env`).
fn prepared() -> Sandbox {
    let sandbox = Sandbox::new();
    let repo = sandbox.work();
    init_repo(&repo);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SqliteStore::open(repo.join(".forgecode/forge.db")).unwrap();
        let delivery = Delivery::new(
            DeliveryPorts {
                store: Arc::new(store),
                vcs: Arc::new(GitCli::new(Arc::new(TokioProcessRunner::new()))),
                files: Arc::new(FsFiles::new()),
                notifiers: Vec::new(),
                clock: Arc::new(FixedClock::new(DELIVERED_AT_MS)),
                on_step: None,
            },
            // A fixed identity: git's own would differ from machine to machine.
            DeliverySettings {
                author: Some(forge_ports::CommitAuthor {
                    name: "Forge Bot".into(),
                    email: "forge@example.invalid".into(),
                }),
                ..DeliverySettings::default()
            },
            &repo,
        );
        let tree = task_worktree(&repo, "t1", &[("greet.txt", "hi\n")]);
        delivery
            .deliver(outcome("t1", &tree, 1, &["greet.txt"]))
            .await
            .unwrap();
        for id in ["t2", "t3"] {
            let tree = task_worktree(&repo, id, &[(".env", "API_KEY=1\n")]);
            delivery
                .deliver(outcome(id, &tree, 6, &[".env"]))
                .await
                .unwrap();
        }
    });
    sandbox
}

fn json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let out = sandbox
        .forge()
        .env("USER", "tester")
        .args(args)
        .arg("--json")
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

/// Times, commits and the sandbox path vary from run to run.
fn filters(repo: &Path) -> Vec<(String, &'static str)> {
    vec![
        (regex_escape(&repo.display().to_string()), "[REPO]"),
        (
            r#""(\w+_at_ms|duration_ms)": \d+"#.to_owned(),
            r#""$1": "[MS]""#,
        ),
        (r"\b[0-9a-f]{40}\b".to_owned(), "[SHA]"),
    ]
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                c.to_string()
            } else {
                format!("\\{c}")
            }
        })
        .collect()
}

#[test]
fn approvals_list_and_task_show_json() {
    let sandbox = prepared();
    let repo = sandbox.work();
    let approvals = json(&sandbox, &["approvals", "list"]);
    let tasks = json(&sandbox, &["task", "list"]);
    let shown = json(&sandbox, &["task", "show", "t2"]);
    let committed = json(&sandbox, &["task", "show", "t1"]);
    let filters = filters(&repo);
    let filters: Vec<(&str, &str)> = filters.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    insta::with_settings!({filters => filters}, {
        insta::assert_json_snapshot!("approvals_list", approvals);
        insta::assert_json_snapshot!("task_list", tasks);
        insta::assert_json_snapshot!("task_show_pending", shown);
        insta::assert_json_snapshot!("task_show_committed", committed);
    });
}

/// The audit log shows local date and time, in the zone `TZ` names (POSIX sign: `UTC-2` is
/// two hours east), never epoch milliseconds.
#[test]
fn task_show_prints_the_audit_log_in_local_time() {
    let sandbox = prepared();
    for (tz, header, at) in [
        ("UTC", "audit (UTC):", "2026-11-25 18:51:47"),
        ("UTC-2", "audit (UTC+02:00):", "2026-11-25 20:51:47"),
        ("UTC+5:30", "audit (UTC-05:30):", "2026-11-25 13:21:47"),
    ] {
        let out = sandbox
            .forge()
            .env("TZ", tz)
            .args(["task", "show", "t1"])
            .assert()
            .success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let audit = text.split_once(header).map(|(_, a)| a).unwrap_or_else(|| {
            panic!("TZ={tz}: no {header:?} in\n{text}");
        });
        let lines: Vec<&str> = audit.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(!lines.is_empty(), "TZ={tz}: empty audit log\n{text}");
        for line in lines {
            assert!(line.contains(at), "TZ={tz}: {line:?} lacks {at}");
            assert!(!line.contains("17956327"), "TZ={tz}: epoch ms in {line:?}");
        }
    }
}

#[test]
fn approve_commits_reject_removes_rollback_discards() {
    let sandbox = prepared();
    let repo = sandbox.work();
    let approved = json(&sandbox, &["approvals", "approve", "ap-t2"]);
    assert_eq!(approved["status"], "committed");
    assert_eq!(approved["delivery"]["approval_id"], "ap-t2");
    let files = git(&repo, &["show", "--name-only", "--format=", "forge/t2"]);
    assert_eq!(files.trim(), ".env");

    let out = sandbox
        .forge()
        .args([
            "approvals",
            "reject",
            "ap-t3",
            "--reason",
            "no secrets here",
        ])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(text.contains("delivery: rejected on forge/t3"), "{text}");
    let branches = git(&repo, &["branch", "--format=%(refname:short)"]);
    assert!(!branches.contains("forge/t3"), "{branches}");
    assert!(!repo.join(".forgecode/worktrees/t3").exists());

    let rolled = json(&sandbox, &["task", "rollback", "t1"]);
    assert_eq!(rolled["status"], "rolled_back");
    let branches = git(&repo, &["branch", "--format=%(refname:short)"]);
    assert!(!branches.contains("forge/t1"), "{branches}");
    assert_eq!(json(&sandbox, &["approvals", "list"]), Value::Array(vec![]));

    // Bad ids: a clear usage error.
    let out = sandbox
        .forge()
        .args(["approvals", "approve", "ap-nope"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("no approval with id ap-nope"), "{err}");
    sandbox
        .forge()
        .args(["task", "show", "../etc"])
        .assert()
        .code(2);
}

#[test]
fn two_processes_approving_at_once_one_wins_the_other_is_told() {
    let sandbox = prepared();
    let spawn = |who: &str| {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("forge-code-agent"));
        cmd.args(["approvals", "approve", "ap-t2"])
            .current_dir(sandbox.work())
            .env("USER", who)
            .env("NO_COLOR", "1")
            .env("XDG_CONFIG_HOME", sandbox.xdg())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd.spawn().unwrap()
    };
    let (a, b) = (spawn("alice"), spawn("bob"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let mut codes = [a.status.code().unwrap(), b.status.code().unwrap()];
    codes.sort_unstable();
    assert_eq!(codes, [0, 4], "alice: {a:?}\nbob: {b:?}");
    let loser = if a.status.code() == Some(4) { &a } else { &b };
    let err = String::from_utf8_lossy(&loser.stderr);
    assert!(
        err.contains("approval ap-t2 already decided: approved by"),
        "{err}"
    );
    // One commit on the branch, not two.
    let log = git(&sandbox.work(), &["log", "--format=%s", "main..forge/t2"]);
    assert_eq!(log.lines().count(), 1, "{log}");
}

#[test]
fn a_corrupt_store_is_named_in_the_error() {
    let sandbox = Sandbox::new();
    let repo = sandbox.work();
    init_repo(&repo);
    std::fs::create_dir_all(repo.join(".forgecode")).unwrap();
    let db = repo.join(".forgecode/forge.db");
    std::fs::write(&db, "garbage ".repeat(1000)).unwrap();
    let out = sandbox.forge().args(["task", "list"]).assert().code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let canonical = std::fs::canonicalize(&db).unwrap();
    assert!(err.contains(&canonical.display().to_string()), "{err}");
    assert!(err.contains("not a usable forge database"), "{err}");
}
