//! Delivery test support: a hand-built task outcome and real git repositories to deliver
//! it into (tests of the delivery step that need no agent).

use std::path::{Path, PathBuf};
use std::process::Command;

use forge_domain::task::{
    ChangeKind, FileChange, ReviewReport, RiskLevel, RiskScore, StopReason, TaskId, TaskOutcome,
    TaskStatus, TaskType,
};
use forge_domain::{ProviderId, Usage};

/// Runs git in `dir` with a fixed identity; panics with git's words on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Forge Test",
            "-c",
            "user.email=test@forge.invalid",
        ])
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("LC_ALL", "C")
        .output()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"));
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository at `dir` with one commit (README.md) on `main`, identity configured.
pub fn init_repo(dir: &Path) {
    git(dir, &["init", "-q"]);
    git(dir, &["config", "user.name", "Forge Test"]);
    git(dir, &["config", "user.email", "test@forge.invalid"]);
    git(dir, &["config", "commit.gpgsign", "false"]);
    std::fs::write(dir.join("README.md"), "hello\n").unwrap_or_else(|e| panic!("{e}"));
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "initial"]);
}

/// A work tree for task `id` on `forge/<id>` under `.forgecode/worktrees/`, with `files`
/// written into it (path, contents), plus forge's own leftovers that must never be
/// committed (`CLAUDE.md`, `.forgecode/x`). Returns the work tree's path.
pub fn task_worktree(repo: &Path, id: &str, files: &[(&str, &str)]) -> PathBuf {
    let path = repo.join(".forgecode/worktrees").join(id);
    let branch = format!("forge/{id}");
    git(
        repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            &branch,
            &path.display().to_string(),
        ],
    );
    for (name, text) in files {
        let file = path.join(name);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path.join("CLAUDE.md"), "forge's instructions\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(path.join(".forgecode")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(path.join(".forgecode/x"), "state\n").unwrap_or_else(|e| panic!("{e}"));
    path
}

/// A validated outcome of a claude task `id` whose change is `files` in `worktree`, with
/// the given risk score.
pub fn outcome(id: &str, worktree: &Path, score: u8, files: &[&str]) -> TaskOutcome {
    let task_id = TaskId::new(id).unwrap_or_else(|e| panic!("{e}"));
    let reasons = if score == 0 {
        Vec::new()
    } else {
        vec![format!("+{score} sensitive file .env")]
    };
    TaskOutcome {
        branch: task_id.branch(),
        task_id,
        status: TaskStatus::Validated,
        stop_reason: StopReason::Validated,
        provider: ProviderId::new("claude").unwrap_or_else(|e| panic!("{e}")),
        task: "Add the greeting module".to_owned(),
        task_type: TaskType::Implement,
        model: None,
        worktree: worktree.display().to_string(),
        cycles: Vec::new(),
        baseline: None,
        tests: Vec::new(),
        review: ReviewReport::default(),
        risk: RiskScore {
            score,
            level: RiskLevel::of(score),
            reasons,
        },
        files: files
            .iter()
            .map(|p| FileChange {
                path: (*p).to_owned(),
                change: ChangeKind::Added,
                added: 1,
                removed: 0,
            })
            .collect(),
        cost_usd: 0.01,
        usage: Usage::default(),
        duration_ms: 1000,
        rollback: String::new(),
        summary: Some("Added greet.txt with a greeting.".to_owned()),
        error: None,
        delivery: None,
        sandbox_denied: Vec::new(),
        context_files: Vec::new(),
        sandbox: None,
        pull_request: None,
        session_travel: None,
    }
}
