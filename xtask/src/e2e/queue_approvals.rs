//! `queue` group, case `queue_approval`: a task held for approval on one machine is decided
//! from another, through the queue. Per provider: a fresh PostgreSQL database, the fake
//! model playing `delivery_env` (a change with `.env` and a cloud key: held), one worker
//! (its own HOME, no git identity) and a task submitted with `--push`. The task must end
//! `succeeded` with exit 10 and a pending approval; `approvals approve --queue` from
//! another HOME decides it (a second decision exits 4); the worker then commits and pushes
//! the change with the real CLI's work: one branch `forge/<id>` on the bare repository,
//! updated once, one commit with the task's trailer, and `approved, delivered` in the queue.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use forge_testkit::postgres::FreshDb;
use serde_json::Value;

use super::case_run::Suite;
use super::queue::{delivered_once, final_status, forge, git, prepare_case_of, submit};

pub(super) const CASE: &str = "queue_approval";
const SCENARIO: &str = "delivery_env";
const LIMIT: Duration = Duration::from_secs(120);

pub(super) fn run_case(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let case = prepare_case_of(suite, root, "queue", provider, SCENARIO)?;
    let (dir, env) = (&case.dir, &case.env);
    // A reflog line per ref update: a branch pushed twice would show two.
    git(
        &dir.join("remote.git"),
        &["config", "core.logAllRefUpdates", "always"],
    )?;
    let repo = format!("file://{}", dir.join("remote.git").display());
    let db = FreshDb::create_blocking();
    let home = |name: &str| -> anyhow::Result<std::path::PathBuf> {
        let home = dir.join(name);
        std::fs::create_dir_all(&home)?;
        std::fs::write(home.join("forge-config.toml"), case.offline.project_toml())?;
        Ok(home)
    };
    let worker = case.start_worker(suite, &db.url, "a")?;
    let approver = home("approver")?;
    let id = submit(
        suite,
        (&approver, env),
        &db.url,
        &repo,
        provider,
        "Write the answer to answer.txt and configure the uploader.",
    )?;
    let status = final_status(suite, &approver, env, &db.url, &id)?;
    let check = |what: &str, ok: bool, shown: &Value| -> anyhow::Result<()> {
        anyhow::ensure!(ok, "{what}: {shown}");
        Ok(())
    };
    check("succeeded", status["state"] == "succeeded", &status)?;
    check("held (exit 10)", status["exit_code"] == 10, &status)?;
    check(
        "a pending approval held by a",
        status["approval"]["status"] == "pending" && status["approval"]["worker"] == "a",
        &status,
    )?;
    let approvals = |args: &[&str]| -> anyhow::Result<Output> {
        Ok(forge(suite, &approver, env)
            .arg("approvals")
            .args(args)
            .args(["--queue", &db.url])
            .output()?)
    };
    let ap = format!("ap-{id}");
    let first = approvals(&["approve", &ap, "--json"])?;
    anyhow::ensure!(
        first.status.code() == Some(0),
        "approvals approve: {}",
        String::from_utf8_lossy(&first.stderr)
    );
    let second = approvals(&["approve", &ap])?;
    anyhow::ensure!(
        second.status.code() == Some(4),
        "a second approve exited {:?}: {}",
        second.status.code(),
        String::from_utf8_lossy(&second.stderr)
    );
    let started = Instant::now();
    let approval = loop {
        let shown = approvals(&["show", &ap, "--json"])?;
        let shown: Value = serde_json::from_slice(&shown.stdout)
            .with_context(|| String::from_utf8_lossy(&shown.stderr).into_owned())?;
        if shown["approval"]["outcome"].is_object() {
            break shown["approval"].clone();
        }
        if started.elapsed() > LIMIT {
            bail!("{ap} not carried out after {} s: {shown}", LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    check(
        "approved, delivered",
        approval["status"] == "approved, delivered",
        &approval,
    )?;
    check(
        "pushed",
        approval["outcome"]["report"]["delivery"]["pushed"] == true,
        &approval,
    )?;
    delivered_once(&dir.join("remote.git"), &id)?;
    drop(worker);
    drop(case);
    Ok(())
}
