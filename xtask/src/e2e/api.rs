//! The `serve` group: each real CLI against the fake model through `forge-code-agent serve`:
//! POST a run, read its SSE events to the result, cancel by DELETE and by disconnect (the
//! process group gone, the bundle complete), and time POST → first SSE event.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use forge_cli::offline::{self, CodexHome};
use serde_json::{Value, json};

use super::receiver::Receiver;
use super::summary::Verdict;
use super::{Ctx, ServerProcess, Suite, isolate_env, say};

/// A scenario slow enough to watch: 30 deltas, 200 ms apart (about 6 s).
pub const SLOW_SCENARIO: &str = r#"name = "slow_stream"
description = "One long answer streamed slowly, for live streaming, cancel and resume tests."
prompts = ["Tell me a slow story."]

[[turns]]
text = "Once upon a time a fake model streamed this answer one small piece at a time, slowly enough for a browser to watch it arrive, for a user to cancel it, and for a page to be reloaded in the middle of it and pick up where it left off. The end."
chunks = 30
chunk_delay_ms = 200
"#;

/// `forge-code-agent serve` on a free loopback port; killed when dropped.
pub struct Serve {
    child: Child,
    pub base: String,
}

impl Serve {
    pub fn start(
        suite: &Suite,
        root: &Path,
        process_env: &[(String, String)],
    ) -> anyhow::Result<Self> {
        Self::start_with(suite, root, process_env, &[])
    }

    /// [`Serve::start`] with more arguments.
    pub fn start_with(
        suite: &Suite,
        root: &Path,
        process_env: &[(String, String)],
        extra: &[&str],
    ) -> anyhow::Result<Self> {
        let mut command = Command::new(&suite.forge);
        command
            .args(["serve", "--addr", "127.0.0.1:0", "--root"])
            .arg(root)
            .args(extra)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        isolate_env(&mut command, suite);
        command.envs(process_env.iter().map(|(k, v)| (k, v)));
        let mut child = command.spawn().context("starting forge-code-agent serve")?;
        let base = match super::server::listening_on(&mut child) {
            Ok(base) => base,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(Self { base, child })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Environment variables a process needs, as (name, value).
pub type ProcessEnv = Vec<(String, String)>;

/// A workspace per provider under `dir`, each with a `forge.toml` for the fake model at
/// `base_url`; returns them and the environment `serve` itself needs (codex's home).
pub fn workspaces(
    suite: &Suite,
    dir: &Path,
    base_url: &str,
    providers: &[&'static str],
) -> anyhow::Result<(Vec<(&'static str, PathBuf)>, ProcessEnv)> {
    let mut out = Vec::new();
    let mut env = Vec::new();
    for provider in providers {
        let root = dir.join(provider);
        let workspace = root.join("ws");
        std::fs::create_dir_all(&workspace)?;
        let status = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&workspace)
            .status()
            .context("git init")?;
        ensure!(status.success(), "git init failed");
        let template = CodexHome::Template(root.join("codex-template"));
        let offline = offline::configure(provider, &suite.clis, base_url, &template)?;
        std::fs::write(workspace.join("forge.toml"), offline.project_toml())?;
        env.extend(offline.process_env.clone());
        out.push((*provider, workspace.canonicalize()?));
    }
    Ok((out, env))
}

/// One parsed SSE message.
#[derive(Debug, Clone)]
pub struct Message {
    pub id: Option<u64>,
    pub event: String,
    pub data: String,
}

/// Reads SSE messages off a response, one at a time.
pub struct SseReader {
    response: reqwest::Response,
    buffer: String,
}

impl SseReader {
    pub fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buffer: String::new(),
        }
    }

    pub async fn next(&mut self) -> anyhow::Result<Option<Message>> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut message = Message {
                    id: None,
                    event: "message".into(),
                    data: String::new(),
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        message.id = v.parse().ok();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        v.clone_into(&mut message.event);
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        message.data.push_str(v);
                    }
                }
                if !message.data.is_empty() {
                    return Ok(Some(message));
                }
                continue;
            }
            match self.response.chunk().await? {
                Some(chunk) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                None => return Ok(None),
            }
        }
    }
}

/// `POST /v1/runs` → run id.
pub async fn post_run(
    client: &reqwest::Client,
    serve: &Serve,
    body: Value,
) -> anyhow::Result<String> {
    let response = client
        .post(serve.url("/v1/runs"))
        .json(&body)
        .send()
        .await?;
    let status = response.status();
    let created: Value = response.json().await?;
    ensure!(status == 201, "POST /v1/runs: {status} {created}");
    created["run_id"]
        .as_str()
        .map(str::to_owned)
        .context("no run_id")
}

pub async fn subscribe(
    client: &reqwest::Client,
    serve: &Serve,
    run_id: &str,
) -> anyhow::Result<SseReader> {
    let response = client
        .get(serve.url(&format!("/v1/runs/{run_id}/events")))
        .send()
        .await?;
    ensure!(response.status() == 200, "events: {}", response.status());
    Ok(SseReader::new(response))
}

/// Whether any process is left in process group `pgid`.
fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.filter_map(Result::ok).any(|e| {
        std::fs::read_to_string(e.path().join("stat")).is_ok_and(|stat| {
            stat.rsplit_once(") ").is_some_and(|(_, rest)| {
                let fields: Vec<&str> = rest.split(' ').collect();
                // state ppid pgrp …: a zombie is gone for our purposes.
                fields.first().is_some_and(|s| *s != "Z" && *s != "X")
                    && fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid)
            })
        })
    })
}

async fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    cond()
}

/// The process group of the run's CLI: a child of `serve` working in `workspace` (forge
/// starts each CLI as the leader of its own group).
fn cli_group(serve_pid: u32, workspace: &Path) -> Option<i32> {
    let entries = std::fs::read_dir("/proc").ok()?;
    entries.filter_map(Result::ok).find_map(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let (_, rest) = stat.rsplit_once(") ")?;
        let fields: Vec<&str> = rest.split(' ').collect();
        let ppid: u32 = fields.get(1)?.parse().ok()?;
        let pgid: i32 = fields.get(2)?.parse().ok()?;
        let cwd = std::fs::read_link(e.path().join("cwd")).ok()?;
        (ppid == serve_pid && cwd == workspace).then_some(pgid)
    })
}

fn bundle_complete(workspace: &Path, run_id: &str) -> bool {
    let dir = workspace.join(format!(".forgecode/runs/{run_id}"));
    ["request.json", "run.json", "events.jsonl", "result.json"]
        .iter()
        .all(|f| dir.join(f).is_file())
}

/// The whole group: a verdict per provider and check.
pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Verdict>> {
    let suite = &ctx.suite;
    let dir = suite.work.join("serve");
    std::fs::create_dir_all(&dir)?;
    let scenario = dir.join("slow_stream.toml");
    std::fs::write(&scenario, SLOW_SCENARIO)?;
    let model = ServerProcess::start(
        &suite.forge,
        &scenario.display().to_string(),
        &dir.join("requests.jsonl"),
    )?;
    let (workspaces, mut env) = workspaces(suite, &dir, &model.base_url, &ctx.providers)?;
    let receiver = Receiver::start()?;
    env.push(("FORGE_EVENT_SINK_TOKEN".into(), SINK_TOKEN.into()));
    let serve = Serve::start_with(suite, &dir, &env, &["--event-sink", &receiver.url])?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut verdicts = Vec::new();
    for (provider, workspace) in &workspaces {
        for (check, outcome) in
            runtime.block_on(provider_checks(&serve, &receiver, provider, workspace))
        {
            let mut verdict = Verdict::new(check, provider);
            match outcome {
                Ok(note) => {
                    say(&format!("serve {provider:<7} {check:<26} ok {note}"));
                    verdict.note = note;
                }
                Err(e) => {
                    say(&format!("serve {provider:<7} {check:<26} FAILED {e:#}"));
                    verdict.failures.push(format!("{e:#}"));
                }
            }
            verdicts.push(verdict);
        }
    }
    Ok(verdicts)
}

type Checks = Vec<(&'static str, anyhow::Result<String>)>;

const SINK_TOKEN: &str = "e2e-sink-token";

async fn provider_checks(
    serve: &Serve,
    receiver: &Receiver,
    provider: &str,
    workspace: &Path,
) -> Checks {
    let client = reqwest::Client::new();
    let body = |cancel_on_disconnect: bool| {
        json!({
            "provider": provider,
            "prompt": "Tell me a slow story.",
            "workdir": workspace,
            "permission_mode": "bypass",
            "timeout_ms": 120_000,
            "cancel_on_disconnect": cancel_on_disconnect,
        })
    };
    vec![
        (
            "run to the result",
            run_to_result(&client, serve, receiver, body(false)).await,
        ),
        (
            "cancel by DELETE",
            cancel_by_delete(&client, serve, workspace, body(false)).await,
        ),
        (
            "cancel by disconnect",
            cancel_by_disconnect(&client, serve, workspace, body(true)).await,
        ),
    ]
}

/// Every event in order (ids 1, 2, …), text before the end, then a successful result;
/// the event sink got the same events, in order, with the token and the session id.
async fn run_to_result(
    client: &reqwest::Client,
    serve: &Serve,
    receiver: &Receiver,
    body: Value,
) -> anyhow::Result<String> {
    let posted = Instant::now();
    let run_id = post_run(client, serve, body).await?;
    let mut reader = subscribe(client, serve, &run_id).await?;
    let mut first_ms = None;
    let mut kinds = Vec::new();
    let mut result = None;
    while let Some(message) = reader.next().await? {
        first_ms.get_or_insert_with(|| posted.elapsed().as_secs_f64() * 1000.0);
        if message.event == "result" {
            result = Some(serde_json::from_str::<Value>(&message.data)?);
            break;
        }
        let expected = kinds.len() as u64 + 1;
        ensure!(
            message.id == Some(expected),
            "event id {:?}, expected {expected}",
            message.id
        );
        kinds.push(message.event);
    }
    let result = result.context("the stream ended without a result")?;
    ensure!(result["status"] == "success", "result {}", result["status"]);
    let texts = kinds.iter().filter(|k| *k == "text").count();
    ensure!(texts > 0, "no text event");

    let delivered = eventually(Duration::from_secs(20), || {
        receiver.of_run(&run_id).len() >= kinds.len()
    })
    .await;
    let got = receiver.of_run(&run_id);
    ensure!(
        delivered,
        "the sink got {} of {} events",
        got.len(),
        kinds.len()
    );
    let sink_kinds: Vec<&str> = got
        .iter()
        .map(|(_, b)| b["event_type"].as_str().unwrap_or_default())
        .collect();
    ensure!(
        sink_kinds == kinds,
        "sink order {sink_kinds:?} vs SSE {kinds:?}"
    );
    let bearer = format!("Bearer {SINK_TOKEN}");
    ensure!(
        got.iter()
            .all(|(auth, _)| auth.as_deref() == Some(bearer.as_str())),
        "a sink request without the token"
    );
    // From the session's start on, every event names it; before it (a connection the
    // sandbox refused while the CLI started, as codex's update check) none can.
    let from_session = got
        .iter()
        .skip_while(|(_, b)| b["event_type"] != "session_started");
    ensure!(
        from_session
            .clone()
            .all(|(_, b)| b["session_id"] == result["metadata"]["session_id"]),
        "a sink event without the session id"
    );
    ensure!(
        from_session.count() > 0,
        "no session_started event reached the sink"
    );
    Ok(format!(
        "({} events, {texts} text, first SSE event {:.0} ms after POST; sink got all, in order)",
        kinds.len(),
        first_ms.unwrap_or_default()
    ))
}

/// Waits for the first text, DELETEs, expects 202 and a cancelled result; then the group
/// is gone and the bundle complete.
async fn cancel_by_delete(
    client: &reqwest::Client,
    serve: &Serve,
    workspace: &Path,
    body: Value,
) -> anyhow::Result<String> {
    let run_id = post_run(client, serve, body).await?;
    let mut reader = subscribe(client, serve, &run_id).await?;
    wait_for_text(&mut reader).await?;
    let pid = cli_group(serve.pid(), workspace).context("no CLI process of the run")?;
    let response = client
        .delete(serve.url(&format!("/v1/runs/{run_id}")))
        .send()
        .await?;
    ensure!(response.status() == 202, "DELETE: {}", response.status());
    let started = Instant::now();
    let mut result = None;
    while let Some(message) = reader.next().await? {
        if message.event == "result" {
            result = Some(serde_json::from_str::<Value>(&message.data)?);
        }
    }
    let result = result.context("no result after the cancel")?;
    ensure!(result["status"] == "partial", "status {}", result["status"]);
    ensure!(
        result["errors"].to_string().contains("cancelled"),
        "errors {}",
        result["errors"]
    );
    ensure!(
        eventually(Duration::from_secs(15), || !group_alive(pid)).await,
        "process group {pid} still alive"
    );
    ensure!(bundle_complete(workspace, &run_id), "bundle incomplete");
    Ok(format!(
        "(result {:.0} ms after DELETE)",
        started.elapsed().as_secs_f64() * 1000.0
    ))
}

/// With `cancel_on_disconnect`, dropping the only stream cancels the run.
async fn cancel_by_disconnect(
    client: &reqwest::Client,
    serve: &Serve,
    workspace: &Path,
    body: Value,
) -> anyhow::Result<String> {
    let run_id = post_run(client, serve, body).await?;
    let mut reader = subscribe(client, serve, &run_id).await?;
    wait_for_text(&mut reader).await?;
    let pid = cli_group(serve.pid(), workspace).context("no CLI process of the run")?;
    drop(reader);
    let started = Instant::now();
    ensure!(
        eventually(Duration::from_secs(20), || !group_alive(pid)).await,
        "process group {pid} still alive"
    );
    ensure!(
        eventually(Duration::from_secs(10), || bundle_complete(
            workspace, &run_id
        ))
        .await,
        "bundle incomplete"
    );
    // The bundle is finished a moment before the server records the result.
    let deadline = Instant::now() + Duration::from_secs(10);
    let run = loop {
        let run: Value = client
            .get(serve.url(&format!("/v1/runs/{run_id}")))
            .send()
            .await?
            .json()
            .await?;
        if run["state"] == "finished" || Instant::now() > deadline {
            break run;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    ensure!(
        run["result"]["status"] == "partial",
        "status {}",
        run["result"]["status"]
    );
    Ok(format!(
        "(group gone {:.0} ms after the disconnect)",
        started.elapsed().as_secs_f64() * 1000.0
    ))
}

async fn wait_for_text(reader: &mut SseReader) -> anyhow::Result<()> {
    while let Some(message) = reader.next().await? {
        if message.event == "text" {
            return Ok(());
        }
        ensure!(
            message.event != "result",
            "the run ended before any text: {}",
            message.data
        );
    }
    bail!("the stream ended before any text")
}
