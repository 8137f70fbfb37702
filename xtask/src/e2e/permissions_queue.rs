//! `perm_queue`: a queued task's agent asks, and a person answers from another machine.
//!
//! A worker on a fresh PostgreSQL queue takes a task submitted with `--permission-mode ask`;
//! its agent's request is stored in the queue, under the task. Another process — the
//! submitter's machine, which shares nothing with the worker but the queue — sees it with
//! `permissions list --queue` and allows it with `permissions allow --queue`; the worker's
//! agent then runs the command, and the task validates and delivers the file it made.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use forge_testkit::postgres::FreshDb;
use serde_json::Value;

use super::case_run::Suite;
use super::permissions::Agent;
use super::queue::{final_status, forge, prepare_case_with};

const SCENARIO: &str = "ask_queued";
/// The repository's validation: the task must validate, and the marker file is what it
/// delivers (its being committed is the proof the allowed command ran).
const FORGE_TOML: &str = "[validation]\ntest = \"true\"\n";
const ASKED_WITHIN: Duration = Duration::from_secs(150);

pub(super) fn queued(suite: &Suite, agent: Agent) -> anyhow::Result<()> {
    let root = crate::workspace_root();
    // `suite.work` is the group's already: the case's directory is `perm_queue/…` in it.
    let case = prepare_case_with(
        suite,
        &root,
        "perm_queue",
        agent.cli,
        (SCENARIO, FORGE_TOML),
    )?;
    let (dir, env) = (&case.dir, &case.env);
    let repo = format!("file://{}", dir.join("remote.git").display());
    let db = FreshDb::create_blocking();
    let _worker = case.start_worker(suite, &db.url, "a")?;
    let person = dir.join("person");
    std::fs::create_dir_all(&person)?;
    std::fs::write(person.join("forge-config.toml"), "")?;
    let out = forge(suite, &person, env)
        .args(["task", "submit", "--queue", &db.url, "--repo", &repo])
        .args([
            "--provider",
            agent.cli,
            "--permission-mode",
            "ask",
            "--push",
        ])
        .args(["--json", "Make the marker file."])
        .output()?;
    ensure!(
        out.status.success(),
        "task submit: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let task: Value = serde_json::from_slice(&out.stdout)?;
    let id = task["task_id"].as_str().context("no task id")?.to_owned();

    let request = first_request(suite, &person, env, &db.url, &id)?;
    let command = request["tool"].to_string();
    ensure!(
        command.contains("touch made.txt"),
        "the request does not name the command: {request}"
    );
    let request_id = request["id"].as_str().context("a request without an id")?;
    let allowed = forge(suite, &person, env)
        .args(["permissions", "allow", "--queue", &db.url, request_id])
        .output()?;
    ensure!(
        allowed.status.success(),
        "permissions allow --queue: {}",
        String::from_utf8_lossy(&allowed.stderr)
    );

    let status = final_status(suite, &person, env, &db.url, &id)?;
    ensure!(status["state"] == "succeeded", "the task: {status}");
    let report = &status["report"];
    ensure!(report["status"] == "committed", "not committed: {report}");
    ensure!(
        report.to_string().contains("made.txt"),
        "the allowed command's file is not in the change: {report}"
    );
    // Answered once: a second decision is refused, naming the first.
    let again = forge(suite, &person, env)
        .args(["permissions", "deny", "--queue", &db.url, request_id])
        .output()?;
    ensure!(
        again.status.code() == Some(4),
        "a second decision: exit {:?} ({})",
        again.status.code(),
        String::from_utf8_lossy(&again.stderr)
    );
    Ok(())
}

/// The task's first pending request, as another machine lists it from the queue.
fn first_request(
    suite: &Suite,
    home: &Path,
    env: &[(String, String)],
    queue: &str,
    task: &str,
) -> anyhow::Result<Value> {
    let started = Instant::now();
    loop {
        let out = forge(suite, home, env)
            .args(["permissions", "list", "--queue", queue, "--json"])
            .output()?;
        let pending: Value = serde_json::from_slice(&out.stdout)
            .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())?;
        if let Some(first) = pending.as_array().and_then(|all| {
            all.iter()
                .find(|r| r["owner"].to_string().contains(task))
                .cloned()
        }) {
            return Ok(first);
        }
        if started.elapsed() > ASKED_WITHIN {
            let status = final_status_now(suite, home, env, queue, task);
            bail!(
                "no request of task {task} after {} s (task: {status})",
                ASKED_WITHIN.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The task's status as it is now, for a failure's message.
fn final_status_now(
    suite: &Suite,
    home: &Path,
    env: &[(String, String)],
    queue: &str,
    task: &str,
) -> String {
    forge(suite, home, env)
        .args(["task", "status", "--queue", queue, "--json", task])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}
