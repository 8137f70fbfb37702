//! The decode benchmark every provider adapter runs (`cargo bench -p <adapter> --bench
//! decode`): a large real-format transcript of one run, built from the recorded fixture lines
//! ([`one_run`]: the session opening once, the recorded body lines repeated with varied ids,
//! the end-of-run line once), decoded in interleaved rounds beside `serde_json::Value` and a
//! syntax-only pass (`IgnoredAny`) on the same lines, for reference. Decode speed is not a
//! goal (the CLIs print kilobytes per second): the one figure held against a number is the
//! floor, the Python SDK's parser as a whole process on the same transcript
//! ([`python_floor`]), which forge's decoder must beat at least 2x. Asserts nothing about
//! time.
//!
//! `FORGE_BENCH_ROUNDS=n` sets the rounds (best of each kept; default 7), and
//! `FORGE_BENCH_ONLY=ours` runs only the decoder, for profiling it alone. The passes are
//! separate, never-inlined functions so an instruction-count profile
//! (`FORGE_BENCH_ROUNDS=1 valgrind --tool=callgrind <bench binary>`, then
//! `callgrind_annotate --inclusive=yes <out> | grep _pass`) shows each one's cost.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use forge_ports::Decoder;

pub mod python_floor;

/// The size of the transcript the issues measure against.
pub const TARGET_BYTES: usize = 40 * 1024 * 1024;

/// The non-blank stdout lines of every recorded fixture transcript of `provider`.
pub fn fixture_lines(provider: &str) -> Vec<String> {
    crate::fixtures::transcripts(provider)
        .iter()
        .flat_map(|t| {
            t.stdout
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `base` repeated until the lines add up to `target_bytes` (newlines counted), each round's
/// copy passed through `vary(line, round)` so ids differ and nothing is cached by content.
///
/// # Panics
/// When `base` is empty (no fixtures found: nothing to measure).
pub fn repeat(
    base: &[String],
    target_bytes: usize,
    vary: impl Fn(&str, u64) -> String,
) -> Vec<String> {
    assert!(
        !base.is_empty(),
        "no fixture lines to build a transcript from"
    );
    let mut lines = Vec::new();
    let mut size = 0;
    let mut round = 0u64;
    while size < target_bytes {
        for line in base {
            let line = vary(line, round);
            size += line.len() + 1;
            lines.push(line);
        }
        round += 1;
    }
    lines
}

/// Where a transcript line belongs in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Printed once at the start (session start, the prompt's echo).
    Opening,
    /// What a run prints as it works: messages, tool calls, results, notices.
    Body,
    /// Printed once at the end (the end-of-run report).
    Closing,
}

/// The transcript of one long run, as the one decoder of a run sees it: the opening lines
/// `base` starts with, then every body line of `base` repeated (each round through
/// `vary(line, round)`, so ids differ) until the lines add up to `target_bytes`, then the
/// last closing line of `base`. Repeating whole recorded runs instead would hand one decoder
/// thousands of session starts and end-of-run reports, which no run prints.
///
/// # Panics
/// When `base` has no body lines (no fixtures found: nothing to measure).
pub fn one_run(
    base: &[String],
    part: impl Fn(&str) -> Part,
    target_bytes: usize,
    vary: impl Fn(&str, u64) -> String,
) -> Vec<String> {
    let opening: Vec<String> = base
        .iter()
        .take_while(|l| part(l) == Part::Opening)
        .cloned()
        .collect();
    let body: Vec<String> = base
        .iter()
        .filter(|l| part(l) == Part::Body)
        .cloned()
        .collect();
    let closing = base.iter().rev().find(|l| part(l) == Part::Closing);
    let used = |lines: &[String]| lines.iter().map(|l| l.len() + 1).sum::<usize>();
    let reserved = used(&opening) + closing.map_or(0, |l| l.len() + 1);
    let mut lines = opening;
    lines.extend(repeat(&body, target_bytes.saturating_sub(reserved), vary));
    lines.extend(closing.cloned());
    lines
}

/// How many interleaved rounds: `FORGE_BENCH_ROUNDS`, else 7.
pub fn rounds() -> usize {
    std::env::var("FORGE_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7)
}

#[inline(never)]
fn value_pass(lines: &[&str]) {
    for l in lines {
        black_box(serde_json::from_str::<serde_json::Value>(l).ok());
    }
}

#[inline(never)]
fn syntax_pass(lines: &[&str]) {
    for l in lines {
        black_box(serde_json::from_str::<serde::de::IgnoredAny>(l).ok());
    }
}

/// One run's decoding, as the runtime does it: line by line, then `finish`.
#[inline(never)]
fn decoder_pass<D: Decoder>(mut decoder: D, lines: &[&str]) {
    let mut out = Vec::with_capacity(16);
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

/// Runs the benchmark on `lines` with a fresh decoder from `new_decoder` per round, and
/// prints the report under `provider`'s name.
pub fn run<D: Decoder>(provider: &str, lines: &[String], new_decoder: impl Fn() -> D) {
    let rounds = rounds();
    // One buffer, lines sliced out of it: how a run's lines arrive (a pipe or a file read
    // into a buffer), and the same for all three passes. Lines in separate allocations
    // scattered over the heap would add a cache miss per line to every pass alike.
    let text = lines.join("\n");
    let lines: Vec<&str> = text.split('\n').collect();
    let lines = lines.as_slice();
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    let mb = bytes as f64 / (1024.0 * 1024.0);
    println!(
        "{provider} decode bench: {} lines, {mb:.1} MB, best of {rounds}",
        lines.len()
    );
    let only_ours = std::env::var("FORGE_BENCH_ONLY").is_ok_and(|v| v == "ours");
    // Rounds interleave the three passes so a busy machine slows all of them alike; the
    // best round of each is kept.
    let (mut value, mut syntax, mut ours) = (Duration::MAX, Duration::MAX, Duration::MAX);
    for _ in 0..rounds {
        if !only_ours {
            value = value.min(time(|| value_pass(lines)));
            syntax = syntax.min(time(|| syntax_pass(lines)));
        }
        let decoder = new_decoder();
        ours = ours.min(time(|| decoder_pass(decoder, lines)));
    }
    let rate = |d: Duration| mb / d.as_secs_f64();
    println!("  serde_json::Value     {:8.1} MB/s", rate(value));
    println!("  IgnoredAny (syntax)   {:8.1} MB/s", rate(syntax));
    println!(
        "  {:<21} {:8.1} MB/s",
        format!("{provider} decoder"),
        rate(ours)
    );
    println!(
        "  ours / Value      = {:.2}x, ours / IgnoredAny = {:.2}x (reference only)",
        value.as_secs_f64() / ours.as_secs_f64(),
        syntax.as_secs_f64() / ours.as_secs_f64()
    );
    match python_floor::measure(provider, &text) {
        Ok((python, kind)) => println!(
            "  python ({kind}), whole process {:8.1} MB/s\n  python / ours = {:.2}x (floor >= 2x{})",
            rate(python),
            python.as_secs_f64() / ours.as_secs_f64(),
            if python.as_secs_f64() >= 2.0 * ours.as_secs_f64() {
                ""
            } else {
                ": BELOW THE FLOOR"
            }
        ),
        Err(why) => println!("  python floor not measured: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_opens_and_closes_once_around_the_repeated_body() {
        let base: Vec<String> = ["start", "a", "end", "start", "b", "end"]
            .map(str::to_owned)
            .to_vec();
        let part = |l: &str| match l {
            "start" => Part::Opening,
            "end" => Part::Closing,
            _ => Part::Body,
        };
        let lines = one_run(&base, part, 20, |l, round| format!("{l}{round}"));
        assert_eq!(lines, ["start", "a0", "b0", "a1", "b1", "end"]);
    }

    #[test]
    fn transcripts_repeat_with_varied_lines_until_the_target_size() {
        let base = vec!["{\"id\":\"a\"}".to_owned(), "x".to_owned()];
        let lines = repeat(&base, 26, |l, round| l.replace('a', &round.to_string()));
        assert_eq!(lines, ["{\"id\":\"0\"}", "x", "{\"id\":\"1\"}", "x"]);
    }
}
