//! Runtime overhead, measured against a baseline in the same run (not a timed test).
//!
//! 1. Throughput: a fake CLI prints 100k small events; read through `CodeAgent::stream`
//!    (real process runner, real artifact bundle) vs reading the same child's stdout directly.
//! 2. Per-event added latency: the fake stamps each line with CLOCK_MONOTONIC; p50/p99 of
//!    (arrival − stamp) through forge minus the same through a direct reader.
//! 3. Memory: 500 concurrent runs that each printed one event and wait; RSS growth per run.
//!
//! Targets (issue 2): p99 added latency < 1 ms per event; < 2 MiB per concurrent run; no
//! event lost. Run: `cargo bench -p forge-app --bench runtime` (or `cargo xtask bench`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "benchmark binary"
)]

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use forge_adapter_fs::{FsArtifactStore, FsWorkspace};
use forge_adapter_process::TokioProcessRunner;
use forge_adapter_telemetry::{NoopLogger, NoopMetrics, SystemClock, UuidV7Ids};
use forge_app::{CodeAgent, ProviderRegistry, Runtime};
use forge_domain::{AgentEvent, ExecutionStatus, ProviderId, Redactor};
use forge_ports::{KillLadder, Provider, ProviderSettings};
use forge_testkit::fakes::EchoProvider;
use tokio::io::{AsyncBufReadExt, BufReader};

const EVENTS: u64 = 100_000;
const LATENCY_EVENTS: u64 = 20_000;
const CONCURRENT: usize = 500;

fn monotonic_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    #[allow(
        unsafe_code,
        reason = "one libc call to read the clock the fake CLI stamps with"
    )]
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts)
    };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn agent(workdir: &Path, fake: &Path, env: &[(&str, String)]) -> CodeAgent {
    let runtime = Runtime {
        runner: Arc::new(TokioProcessRunner::new()),
        workspace: Arc::new(FsWorkspace::new()),
        artifacts: Arc::new(FsArtifactStore::new(Redactor::new())),
        vcs: None,
        logger: Arc::new(NoopLogger),
        metrics: Arc::new(NoopMetrics),
        clock: Arc::new(SystemClock::new()),
        ids: Arc::new(UuidV7Ids::new()),
    };
    let registry = ProviderRegistry::new()
        .register(ProviderId::new("echo").unwrap(), |s: ProviderSettings| {
            Arc::new(EchoProvider::new(s)) as Arc<dyn Provider>
        });
    let settings = ProviderSettings {
        binary: Some(fake.to_path_buf()),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        ..ProviderSettings::default()
    };
    CodeAgent::builder(runtime, registry)
        .provider("echo")
        .provider_settings("echo", settings)
        .workdir(workdir)
        .kill_ladder(KillLadder {
            interrupt_grace: Duration::from_millis(200),
            terminate_grace: Duration::from_millis(200),
        })
        .build()
        .unwrap()
}

/// Reads the fake's stdout directly: the floor any supervisor is measured against.
async fn direct(fake: &Path, env: &[(&str, String)], mut on_line: impl FnMut(&str)) -> u64 {
    let mut child = tokio::process::Command::new(fake)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut n = 0;
    while let Some(line) = lines.next_line().await.unwrap() {
        on_line(&line);
        n += 1;
    }
    child.wait().await.unwrap();
    n
}

async fn through_forge(
    agent: &CodeAgent,
    mut on_event: impl FnMut(&AgentEvent),
) -> (u64, ExecutionStatus) {
    let mut handle = agent.stream(agent.request("bench"));
    let mut n = 0;
    while let Some(ev) = handle.next_event().await {
        on_event(&ev);
        n += 1;
    }
    let result = handle.result().await;
    (n, result.status)
}

fn percentile(sorted: &[u128], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx] as f64 / 1000.0
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    #[allow(
        unsafe_code,
        reason = "getrlimit/setrlimit: 500 runs need more than 1024 descriptors"
    )]
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max.min(65_536);
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

fn main() {
    raise_fd_limit();
    let fake = forge_testkit::fake_cli::path();
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();

    rt.block_on(async {
        // 1. Throughput.
        let env = [("FAKE_EVENTS", EVENTS.to_string())];
        let t = Instant::now();
        let direct_n = direct(&fake, &env, |_| {}).await;
        let direct_s = t.elapsed().as_secs_f64();
        let agent_bulk = agent(dir.path(), &fake, &env);
        let t = Instant::now();
        let (forge_n, status) = through_forge(&agent_bulk, |_| {}).await;
        let forge_s = t.elapsed().as_secs_f64();
        println!("throughput ({EVENTS} events)");
        println!("  direct stdout read : {:>10.0} events/s ({direct_n} lines)", direct_n as f64 / direct_s);
        println!("  CodeAgent::stream  : {:>10.0} events/s ({forge_n} events, status {status:?}, bundle written)", forge_n as f64 / forge_s);
        println!("  ratio forge/direct : {:.2}", (forge_n as f64 / forge_s) / (direct_n as f64 / direct_s));
        println!("  events lost        : {}", direct_n.saturating_sub(forge_n));

        // 2. Latency.
        // Paced at one event per 100 µs (10k events/s, far above any agent's rate): latency
        // is then the cost of getting one event through, not the length of a backlog.
        let env = [
            ("FAKE_EVENTS", LATENCY_EVENTS.to_string()),
            ("FAKE_EVENTS_TIMED", "1".to_owned()),
            ("FAKE_EVENTS_INTERVAL_US", "100".to_owned()),
        ];
        let mut direct_lat = Vec::with_capacity(LATENCY_EVENTS as usize);
        direct(&fake, &env, |line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let stamp: u128 = v["text"].as_str().unwrap().parse().unwrap();
            direct_lat.push(monotonic_ns().saturating_sub(stamp));
        })
        .await;
        let agent_timed = agent(dir.path(), &fake, &env);
        let mut forge_lat = Vec::with_capacity(LATENCY_EVENTS as usize);
        through_forge(&agent_timed, |ev| {
            if let AgentEvent::Text { text, .. } = ev {
                if let Ok(stamp) = text.parse::<u128>() {
                    forge_lat.push(monotonic_ns().saturating_sub(stamp));
                }
            }
        })
        .await;
        direct_lat.sort_unstable();
        forge_lat.sort_unstable();
        let (d50, d99) = (percentile(&direct_lat, 0.5), percentile(&direct_lat, 0.99));
        let (f50, f99) = (percentile(&forge_lat, 0.5), percentile(&forge_lat, 0.99));
        println!("per-event latency ({LATENCY_EVENTS} flushed events, one per 100 µs), µs");
        println!("  direct             : p50 {d50:>8.1}  p99 {d99:>8.1}");
        println!("  CodeAgent::stream  : p50 {f50:>8.1}  p99 {f99:>8.1}");
        println!("  added by forge     : p50 {:>8.1}  p99 {:>8.1}  (target p99 < 1000)", f50 - d50, f99 - d99);

        // 3. Memory per concurrent run.
        let env = [("FAKE_ANNOUNCE", "1".to_owned()), ("FAKE_HANG", "1".to_owned())];
        let agent_hang = agent(dir.path(), &fake, &env);
        let before = rss_kib();
        let t = Instant::now();
        let mut handles = Vec::with_capacity(CONCURRENT);
        for _ in 0..CONCURRENT {
            handles.push(agent_hang.stream(agent_hang.request("hang")));
        }
        for h in &mut handles {
            let first = h.next_event().await;
            assert!(first.is_some(), "every run announced itself");
        }
        let during = rss_kib();
        let started_s = t.elapsed().as_secs_f64();
        for h in &handles {
            h.cancel();
        }
        let mut cancelled = 0;
        for h in handles {
            if h.result().await.was_cancelled() {
                cancelled += 1;
            }
        }
        let per_run_kib = during.saturating_sub(before) as f64 / CONCURRENT as f64;
        println!("memory ({CONCURRENT} concurrent runs, all started in {started_s:.1} s)");
        println!("  RSS before {before} KiB, during {during} KiB");
        println!("  per run            : {per_run_kib:.0} KiB = {:.3} MiB (target < 2 MiB)", per_run_kib / 1024.0);
        println!("  cancelled cleanly  : {cancelled}/{CONCURRENT}");
    });
}
