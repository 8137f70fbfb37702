//! Decode throughput on a large `codex exec --json` transcript (~40 MB built from the
//! recorded fixtures, ids varied), compared in one run with:
//! (a) `serde_json::from_str::<Value>` per line, (b) `from_str::<IgnoredAny>` per line
//! (syntax only). Rounds interleave the passes; prints MB/s and the ratios; asserts nothing
//! about time.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use forge_adapter_codex::CodexProvider;
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::{Provider, ProviderSettings};

const TARGET_BYTES: usize = 40 * 1024 * 1024;

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
fn decoder_pass(provider: &CodexProvider, request: &ExecutionRequest, lines: &[String]) {
    let mut decoder = provider.decoder(request);
    let mut out = Vec::with_capacity(8);
    for (i, l) in lines.iter().enumerate() {
        black_box(decoder.decode_line(i as u64 + 1, l, &mut out).ok());
        out.clear();
    }
    black_box(decoder.finish(None));
}

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
        "codex decode bench: {} lines, {mb:.1} MB, best of {rounds}",
        lines.len()
    );
    let provider = CodexProvider::new(ProviderSettings::default());
    let request = ExecutionRequest::new(
        ProviderId::new("codex").unwrap_or_else(|_| unreachable!()),
        "bench",
        "<WORKDIR>",
    );

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
    println!("  CodexDecoder          {:8.1} MB/s", rate(ours));
    println!(
        "  ours / Value      = {:.2}x (target >= 2x)",
        value.as_secs_f64() / ours.as_secs_f64()
    );
    println!(
        "  ours / IgnoredAny = {:.2}x (target >= 0.5x)",
        syntax.as_secs_f64() / ours.as_secs_f64()
    );
}
