//! `queue_serve`: `serve --queue` with each real CLI. Per provider: a fresh PostgreSQL
//! database, a loopback fake model, one `forge-code-agent worker` with its own HOME (another
//! machine), and a `serve --queue` process with a HOME of its own; the task is submitted
//! with `POST /v1/tasks`, its events are read over SSE while the worker runs it through the
//! real CLI — `claimed`, the pipeline's stages (the agent's among them) and the agent's own
//! events (its session, tool calls, answer), `finished`, then the final task with its
//! validated report — and read again from `Last-Event-ID: 2`.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context;
use forge_testkit::postgres::FreshDb;
use serde_json::{Value, json};

use super::Ctx;
use super::case_run::Suite;
use super::queue::{QueueCase, Worker, forge, per_provider, prepare_case, prepare_case_of};
use super::summary::Verdict;

const CASE: &str = "queue_serve_events";
const LIMIT: Duration = Duration::from_secs(240);

pub fn names() -> Vec<&'static str> {
    vec![CASE]
}

/// One SSE message: (id, event, data).
type Message = (Option<u64>, String, String);

/// Reads a whole event stream (it ends after the final `task` message).
fn read_stream(url: &str, last: Option<&str>) -> anyhow::Result<Vec<Message>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let text = rt.block_on(async {
        let mut request = reqwest::Client::builder().timeout(LIMIT).build()?.get(url);
        if let Some(last) = last {
            request = request.header("Last-Event-ID", last);
        }
        let response = request.send().await?.error_for_status()?;
        response.text().await
    })?;
    let mut messages = Vec::new();
    for block in text.split("\n\n") {
        let (mut id, mut event, mut data) = (None, String::new(), String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event:") {
                event = v.trim().to_owned();
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if !event.is_empty() {
            messages.push((id, event, data));
        }
    }
    Ok(messages)
}

pub(super) fn post_task(base: &str, body: &Value) -> anyhow::Result<Value> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let response = reqwest::Client::new()
            .post(format!("{base}/v1/tasks"))
            .json(body)
            .send()
            .await?;
        anyhow::ensure!(
            response.status() == 201,
            "POST /v1/tasks: {}",
            response.status()
        );
        Ok(response.json::<Value>().await?)
    })
}

/// A queue on a fresh PostgreSQL database, one worker with its own HOME running `provider`
/// against the fake model, and `serve --queue` in front of it.
/// Held until dropped, in this order: serve, worker, database, fake model.
pub(super) struct Front {
    /// `None` only while it restarts.
    serve: Option<Worker>,
    _worker: Worker,
    _db: FreshDb,
    _case: QueueCase,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The bare remote the task's repository URL names.
    pub repo: String,
    token: Option<String>,
}

impl Front {
    /// Stops `serve` and starts it again on the same address with the same queue, roots
    /// and token (a server restarted by its operator; the page's origin stays the same).
    pub(super) fn restart_serve(&mut self, suite: &Suite) -> anyhow::Result<()> {
        // Dropping it kills it and waits for it.
        self.serve = None;
        let addr = self
            .base
            .strip_prefix("http://")
            .context("the base URL")?
            .to_owned();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match spawn_serve(
                suite,
                &self._case,
                &self._db.url,
                &addr,
                self.token.as_deref(),
            ) {
                Ok((serve, base)) => {
                    anyhow::ensure!(base == self.base, "serve came back on {base}");
                    self.serve = Some(serve);
                    return Ok(());
                }
                // The port may take a moment to be free again.
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => return Err(e.context("restarting serve")),
            }
        }
    }
}

/// `serve --queue DB --root CASE_DIR` on `addr` (its own HOME under the case); the process
/// and the base URL it printed.
fn spawn_serve(
    suite: &Suite,
    case: &QueueCase,
    db_url: &str,
    addr: &str,
    token: Option<&str>,
) -> anyhow::Result<(Worker, String)> {
    let (dir, env) = (&case.dir, &case.env);
    let front = dir.join("front");
    std::fs::create_dir_all(&front)?;
    std::fs::write(front.join("forge-config.toml"), "")?;
    let mut command = forge(suite, &front, env);
    command.args(["serve", "--addr", addr, "--queue", db_url]);
    // The repository (a file:// URL) lies inside the roots: the API takes no other.
    command.arg("--root").arg(dir);
    if let Some(token) = token {
        command.args(["--token", token]);
    }
    let mut serve = Worker(
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting serve --queue")?,
    );
    let base = super::server::listening_on(&mut serve.0)?;
    Ok((serve, base))
}

pub(super) fn start_front(
    suite: &Suite,
    root: &Path,
    group: &str,
    provider: &str,
) -> anyhow::Result<Front> {
    start_front_of(suite, root, group, provider, None, None)
}

/// As [`start_front`], the fake model playing `scenario` (of `delivery_scenarios`) when
/// given, and `serve` requiring `token` when given.
pub(super) fn start_front_of(
    suite: &Suite,
    root: &Path,
    group: &str,
    provider: &str,
    scenario: Option<&str>,
    token: Option<&str>,
) -> anyhow::Result<Front> {
    let case = match scenario {
        Some(scenario) => prepare_case_of(suite, root, group, provider, scenario)?,
        None => prepare_case(suite, root, group, provider)?,
    };
    let repo = format!("file://{}", case.dir.join("remote.git").display());
    let db = FreshDb::create_blocking();
    let worker = case.start_worker(suite, &db.url, "a")?;
    let (serve, base) = spawn_serve(suite, &case, &db.url, "127.0.0.1:0", token)?;
    Ok(Front {
        serve: Some(serve),
        _worker: worker,
        _db: db,
        _case: case,
        base,
        repo,
        token: token.map(str::to_owned),
    })
}

fn run_case(suite: &Suite, root: &Path, provider: &'static str) -> anyhow::Result<()> {
    let front = start_front(suite, root, "queue_serve", provider)?;
    let (base, repo) = (&front.base, &front.repo);
    let started = Instant::now();
    let created = post_task(
        base,
        &json!({"repo": repo, "prompt": "Write the answer to answer.txt.",
                "options": {"provider": provider}}),
    )?;
    let id = created["task_id"].as_str().unwrap_or_default().to_owned();
    let events_url = format!("{base}/v1/tasks/{id}/events");
    let all = read_stream(&events_url, None)?;
    anyhow::ensure!(started.elapsed() < LIMIT, "the stream took too long");
    let summary = || format!("{all:?}");
    let ids: Vec<u64> = all.iter().filter_map(|m| m.0).collect();
    anyhow::ensure!(
        ids == (1..=ids.len() as u64).collect::<Vec<_>>(),
        "ids 1, 2, 3 …: {}",
        summary()
    );
    let kinds: Vec<&str> = all.iter().map(|m| m.1.as_str()).collect();
    // The stream opens with the task's pending permission requests (none here), then the
    // task's own events from the first.
    anyhow::ensure!(
        kinds.first() == Some(&"permissions") && kinds.get(1) == Some(&"claimed"),
        "first the pending requests, then claimed: {}",
        summary()
    );
    let stages: Vec<String> = all
        .iter()
        .filter(|m| m.1 == "stage")
        .filter_map(|m| serde_json::from_str::<Value>(&m.2).ok())
        .filter_map(|v| v["data"]["stage"].as_str().map(str::to_owned))
        .collect();
    anyhow::ensure!(
        stages.iter().any(|s| s == "agent") && stages.iter().any(|s| s == "validation"),
        "agent and validation stages: {stages:?}"
    );
    // The agent's own events travel too: its session, the tool call that wrote the file,
    // its answer.
    let agent: Vec<String> = all
        .iter()
        .filter(|m| m.1 == "agent")
        .filter_map(|m| serde_json::from_str::<Value>(&m.2).ok())
        .filter_map(|v| v["data"]["type"].as_str().map(str::to_owned))
        .collect();
    for kind in ["session_started", "tool_call_started", "completed"] {
        anyhow::ensure!(
            agent.iter().any(|k| k == kind),
            "an agent {kind} event: {agent:?}"
        );
    }
    let last = all.last().context("an empty stream")?;
    anyhow::ensure!(last.1 == "task", "ends with the task: {}", summary());
    let task: Value = serde_json::from_str(&last.2)?;
    anyhow::ensure!(task["state"] == "succeeded", "succeeded: {task}");
    // A URL task is delivered: validated, then committed in the worker's cache.
    anyhow::ensure!(
        task["report"]["stop_reason"] == "validated" && task["report"]["status"] == "committed",
        "validated and committed: {task}"
    );
    let rest = read_stream(&events_url, Some("2"))?;
    let rest_ids: Vec<u64> = rest.iter().filter_map(|m| m.0).collect();
    anyhow::ensure!(
        rest_ids == ids.get(2..).unwrap_or_default(),
        "resumed after 2: {rest_ids:?} of {ids:?}"
    );
    drop(front);
    Ok(())
}

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    Ok(per_provider(ctx, "queue_serve", CASE, run_case))
}
