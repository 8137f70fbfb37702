//! `queue` group: a task on a repository URL follows the repository's own `forge.toml`, on
//! a worker whose own configuration says nothing about validation or the gate. Per
//! provider, one worker (its own HOME, no git identity), a fresh PostgreSQL database:
//! - `queue_repo_fix`: the repository's test wants 42; the fake model writes 41 first
//!   (`task_fix_cycle`), the failing test goes back into the same session across the
//!   queue, the second run writes 42, and only that is committed and pushed;
//! - `queue_repo_hold`: the repository's `[task] risk_threshold = 0` holds a clean,
//!   validated change for approval (exit 10), where the worker's default would commit it;
//!   nothing is pushed.

use std::path::Path;

use forge_testkit::postgres::FreshDb;
use serde_json::Value;

use super::case_run::Suite;
use super::queue::{REPO_FORGE_TOML, delivered_once, final_status, git, prepare_case_with, submit};

pub(super) const FIX_CASE: &str = "queue_repo_fix";
pub(super) const HOLD_CASE: &str = "queue_repo_hold";

type RunCase = fn(&Suite, &Path, &'static str) -> anyhow::Result<()>;

pub(super) const CASES: [(&str, RunCase); 2] = [(FIX_CASE, run_fix), (HOLD_CASE, run_hold)];

/// A task submitted with `--push` to one worker; its final `task status --json` and the
/// case's directory.
fn one_task(
    suite: &Suite,
    root: &Path,
    provider: &'static str,
    (scenario, forge_toml): (&str, &str),
) -> anyhow::Result<(Value, std::path::PathBuf)> {
    let case = prepare_case_with(suite, root, "queue", provider, (scenario, forge_toml))?;
    let (dir, env) = (case.dir.clone(), &case.env);
    git(
        &dir.join("remote.git"),
        &["config", "core.logAllRefUpdates", "always"],
    )?;
    let repo = format!("file://{}", dir.join("remote.git").display());
    let db = FreshDb::create_blocking();
    let worker = case.start_worker(suite, &db.url, "a")?;
    let submitter = dir.join("submitter");
    std::fs::create_dir_all(&submitter)?;
    std::fs::write(submitter.join("forge-config.toml"), "")?;
    let id = submit(
        suite,
        (&submitter, env),
        &db.url,
        &repo,
        provider,
        "Write the answer to answer.txt.",
    )?;
    let status = final_status(suite, &submitter, env, &db.url, &id)?;
    drop(worker);
    drop(case);
    Ok((status, dir))
}

fn check(what: &str, ok: bool, shown: &Value) -> anyhow::Result<()> {
    anyhow::ensure!(ok, "{what}: {shown}");
    Ok(())
}

fn run_fix(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let (status, dir) = one_task(suite, root, provider, ("task_fix_cycle", REPO_FORGE_TOML))?;
    let report = &status["report"];
    check("succeeded", status["state"] == "succeeded", &status)?;
    check("committed", report["status"] == "committed", report)?;
    check(
        "validated by the repository's test",
        report["stop_reason"] == "validated",
        report,
    )?;
    let cycles = report["cycles"].as_array().map_or(0, Vec::len);
    check("a correction cycle", cycles == 2, report)?;
    let first_test = &report["cycles"][0]["validation"]["steps"][0];
    check(
        "the first cycle ran the repository's test and failed",
        first_test["name"] == "test" && first_test["exit_code"] != 0,
        report,
    )?;
    let id = report["task_id"].as_str().unwrap_or_default();
    delivered_once(&dir.join("remote.git"), id)?;
    let pushed =
        super::queue::git_show(&dir.join("remote.git"), &format!("forge/{id}:answer.txt"))?;
    anyhow::ensure!(pushed == "42\n", "pushed answer.txt: {pushed:?}");
    Ok(())
}

fn run_hold(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let forge_toml = format!("{REPO_FORGE_TOML}[task]\nrisk_threshold = 0\n");
    let (status, dir) = one_task(suite, root, provider, ("delivery_low_risk", &forge_toml))?;
    let report = &status["report"];
    check("succeeded", status["state"] == "succeeded", &status)?;
    check("held (exit 10)", status["exit_code"] == 10, &status)?;
    check(
        "pending approval",
        report["status"] == "pending_approval",
        report,
    )?;
    check(
        "held by the repository's threshold, not a finding",
        report["risk"]["score"] == 0,
        report,
    )?;
    let branches = super::queue::git_out(
        &dir.join("remote.git"),
        &["for-each-ref", "--format=%(refname)", "refs/heads/forge/"],
    )?;
    anyhow::ensure!(branches.trim().is_empty(), "pushed while held: {branches}");
    Ok(())
}
