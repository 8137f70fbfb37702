//! Decode throughput on a ~40 MB real-format gemini transcript, against two baselines on
//! the same lines in the same run: `serde_json::Value` per line, and a syntax-only pass
//! (`IgnoredAny`). Prints MB/s and ratios; asserts nothing about time.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use forge_adapter_gemini::GeminiProvider;
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::{Decoder, ProviderSettings};

const TARGET_BYTES: usize = 40 * 1024 * 1024;

/// The fixture transcripts' lines, repeated with varied ids and text until ~40 MB.
fn transcript() -> Vec<String> {
    let fixtures = forge_testkit::fixtures::transcripts("gemini");
    let base: Vec<&str> = fixtures
        .iter()
        .flat_map(|t| t.stdout.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert!(!base.is_empty(), "no gemini fixtures found");
    let mut lines = Vec::new();
    let mut bytes = 0;
    let mut round = 0u64;
    while bytes < TARGET_BYTES {
        for line in &base {
            let line = line
                .replace("_0\"", &format!("_{round}\""))
                .replace("fake model", &format!("fake model {round}"));
            bytes += line.len() + 1;
            lines.push(line);
        }
        round += 1;
    }
    lines
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
    for line in lines {
        black_box(serde_json::from_str::<serde_json::Value>(line).ok());
    }
}

#[inline(never)]
fn syntax_pass(lines: &[String]) {
    for line in lines {
        black_box(serde_json::from_str::<serde::de::IgnoredAny>(line).ok());
    }
}

#[inline(never)]
fn decoder_pass(provider: &GeminiProvider, request: &ExecutionRequest, lines: &[String]) {
    let mut decoder = provider.gemini_decoder(request);
    let mut out = Vec::with_capacity(8);
    for (i, line) in lines.iter().enumerate() {
        black_box(decoder.decode_line(i as u64 + 1, line, &mut out).ok());
        out.clear();
    }
    black_box(decoder.finish(None));
}

fn time(pass: impl FnOnce()) -> Duration {
    let start = Instant::now();
    pass();
    start.elapsed()
}

fn mb_per_s(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / (1024.0 * 1024.0) / d.as_secs_f64()
}

fn main() {
    let lines = transcript();
    let rounds = rounds();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let request = ExecutionRequest::new(
        ProviderId::new("gemini").unwrap_or_else(|_| unreachable!()),
        "p",
        "<WORKDIR>",
    );
    let provider = GeminiProvider::new(ProviderSettings::default());

    // FORGE_BENCH_ONLY=ours runs only the decoder (for profiling it alone).
    let only_ours = std::env::var("FORGE_BENCH_ONLY").is_ok_and(|v| v == "ours");
    // Rounds interleave the three passes so a load spike on a shared machine slows all of
    // them alike; the best round of each is kept.
    let (mut value, mut syntax, mut ours) = (Duration::MAX, Duration::MAX, Duration::MAX);
    for _ in 0..rounds {
        if !only_ours {
            value = value.min(time(|| value_pass(&lines)));
            syntax = syntax.min(time(|| syntax_pass(&lines)));
        }
        ours = ours.min(time(|| decoder_pass(&provider, &request, &lines)));
    }
    let (v, s, o) = (
        mb_per_s(bytes, value),
        mb_per_s(bytes, syntax),
        mb_per_s(bytes, ours),
    );
    println!(
        "gemini decode: {:.1} MB in {} lines, best of {rounds}",
        bytes as f64 / (1024.0 * 1024.0),
        lines.len()
    );
    println!("  serde_json::Value     {v:8.1} MB/s");
    println!("  IgnoredAny (syntax)   {s:8.1} MB/s");
    println!("  forge gemini decoder  {o:8.1} MB/s");
    println!("  ours / Value       = {:.2}x (target >= 2x)", o / v);
    println!("  ours / IgnoredAny  = {:.2}x (target >= 0.5x)", o / s);
}
