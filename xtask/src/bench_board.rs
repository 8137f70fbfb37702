//! `cargo xtask bench --board`: the board's speed in real Chromium, printed (not asserted).
//!
//! 1. A board of 1 000 tasks (a fresh PostgreSQL queue: queued, running, held, delivered,
//!    failed) behind `serve --queue`: from a navigation to `/#board` (a new document, from
//!    `about:blank`) until every card is on the page, as WebDriver sees it and as the page
//!    itself counts it from its navigation's start, with where that time went (the script
//!    started, the board's request sent, its answer read, the cards drawn), median of 5
//!    loads; `GET /v1/board` alone, over HTTP; then a filter change re-rendered. Target:
//!    ≤ 500 ms. `FORGE_BENCH_BINARY=PATH` measures another build of `forge-code-agent`
//!    (an earlier one, for a before/after comparison).
//! 2. Event-to-page latency: a running task's page open, 60 `stage` events appended to the
//!    queue 50 ms apart (as a worker stores them); for each, the page's receipt time minus
//!    the event's stored time (one machine, one clock), p50 and p90. Target p50 ≤ 100 ms.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use forge_adapter_postgres::PgQueue;
use forge_domain::queue::{Finish, QueueState, QueueSubmission};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use forge_testkit::postgres::FreshDb;
use serde_json::{Value, json};

use crate::bench::median;
use crate::e2e::web::{browser, ensure_browser, start_driver};
use crate::e2e::{Suite, say};

const TASKS: usize = 1_000;
const EVENTS: usize = 60;
const LOADS: usize = 5;
/// `GET /v1/board` alone, over HTTP: the first (cold), then the median of the others.
const GETS: usize = 21;
/// What the page says of its first board, in ms since its navigation started: its script
/// ran, the board's request was sent, the answer's first and last byte came, the answer was
/// parsed, the cards were drawn.
const PHASES: [&str; 6] = [
    "script",
    "request",
    "first_byte",
    "last_byte",
    "response",
    "drawn",
];

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(suite: &Suite, url: &str, home: &Path) -> anyhow::Result<(Server, String)> {
    std::fs::create_dir_all(home)?;
    std::fs::write(home.join("forge-config.toml"), "")?;
    let binary =
        std::env::var_os("FORGE_BENCH_BINARY").map_or_else(|| suite.forge.clone(), Into::into);
    let child = Command::new(binary)
        .args(["serve", "--addr", "127.0.0.1:0", "--queue", url])
        .env("HOME", home)
        .env("FORGE_CONFIG", home.join("forge-config.toml"))
        .env_remove("FORGE_SERVER_TOKEN")
        .current_dir(home)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting serve --queue")?;
    let mut server = Server(child);
    let base = crate::e2e::listening_on(&mut server.0)?;
    Ok((server, base))
}

fn report(id: &str, status: &str, held: bool) -> Value {
    json!({
        "task_id": id, "status": status, "stop_reason": "validated", "provider": "claude",
        "task": "bench", "cycles": [], "files": [], "cost_usd": 0.01, "duration_ms": 1000,
        "risk": {"score": if held { 7 } else { 1 }, "level": "low", "reasons": []},
        "review": {"findings": []},
        "delivery": {"decision": if held { "pending_approval" } else { "committed" },
                     "branch": format!("forge/{id}"), "commit": null, "pushed": false,
                     "approval_id": if held { Some(format!("ap-{id}")) } else { None }},
    })
}

/// 1 000 tasks in every column; returns the id of one left running.
async fn fill(queue: &PgQueue) -> anyhow::Result<TaskId> {
    let providers = ["claude", "codex", "gemini"];
    let mut running = None;
    for i in 0..TASKS {
        let id = TaskId::new(format!("q-bench-{i:04}"))?;
        queue
            .submit(&QueueSubmission {
                task_id: id.clone(),
                repo: format!("https://example.invalid/repo-{}.git", i % 7),
                prompt: format!("Task {i}: make the thing do the other thing\nwith details"),
                options: json!({"provider": providers[i % 3]}),
                max_attempts: 3,
            })
            .await?;
        if i % 5 == 0 {
            continue; // queued
        }
        let worker = format!("w{}", i % 4);
        let claimed = queue
            .claim(&worker, 600_000)
            .await?
            .context("nothing to claim")?;
        let state = match i % 5 {
            1 => {
                running = Some(claimed.task_id.clone());
                continue;
            }
            2 | 3 => QueueState::Succeeded,
            _ => QueueState::Failed,
        };
        let status = if i % 5 == 2 {
            "pending_approval"
        } else {
            "committed"
        };
        let finish = Finish {
            state,
            exit_code: Some(if state == QueueState::Succeeded { 0 } else { 1 }),
            error: None,
            report: Some(report(claimed.task_id.as_str(), status, i % 5 == 2)),
        };
        queue.finish(&claimed.task_id, &worker, &finish).await?;
    }
    running.context("no running task")
}

async fn number(client: &fantoccini::Client, script: &str) -> anyhow::Result<f64> {
    let value = client.execute(script, vec![]).await?;
    Ok(value
        .as_f64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or(f64::NAN))
}

async fn wait(client: &fantoccini::Client, script: &str, what: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while client.execute(script, vec![]).await? != json!(true) {
        ensure!(Instant::now() < deadline, "{what}: not seen in 60 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(())
}

pub fn run(suite: &Suite) -> anyhow::Result<()> {
    ensure_browser()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let db = FreshDb::create_blocking();
    let driver = start_driver()?;
    runtime.block_on(async {
        let queue = PgQueue::connect(&db.url).await?;
        let started = Instant::now();
        let running = fill(&queue).await?;
        say(&format!("board   {TASKS} tasks stored in {:.1} s", started.elapsed().as_secs_f64()));
        let (_server, base) = serve(suite, &db.url, &suite.work.join("bench-board-home"))?;
        let client = browser(&driver).await?;
        let all_cards = format!("return document.body.dataset.boardCards === '{TASKS}';");
        let mut http = Vec::new();
        let mut bytes = 0;
        for _ in 0..GETS {
            let started = Instant::now();
            let body = reqwest::get(format!("{base}/v1/board")).await?.error_for_status()?.bytes().await?;
            http.push(started.elapsed().as_secs_f64() * 1000.0);
            bytes = body.len();
        }
        let mut wall = Vec::new();
        let mut page = Vec::new();
        // Since the navigation's start, as the page counts (absent from a page that does
        // not say).
        let mut phases: [Vec<f64>; PHASES.len()] = Default::default();
        for _ in 0..LOADS {
            client.goto("about:blank").await?;
            let started = Instant::now();
            client.goto(&format!("{base}/#board")).await?;
            wait(&client, &all_cards, "1000 cards").await?;
            wall.push(started.elapsed().as_secs_f64() * 1000.0);
            page.push(number(&client, "return document.body.dataset.boardMs;").await?);
            let times = client
                .execute("return JSON.parse(document.body.dataset.boardTimes || 'null');", vec![])
                .await?;
            for (i, key) in PHASES.into_iter().enumerate() {
                if let Some(ms) = times.get(key).and_then(Value::as_f64) {
                    phases[i].push(ms);
                }
            }
        }
        let phases: Vec<f64> = phases.iter_mut().map(|p| median(p)).collect();
        let cards = number(&client, "return document.querySelectorAll('.card').length;").await?;
        ensure!(cards as usize == TASKS, "{cards} cards on the page");
        // A filter change: the page asks again and re-renders.
        client
            .execute(
                "document.body.dataset.boardCards = ''; const s = document.getElementById('f-provider'); s.value = 'codex'; s.dispatchEvent(new Event('change'));",
                vec![],
            )
            .await?;
        wait(&client, "return document.body.dataset.boardCards !== '';", "the filtered board").await?;
        let filtered = number(&client, "return document.body.dataset.boardMs;").await?;

        // Event-to-page latency on a running task's page.
        client.goto(&format!("{base}/task/{}", running.as_str())).await?;
        // Its one stored event (`claimed`) read, the count starts from nothing.
        wait(&client, "return document.body.dataset.lastEvent === '1';", "the task page live").await?;
        client.execute("board.latencies.length = 0;", vec![]).await?;
        for i in 0..EVENTS {
            queue
                .append_event(&running, "stage", &json!({"stage": "agent", "detail": format!("bench {i}"), "elapsed_ms": i, "cost_usd": 0.0}))
                .await?;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        wait(&client, &format!("return board.latencies.length >= {EVENTS};"), "every event on the page").await?;
        let latencies = client.execute("return board.latencies;", vec![]).await?;
        let mut latencies: Vec<f64> = latencies
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        latencies.sort_by(f64::total_cmp);
        let p90 = latencies.get(latencies.len() * 9 / 10).copied().unwrap_or(f64::NAN);
        let p50 = median(&mut latencies);
        let _ = client.close().await;
        let build = match std::env::var("FORGE_BENCH_BINARY") {
            Ok(path) => path,
            Err(_) if suite.forge.to_string_lossy().contains("/release/") => "release".into(),
            Err(_) => "debug".into(),
        };
        let text = format!(
            "\nboard bench ({TASKS} tasks, Chromium headless, {build} build)\n\
             board interactive: navigation → {TASKS} cards median {:.0} ms (target ≤ 500); \
             in the page, from its navigation's start: script {:.0}, request {:.0}, first byte {:.0}, \
             last byte {:.0}, parsed {:.0}, drawn {:.0} ms; request → rendered {:.0} ms; filter change {:.0} ms\n\
             GET /v1/board alone ({} kB): the first {:.0} ms (the running tasks' events read), then median {:.0} ms\n\
             event → task page: p50 {p50:.0} ms, p90 {p90:.0} ms over {} events (target p50 ≤ 100)\n",
            median(&mut wall),
            phases[0],
            phases[1],
            phases[2],
            phases[3],
            phases[4],
            phases[5],
            median(&mut page),
            filtered,
            bytes / 1024,
            http.first().copied().unwrap_or(f64::NAN),
            median(&mut http[1..]),
            latencies.len(),
        );
        let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes());
        Ok(())
    })
}
