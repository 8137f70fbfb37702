//! Decode throughput on a large `codex exec --json` transcript (~40 MB built from the
//! recorded fixtures, ids varied), compared in one run with:
//! (a) `serde_json::from_str::<Value>` per line, (b) `from_str::<IgnoredAny>` per line
//! (syntax only). Prints MB/s and the ratios; asserts nothing about time.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use forge_adapter_codex::CodexProvider;
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::{Provider, ProviderSettings};

const TARGET_BYTES: usize = 40 * 1024 * 1024;
const ROUNDS: usize = 3;

fn transcript() -> Vec<String> {
    let fixtures = forge_testkit::fixtures::transcripts("codex");
    let base: Vec<String> = fixtures
        .iter()
        .flat_map(|t| t.stdout.lines().map(str::to_owned).collect::<Vec<_>>())
        .filter(|l| !l.trim().is_empty())
        .collect();
    // A reasoning item and a larger tool output, so the mix is not only tiny lines.
    let extra = [
        r#"{"type":"item.completed","item":{"id":"item_9","type":"reasoning","text":"**Checking the workspace** before writing anything, then running the tests."}}"#.to_owned(),
        format!(
            r#"{{"type":"item.completed","item":{{"id":"item_8","type":"command_execution","command":"/bin/bash -lc 'cargo test'","aggregated_output":"{}","exit_code":0,"status":"completed"}}}}"#,
            "test suite::ok ... ok\\n".repeat(40)
        ),
    ];
    let mut lines = Vec::new();
    let mut size = 0;
    let mut round = 0u64;
    while size < TARGET_BYTES {
        for line in base.iter().chain(extra.iter()) {
            // Vary ids so nothing can be cached by content.
            let line = line
                .replace("\"item_", &format!("\"r{round}_item_"))
                .replace("01a2007", &format!("{round:07x}"));
            size += line.len() + 1;
            lines.push(line);
        }
        round += 1;
    }
    lines
}

fn best_of(rounds: usize, mut f: impl FnMut()) -> Duration {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let lines = transcript();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mb = bytes as f64 / 1e6;
    println!("transcript: {} lines, {:.1} MB", lines.len(), mb);

    // FORGE_BENCH_ONLY_OURS=1 skips the baselines (for profiling the decoder alone).
    let only_ours = std::env::var_os("FORGE_BENCH_ONLY_OURS").is_some();
    let baseline_rounds = if only_ours { 0 } else { ROUNDS };
    let value = best_of(baseline_rounds, || {
        for l in &lines {
            black_box(serde_json::from_str::<serde_json::Value>(l).ok());
        }
    });
    let syntax = best_of(baseline_rounds, || {
        for l in &lines {
            black_box(serde_json::from_str::<serde::de::IgnoredAny>(l).ok());
        }
    });
    let provider = CodexProvider::new(ProviderSettings::default());
    let request = ExecutionRequest::new(
        ProviderId::new("codex").unwrap_or_else(|_| unreachable!()),
        "bench",
        "<WORKDIR>",
    );
    let ours = best_of(ROUNDS, || {
        let mut decoder = provider.decoder(&request);
        let mut out = Vec::with_capacity(8);
        for (i, l) in lines.iter().enumerate() {
            let _ = decoder.decode_line(i as u64 + 1, l, &mut out);
            black_box(&out);
            out.clear();
        }
        black_box(decoder.finish(None));
    });

    let no_acc = best_of(ROUNDS, || {
        let mut decoder = provider.decoder(&request);
        let mut out = Vec::with_capacity(8);
        for (i, l) in lines.iter().enumerate() {
            let _ = decoder.decode_line(i as u64 + 1, l, &mut out);
            black_box(&out);
            out.clear();
        }
    });
    let rate = |d: Duration| mb / d.as_secs_f64();
    println!("  (without finish)     {:>8.1} MB/s", rate(no_acc));
    println!("serde_json::Value      {:>8.1} MB/s", rate(value));
    println!("IgnoredAny (syntax)    {:>8.1} MB/s", rate(syntax));
    println!("codex decoder          {:>8.1} MB/s", rate(ours));
    println!(
        "ours / Value      = {:.2}x (target >= 2x)",
        value.as_secs_f64() / ours.as_secs_f64()
    );
    println!(
        "ours / IgnoredAny = {:.2}x (target >= 0.5x)",
        syntax.as_secs_f64() / ours.as_secs_f64()
    );
}
