//! Stdout throughput: the fake CLI prints 100k small JSON lines; read once straight from
//! the pipe (std, `BufRead::lines`) and once through `TokioProcessRunner::next_stdout`.
//! Prints events per second and the ratio; asserts only that no line is lost.
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark: it prints its numbers and panics on failure"
)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use forge_adapter_process::TokioProcessRunner;
use forge_ports::{Invocation, RunningProcess, SpawnOptions};

const EVENTS: usize = 100_000;
const ROUNDS: usize = 5;

fn main() {
    let cli = forge_testkit::fake_cli::path();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut direct = Vec::new();
    let mut ours = Vec::new();
    for _ in 0..ROUNDS {
        direct.push(read_direct(&cli));
        ours.push(runtime.block_on(read_through_runner(&cli)));
    }
    let (direct, ours) = (median(direct), median(ours));
    let rate = |d: Duration| EVENTS as f64 / d.as_secs_f64();
    println!("stdout throughput, {EVENTS} lines, median of {ROUNDS}:");
    println!(
        "  direct pipe read : {:>10.0} lines/s ({direct:?})",
        rate(direct)
    );
    println!(
        "  TokioProcessRunner: {:>10.0} lines/s ({ours:?})",
        rate(ours)
    );
    println!(
        "  ratio runner/direct time: {:.2}x",
        ours.as_secs_f64() / direct.as_secs_f64()
    );
}

fn read_direct(cli: &std::path::Path) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(cli)
        .env("FAKE_EVENTS", EVENTS.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines().count();
    child.wait().unwrap();
    assert_eq!(lines, EVENTS);
    started.elapsed()
}

async fn read_through_runner(cli: &std::path::Path) -> Duration {
    let started = Instant::now();
    let mut invocation = Invocation::new(cli, Vec::new(), std::env::temp_dir());
    invocation
        .env
        .set
        .insert("FAKE_EVENTS".into(), EVENTS.to_string());
    let mut child = TokioProcessRunner::new()
        .start(invocation, SpawnOptions::default())
        .await
        .unwrap();
    let mut lines = 0;
    while child.next_stdout().await.unwrap().is_some() {
        lines += 1;
    }
    child.wait().await.unwrap();
    assert_eq!(lines, EVENTS);
    started.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}
