//! Decode throughput on a ~40 MB real-format transcript, against two baselines on the same
//! lines in the same run: a `serde_json::Value` parse, and a syntax-only pass (`IgnoredAny`).
//! Prints MB/s and ratios; asserts nothing about time.
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use forge_adapter_claude::{ClaudeProvider, UserPaths};
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::{Provider, ProviderSettings};

const TARGET_BYTES: usize = 40 * 1024 * 1024;

fn fixture_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for t in forge_testkit::fixtures::transcripts("claude") {
        lines.extend(
            t.stdout
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned),
        );
    }
    let extra = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/transcripts/2.1.330");
    for name in [
        "partial_messages_unicode",
        "edit_read_write_glob",
        "rate_limit_then_success",
    ] {
        if let Ok(text) = std::fs::read_to_string(format!("{extra}/{name}.jsonl")) {
            lines.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_owned),
            );
        }
    }
    lines
}

/// Repeats the fixture lines with varied ids until the transcript is ~40 MB.
fn transcript() -> Vec<String> {
    let base = fixture_lines();
    let mut out = Vec::new();
    let mut size = 0;
    let mut round = 0u64;
    while size < TARGET_BYTES {
        for line in &base {
            let line = line
                .replace("toolu_fake", &format!("toolu_r{round}_"))
                .replace("\"msg_fake", &format!("\"msg_r{round}_"));
            size += line.len() + 1;
            out.push(line);
        }
        round += 1;
    }
    out
}

/// How many interleaved rounds: `FORGE_BENCH_ROUNDS`, else 7 (1 under callgrind).
fn rounds() -> usize {
    std::env::var("FORGE_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7)
}

// The passes are separate, never-inlined functions so an instruction-count profile
// (`FORGE_BENCH_ROUNDS=1 valgrind --tool=callgrind <bench binary>`, then
// `callgrind_annotate --inclusive=yes <out> | grep _pass`) shows each one's cost.

#[inline(never)]
fn value_pass(lines: &[String]) {
    for l in lines {
        black_box(serde_json::from_str::<serde_json::Value>(l).ok());
    }
}

#[inline(never)]
fn syntax_pass(lines: &[String]) {
    for l in lines {
        black_box(serde_json::from_str::<serde::de::IgnoredAny>(l).ok());
    }
}

#[inline(never)]
fn decoder_pass(provider: &ClaudeProvider, request: &ExecutionRequest, lines: &[String]) {
    let mut decoder = provider.decoder(request);
    let mut out = Vec::with_capacity(16);
    for (i, l) in lines.iter().enumerate() {
        black_box(decoder.decode_line(i as u64 + 1, l, &mut out).ok());
        out.clear();
    }
    black_box(decoder.finish(None));
}

/// Times one pass.
fn time(pass: impl FnOnce()) -> Duration {
    let start = Instant::now();
    pass();
    start.elapsed()
}

fn main() {
    let lines = transcript();
    let rounds = rounds();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mb = bytes as f64 / (1024.0 * 1024.0);
    println!(
        "claude decode bench: {} lines, {mb:.1} MB, best of {rounds}",
        lines.len()
    );
    let provider =
        ClaudeProvider::with_user_paths(ProviderSettings::default(), UserPaths::default());
    let Ok(id) = ProviderId::new("claude") else {
        return;
    };
    let request = ExecutionRequest::new(id, "bench", "<WORKDIR>");

    // FORGE_BENCH_ONLY=ours runs only the decoder (for profiling it alone).
    let only_ours = std::env::var("FORGE_BENCH_ONLY").is_ok_and(|v| v == "ours");
    // Rounds interleave the three passes so a busy machine slows all of them alike; the
    // best round of each is kept.
    let (mut value, mut syntax, mut ours) = (Duration::MAX, Duration::MAX, Duration::MAX);
    for _ in 0..rounds {
        if !only_ours {
            value = value.min(time(|| value_pass(&lines)));
            syntax = syntax.min(time(|| syntax_pass(&lines)));
        }
        ours = ours.min(time(|| decoder_pass(&provider, &request, &lines)));
    }

    let rate = |d: Duration| mb / d.as_secs_f64();
    println!("  serde_json::Value     {:8.1} MB/s", rate(value));
    println!("  IgnoredAny (syntax)   {:8.1} MB/s", rate(syntax));
    println!("  ClaudeDecoder         {:8.1} MB/s", rate(ours));
    println!(
        "  ours / Value      = {:.2}x (target >= 2x)",
        value.as_secs_f64() / ours.as_secs_f64()
    );
    println!(
        "  ours / IgnoredAny = {:.2}x (target >= 0.5x)",
        syntax.as_secs_f64() / ours.as_secs_f64()
    );
}
