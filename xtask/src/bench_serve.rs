//! `cargo xtask bench --serve`: the HTTP server's costs, measured in one run.
//!
//! 1. Time to first event through `serve` (POST /v1/runs → first SSE event) against the
//!    same CLI's first stdout line read directly (same argv, environment and home), for the
//!    real claude on the fake model; alternating, medians and the paired median.
//! 2. 500 SSE subscribers of one run of the fake CLI: each must get every event in order;
//!    the server's resident memory per subscriber is printed.
//! 3. 100 runs of the fake CLI started at once through the API, each read to its result.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use forge_adapter_fakemodel::Scenario;
use serde_json::json;

use crate::bench::{median, raw_ttfe};
use crate::e2e::api::{Serve, SseReader, post_run, subscribe};
use crate::e2e::{self, ServerProcess, Suite, capture, case_run, say};

const SCENARIO: &str = "plain_answer";
const SUBSCRIBERS: usize = 500;
const RUNS: usize = 100;
const FAKE_EVENTS: usize = 2000;

pub fn run(suite: &Suite, root: &Path, runs: usize) -> anyhow::Result<()> {
    let fake = build_fake_cli(root, suite)?;
    let mut report = String::new();
    report.push_str(&ttfe(suite, runs.max(1))?);
    report.push_str(&fan_out(suite, &fake)?);
    report.push_str(&concurrent_runs(suite, root, &fake)?);
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), report.as_bytes());
    Ok(())
}

fn build_fake_cli(root: &Path, suite: &Suite) -> anyhow::Result<PathBuf> {
    let profile_dir = suite.forge.parent().context("binary dir")?;
    let mut args = vec!["build", "-p", "forge-testkit", "--bin", "fake-agent-cli"];
    if profile_dir.ends_with("release") {
        args.push("--release");
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo).args(&args).current_dir(root).status()?;
    ensure!(status.success(), "building fake-agent-cli failed");
    Ok(profile_dir.join("fake-agent-cli"))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// POST → first SSE event vs the raw CLI's first stdout line.
fn ttfe(suite: &Suite, runs: usize) -> anyhow::Result<String> {
    let provider = "claude";
    let model = ServerProcess::start(&suite.forge, SCENARIO, &suite.work.join("requests.jsonl"))?;
    let prompt = Scenario::builtin(SCENARIO)?
        .prompts
        .first()
        .cloned()
        .unwrap_or_default();
    let expect = e2e::cases::all()
        .into_iter()
        .find(|e| e.scenario == SCENARIO)
        .context("plain_answer expectations")?;
    let mut case = e2e::prepare(suite, &expect, provider, &model.base_url)?;
    let real = forge_cli::offline::PinnedCli::of(provider)
        .context("provider")?
        .binary(&suite.clis);
    let first = e2e::run_forge(suite, &case, &prompt, None, Duration::from_secs(90))?;
    if first.str_at("/status") != Some("success") {
        bail!("the capture run failed: {}", first.stderr);
    }
    let captured = capture::read(&case.root).context("no captured invocation")?;
    let home = case_run::run_dirs(&case.workspace)
        .pop()
        .context("no bundle")?
        .join("home");
    case.offline.binary = real.clone();
    case.offline.home = Some(home);
    case.offline.isolate_home = false;
    case.offline.copy_user_auth = false;
    std::fs::write(
        case.workspace.join("forge.toml"),
        case.offline.project_toml(),
    )?;
    let workspace = case.workspace.canonicalize()?;
    let env: Vec<(String, String)> = case.offline.process_env.clone().into_iter().collect();
    let serve = Serve::start(suite, &workspace, &env)?;
    let rt = runtime()?;
    let client = reqwest::Client::new();
    let (mut raw, mut served) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        raw.push(raw_ttfe(&real, &captured, &workspace, &prompt)?);
        served.push(rt.block_on(serve_ttfe(&client, &serve, &workspace, &prompt))?);
    }
    say(&format!(
        "serve ttfe: raw {raw:.1?} ms, serve {served:.1?} ms"
    ));
    let mut paired: Vec<f64> = served.iter().zip(&raw).map(|(s, r)| s - r).collect();
    let (r, s, p) = (median(&mut raw), median(&mut served), median(&mut paired));
    Ok(format!(
        "\ntime to first event through serve, {provider} on {SCENARIO}, median of {runs} runs each\n\
         raw CLI first stdout line {r:.1} ms · POST→first SSE event {s:.1} ms · serve−raw {:+.1} ms · paired median {p:+.1} ms (target ≤ +30 ms)\n",
        s - r
    ))
}

async fn serve_ttfe(
    client: &reqwest::Client,
    serve: &Serve,
    workspace: &Path,
    prompt: &str,
) -> anyhow::Result<f64> {
    let started = Instant::now();
    let body = json!({"provider": "claude", "prompt": prompt, "workdir": workspace, "permission_mode": "bypass"});
    let run_id = post_run(client, serve, body).await?;
    let mut reader = subscribe(client, serve, &run_id).await?;
    reader.next().await?.context("no event")?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    while reader.next().await?.is_some() {}
    Ok(ms)
}

/// A workspace whose claude is the fake CLI with `env`.
fn fake_workspace(
    suite: &Suite,
    name: &str,
    fake: &Path,
    env: &[(&str, String)],
) -> anyhow::Result<PathBuf> {
    let dir = suite.work.join(name);
    std::fs::create_dir_all(&dir)?;
    let vars: Vec<String> = env.iter().map(|(k, v)| format!("{k} = {v:?}")).collect();
    std::fs::write(
        dir.join("forge.toml"),
        format!(
            "[providers.claude]\nbinary = {:?}\n\n[providers.claude.env]\n{}\n",
            fake.display().to_string(),
            vars.join("\n")
        ),
    )?;
    Ok(dir.canonicalize()?)
}

/// claude's recorded `hello` transcript (the newest recorded version).
fn hello_fixture(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("adapters/testkit/fixtures/claude");
    let mut versions: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    versions.sort();
    versions
        .into_iter()
        .rev()
        .map(|v| v.join("hello.jsonl"))
        .find(|p| p.is_file())
        .context("no recorded claude hello transcript")
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// 500 subscribers of one run: every event, in order, to each.
fn fan_out(suite: &Suite, fake: &Path) -> anyhow::Result<String> {
    let workspace = fake_workspace(
        suite,
        "fan-out",
        fake,
        &[
            ("FAKE_EVENTS", FAKE_EVENTS.to_string()),
            ("FAKE_EVENTS_INTERVAL_US", "1500".into()),
        ],
    )?;
    let serve = Serve::start(suite, &workspace, &[])?;
    let rt = runtime()?;
    let before = rss_kib(serve.pid());
    let outcome = rt.block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()?;
        let body = json!({"provider": "claude", "prompt": "events", "workdir": workspace});
        let started = Instant::now();
        let run_id = post_run(&client, &serve, body).await?;
        let mut readers = Vec::new();
        for _ in 0..SUBSCRIBERS {
            let reader = subscribe(&client, &serve, &run_id).await?;
            readers.push(tokio::spawn(read_in_order(reader)));
        }
        let subscribed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let peak = rss_kib(serve.pid());
        let mut counts = Vec::new();
        for reader in readers {
            counts.push(reader.await??);
        }
        anyhow::Ok((
            counts,
            peak,
            subscribed_ms,
            started.elapsed().as_secs_f64() * 1000.0,
        ))
    })?;
    let (counts, peak, subscribed_ms, total_ms) = outcome;
    let first = counts.first().copied().unwrap_or(0);
    ensure!(
        first >= FAKE_EVENTS,
        "a subscriber got {first} events, expected at least {FAKE_EVENTS}"
    );
    ensure!(
        counts.iter().all(|c| *c == first),
        "subscribers got different counts: {counts:?}"
    );
    let per_sub = (peak.saturating_sub(before)) as f64 / SUBSCRIBERS as f64;
    Ok(format!(
        "{SUBSCRIBERS} subscribers of one fake-CLI run: each got all {first} events in order; all subscribed in {subscribed_ms:.0} ms, done in {total_ms:.0} ms; server RSS {before} KiB → {peak} KiB ({per_sub:.1} KiB per subscriber)\n"
    ))
}

/// Reads a stream to its result, checking the ids go 1, 2, 3, …; returns the event count.
async fn read_in_order(mut reader: SseReader) -> anyhow::Result<usize> {
    let mut expected = 1;
    while let Some(message) = reader.next().await? {
        if message.event == "result" {
            return Ok(expected as usize - 1);
        }
        ensure!(
            message.id == Some(expected),
            "id {:?} where {expected} was due",
            message.id
        );
        expected += 1;
    }
    bail!("the stream ended without a result")
}

/// 100 runs at once through the API, each to its successful result.
fn concurrent_runs(suite: &Suite, root: &Path, fake: &Path) -> anyhow::Result<String> {
    let fixture = hello_fixture(root)?;
    let workspace = fake_workspace(
        suite,
        "concurrent",
        fake,
        &[("FAKE_REPLAY", fixture.display().to_string())],
    )?;
    let serve = Serve::start(suite, &workspace, &[])?;
    let rt = runtime()?;
    let (ok, ms) = rt.block_on(async {
        let client = reqwest::Client::new();
        let started = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..RUNS {
            let client = client.clone();
            let body =
                json!({"provider": "claude", "prompt": format!("run {i}"), "workdir": workspace});
            let url = serve.url("");
            tasks.push(tokio::spawn(async move {
                let created: serde_json::Value = client
                    .post(format!("{url}/v1/runs"))
                    .json(&body)
                    .send()
                    .await?
                    .json()
                    .await?;
                let run_id = created["run_id"].as_str().context("run_id")?.to_owned();
                let response = client
                    .get(format!("{url}/v1/runs/{run_id}/events"))
                    .send()
                    .await?;
                let mut reader = SseReader::new(response);
                while let Some(message) = reader.next().await? {
                    if message.event == "result" {
                        let result: serde_json::Value = serde_json::from_str(&message.data)?;
                        return anyhow::Ok(result["status"] == "success");
                    }
                }
                anyhow::Ok(false)
            }));
        }
        let mut ok = 0;
        for task in tasks {
            if task.await?? {
                ok += 1;
            }
        }
        anyhow::Ok((ok, started.elapsed().as_secs_f64() * 1000.0))
    })?;
    ensure!(ok == RUNS, "{ok} of {RUNS} runs succeeded");
    Ok(format!(
        "{RUNS} concurrent runs of the fake CLI through the API: all succeeded in {ms:.0} ms ({:.1} ms per run)\n",
        ms / RUNS as f64
    ))
}
