//! `travel`: the agent session travels with the task (issue 39), with each real CLI. Per
//! provider: a fresh PostgreSQL queue, the fake model playing `travel`, a bare repository.
//! Worker A (its own HOME and data directory) runs a task to a pushed commit and stops;
//! `task submit --follow-up` queues a follow-up, which worker B — another HOME, another
//! work-tree path, a cold repository cache — takes. B must RESUME THE SAME SESSION: the
//! report says it was imported and resumed, the follow-up's cycles carry the parent's session
//! id, and the fake model's first request of the follow-up carries the first conversation
//! (the first session's last answer, which no new session could know). The follow-up's
//! commit lands on the parent's branch as a fast-forward.

use std::path::Path;

use anyhow::Context;
use forge_testkit::postgres::FreshDb;
use serde_json::Value;

use super::Ctx;
use super::case_run::Suite;
use super::queue::{final_status, forge, git, git_out, per_provider, prepare_case_of, submit};
use super::summary::Verdict;

const CASE: &str = "travel_followup";
const SCENARIO: &str = "travel";
const FIRST: &str = "Write the answer to answer.txt.";
const FOLLOW_UP: &str = "TRAVEL-FOLLOW-UP: also write notes.txt.";
/// The first session's last answer: only a resumed session sends it back.
const MARKER: &str = "FIRST-SESSION-MARKER";

pub fn names() -> Vec<&'static str> {
    vec![CASE]
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    Ok(per_provider(ctx, "travel", CASE, run_case))
}

fn ensure(what: &str, ok: bool, status: &Value) -> anyhow::Result<()> {
    anyhow::ensure!(ok, "{what}: {status:#}");
    Ok(())
}

fn run_case(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let case = prepare_case_of(suite, root, "travel", provider, SCENARIO)?;
    let (dir, env) = (&case.dir, &case.env);
    let bare = dir.join("remote.git");
    let repo = format!("file://{}", bare.display());
    let db = FreshDb::create_blocking();
    let submitter = dir.join("submitter");
    std::fs::create_dir_all(&submitter)?;
    std::fs::write(submitter.join("forge-config.toml"), "")?;

    // Worker A runs the task, then stops: its machine is gone for the follow-up.
    let worker_a = case.start_worker(suite, &db.url, "a")?;
    let first = submit(suite, (&submitter, env), &db.url, &repo, provider, FIRST)?;
    let parent = final_status(suite, &submitter, env, &db.url, &first)?;
    drop(worker_a);
    ensure(
        "the task succeeded",
        parent["state"] == "succeeded",
        &parent,
    )?;
    ensure("on worker a", parent["worker"] == "a", &parent)?;
    let report = &parent["report"];
    ensure(
        "its session was kept",
        report["session_travel"]["exported"] == true,
        report,
    )?;
    let session = last_session(report).context("the task's report names no session")?;
    let first_commit = git_out(&bare, &["rev-parse", &format!("forge/{first}")])?;

    // Worker B, another machine, takes the follow-up.
    let _worker_b = case.start_worker(suite, &db.url, "b")?;
    let out = forge(suite, &submitter, env)
        .args([
            "task",
            "submit",
            "--queue",
            &db.url,
            "--follow-up",
            &first,
            "--json",
        ])
        .arg(FOLLOW_UP)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "task submit --follow-up: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = serde_json::from_slice::<Value>(&out.stdout)?["task_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let status = final_status(suite, &submitter, env, &db.url, &second)?;
    ensure(
        "the follow-up succeeded",
        status["state"] == "succeeded",
        &status,
    )?;
    ensure("on worker b", status["worker"] == "b", &status)?;
    let report = &status["report"];
    let travel = &report["session_travel"];
    ensure(
        "the parent's session was resumed",
        travel["resumed"] == true,
        report,
    )?;
    ensure(
        "the session resumed is the parent's",
        travel["resumed_session"] == session.as_str(),
        report,
    )?;
    ensure(
        "the follow-up's runs are the same session",
        last_session(report).as_deref() == Some(session.as_str()),
        report,
    )?;
    carries_first_conversation(&dir.join("requests.jsonl"))?;
    fast_forward(&bare, &first, &second, first_commit.trim())?;
    drop(case);
    Ok(())
}

/// The last cycle's session id of a report.
fn last_session(report: &Value) -> Option<String> {
    report["cycles"]
        .as_array()?
        .iter()
        .rev()
        .find_map(|c| c["session_id"].as_str().map(str::to_owned))
}

/// The fake model's first turn request of the follow-up holds the first session's answer.
fn carries_first_conversation(log: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(log).context("the fake model's request log")?;
    let first = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["turn"].is_u64() && r["body"].to_string().contains("TRAVEL-FOLLOW-UP"))
        .context("no request of the follow-up reached the fake model")?;
    let body = first["body"].to_string();
    anyhow::ensure!(
        body.contains(MARKER),
        "the follow-up's first request does not carry the first conversation ({MARKER}): {}",
        body.chars().take(4000).collect::<String>()
    );
    Ok(())
}

/// `forge/<first>` on the remote: the parent's commit, then the follow-up's on top of it
/// (trailers `Forge-Task: <first>` and `<second>`), and no branch of the follow-up's own.
fn fast_forward(bare: &Path, first: &str, second: &str, first_commit: &str) -> anyhow::Result<()> {
    let branch = format!("forge/{first}");
    let log = git_out(
        bare,
        &["log", "--format=%H %P%n%B%x1e", &format!("main..{branch}")],
    )?;
    let commits: Vec<&str> = log
        .split('\u{1e}')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    anyhow::ensure!(commits.len() == 2, "{branch} above main: {log}");
    anyhow::ensure!(
        commits[0].contains(&format!("Forge-Task: {second}")),
        "the tip is not the follow-up's commit: {log}"
    );
    anyhow::ensure!(
        commits[0]
            .lines()
            .next()
            .unwrap_or_default()
            .ends_with(first_commit),
        "the follow-up's commit is not on top of the parent's ({first_commit}): {log}"
    );
    git(
        bare,
        &["merge-base", "--is-ancestor", first_commit, &branch],
    )?;
    let notes = git_out(bare, &["show", &format!("{branch}:notes.txt")])?;
    anyhow::ensure!(notes.contains("42"), "notes.txt: {notes}");
    let branches = git_out(
        bare,
        &[
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/forge/",
        ],
    )?;
    anyhow::ensure!(branches.trim() == branch, "task branches: {branches}");
    Ok(())
}
