//! How a worker carries out a decision taken through the queue on a change it holds: the
//! local command, unchanged, as a child process through the `ProcessRunner` port —
//! `approvals approve --repo <cache> <id> [--push] --json` or `approvals reject --repo
//! <cache> <id> [--reason …] --json` — so the queue path and the local path deliver alike.

use std::path::{Path, PathBuf};
use std::time::Duration;

use forge_domain::delivery::ApprovalState;
use forge_domain::queue::QueuedTask;
use forge_domain::queue_approval::{ApprovalOutcome, QueueApproval};
use forge_ports::{EnvSnapshot, Invocation, ProcessRunner};

use crate::cmd::delivery::ALREADY_DECIDED;

/// A commit and a push over the network; the child's own git calls time out before.
const CARRY_OUT_TIMEOUT: Duration = Duration::from_secs(900);

/// Where the task's change waits: forge's cache of a repository URL on this machine (as
/// `task run --repo URL` made it), or the local repository a path names.
pub fn held_in(repo: &str, env: &EnvSnapshot) -> PathBuf {
    if forge_domain::task::is_repository_url(repo) {
        crate::cmd::task::execute::repo_cache(env, repo)
    } else {
        PathBuf::from(repo)
    }
}

/// The local command's arguments for the decision on `approval`.
fn decision_args(approval: &QueueApproval, repo: &Path) -> Vec<String> {
    let id = approval.approval_id.to_string();
    let repo = repo.display().to_string();
    let mut args = vec!["approvals".to_owned()];
    if approval.state == ApprovalState::Approved {
        args.extend(["approve".to_owned(), "--repo".to_owned(), repo, id]);
        if approval.push {
            args.push("--push".to_owned());
        }
    } else {
        args.extend(["reject".to_owned(), "--repo".to_owned(), repo, id]);
        if let Some(reason) = &approval.reason {
            args.extend(["--reason".to_owned(), reason.clone()]);
        }
    }
    args.push("--json".to_owned());
    args
}

/// Runs the local decision for `approval` of `task` with `program` (this binary).
pub async fn carry_out(
    runner: &dyn ProcessRunner,
    program: &Path,
    approval: &QueueApproval,
    task: &QueuedTask,
) -> ApprovalOutcome {
    let env: EnvSnapshot = std::env::vars().collect();
    let repo = held_in(&task.repo, &env);
    let failed = |error: String| ApprovalOutcome::Failed { error };
    let run = |args: Vec<String>| {
        let invocation = Invocation::new(program, args, &repo);
        runner.output(invocation, CARRY_OUT_TIMEOUT)
    };
    let out = match run(decision_args(approval, &repo)).await {
        Ok(out) => out,
        Err(e) => return failed(format!("running the local decision: {e}")),
    };
    match out.code {
        Some(0) => match serde_json::from_str(out.stdout.trim()) {
            Ok(report) => ApprovalOutcome::Done { report },
            Err(e) => failed(format!("the local decision's report cannot be read: {e}")),
        },
        // Decided here already (another worker process of this machine, or this one
        // before a crash): what the local store says stands, if it is the same decision.
        Some(code) if code == i32::from(ALREADY_DECIDED) => {
            let show = vec![
                "approvals".to_owned(),
                "show".to_owned(),
                "--repo".to_owned(),
                repo.display().to_string(),
                approval.approval_id.to_string(),
                "--json".to_owned(),
            ];
            match run(show).await {
                Ok(shown) if shown.code == Some(0) => decided_locally(approval, &shown.stdout),
                Ok(shown) => failed(last_line(&shown.stderr)),
                Err(e) => failed(format!("reading the local decision: {e}")),
            }
        }
        _ => failed(last_line(&out.stderr)),
    }
}

/// The outcome of a decision this machine's store already has (`approvals show --json`).
fn decided_locally(approval: &QueueApproval, shown: &str) -> ApprovalOutcome {
    let shown: serde_json::Value = serde_json::from_str(shown.trim()).unwrap_or_default();
    let state = shown
        .pointer("/approval/state")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if state == approval.state.as_str() {
        ApprovalOutcome::Done {
            report: shown.get("task").cloned().unwrap_or_default(),
        }
    } else {
        ApprovalOutcome::Failed {
            error: format!(
                "decided {} through the queue, but {state:?} on this machine first",
                approval.state.as_str()
            ),
        }
    }
}

fn last_line(stderr: &str) -> String {
    stderr
        .trim()
        .lines()
        .last()
        .unwrap_or("the local decision failed saying nothing")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_become_the_local_command() {
        let approval = forge_testkit::queue_contract::held("t1", "w1");
        let repo = Path::new("/c/app");
        let check = |state: ApprovalState, push: bool, reason: Option<&str>, expected: &str| {
            let a = QueueApproval {
                state,
                push,
                reason: reason.map(str::to_owned),
                ..approval.clone()
            };
            assert_eq!(decision_args(&a, repo).join(" "), expected);
        };
        check(
            ApprovalState::Approved,
            true,
            Some("ok"),
            "approvals approve --repo /c/app ap-t1 --push --json",
        );
        check(
            ApprovalState::Approved,
            false,
            None,
            "approvals approve --repo /c/app ap-t1 --json",
        );
        check(
            ApprovalState::Rejected,
            true,
            Some("too risky"),
            "approvals reject --repo /c/app ap-t1 --reason too risky --json",
        );
        check(
            ApprovalState::Rejected,
            false,
            None,
            "approvals reject --repo /c/app ap-t1 --json",
        );
    }

    #[test]
    fn a_local_decision_stands_only_when_it_is_the_same() {
        let approved = QueueApproval {
            state: ApprovalState::Approved,
            ..forge_testkit::queue_contract::held("t1", "w1")
        };
        let shown = |state: &str| {
            serde_json::json!({"approval": {"state": state}, "task": {"status": "committed"}})
                .to_string()
        };
        assert_eq!(
            decided_locally(&approved, &shown("approved")),
            ApprovalOutcome::Done {
                report: serde_json::json!({"status": "committed"})
            }
        );
        for other in ["rejected", "pending", ""] {
            let outcome = decided_locally(&approved, &shown(other));
            assert!(matches!(outcome, ApprovalOutcome::Failed { .. }), "{other}");
        }
    }

    #[test]
    fn urls_wait_in_the_cache_and_paths_in_themselves() {
        let env: EnvSnapshot = [("HOME".to_owned(), "/home/w".to_owned())].into();
        let cached = held_in("https://git.example/acme/app.git", &env);
        assert!(
            cached.starts_with("/home/w/.cache/forge-code-agent/repos/"),
            "{cached:?}"
        );
        assert!(held_in("git@host:acme/app.git", &env).starts_with("/home/w/.cache"));
        assert_eq!(held_in("/src/app", &env), PathBuf::from("/src/app"));
    }
}
