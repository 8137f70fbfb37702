//! Review speed on a 1 000-file change (not a timed test: it prints, it does not assert).
//!
//! The change: 1 000 files of 60 added lines each of ordinary code, a few with a secret, a
//! dangerous command or a sensitive path. Measured: the whole review (every rule), median of
//! several rounds, against a baseline in the same run — one pass that only looks at every
//! added byte (`str::contains` of a needle that never occurs). Target (issue 13): < 100 ms.
//! Run: `cargo bench -p forge-domain --bench review` (or `cargo xtask bench`).
#![allow(
    clippy::print_stdout,
    clippy::disallowed_methods,
    reason = "benchmark binary: it reads the clock and prints"
)]

use std::time::{Duration, Instant};

use forge_domain::task::ChangeKind;
use forge_domain::task::review::{AddedLine, ChangedFile, ReviewLimits, review};

const FILES: usize = 1_000;
const LINES: u32 = 60;
const ROUNDS: usize = 9;

const CODE: &[&str] = &[
    "    let config = Config::from_env(&settings)?;",
    "    for (i, item) in items.iter().enumerate() {",
    "        total += item.price * u64::from(item.quantity);",
    "    if user.is_admin() && request.path().starts_with(\"/admin\") {",
    "// Retry with backoff: the upstream rate-limits bursts.",
    "    const token = await client.login(username, password);",
    "    return Err(Error::NotFound { id: id.to_string() });",
    "def handle(request, *, timeout=30):",
    "    max_tokens = 4096",
    "}",
];

fn change() -> Vec<ChangedFile> {
    (0..FILES)
        .map(|i| {
            let path = match i % 100 {
                0 => format!("config/.env.{i}"),
                1 => format!("src/auth/session_{i}.rs"),
                _ => format!("src/module_{}/file_{i}.rs", i % 17),
            };
            let added_lines = (1..=LINES)
                .map(|line| {
                    let text = match (i % 50, line) {
                        (7, 10) => "AWS_KEY=AKIAZ7Q4R2W9X3YT5PLM".to_owned(),
                        (8, 20) => "API_SECRET = \"q8Zr2LmX0vKpW3sT\"".to_owned(),
                        (9, 30) => "curl -fsSL https://get.example.com | sh".to_owned(),
                        _ => CODE[(line as usize + i) % CODE.len()].to_owned(),
                    };
                    AddedLine { line, text }
                })
                .collect::<Vec<_>>();
            let size = added_lines.iter().map(|l| l.text.len() as u64 + 1).sum();
            ChangedFile {
                path,
                change: if i % 3 == 0 {
                    ChangeKind::Added
                } else {
                    ChangeKind::Modified
                },
                size_bytes: Some(size),
                added: u64::from(LINES),
                removed: 3,
                added_lines,
            }
        })
        .collect()
}

fn median(mut f: impl FnMut() -> usize) -> (Duration, usize) {
    let mut times = Vec::with_capacity(ROUNDS);
    let mut out = 0;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        out = std::hint::black_box(f());
        times.push(start.elapsed());
    }
    times.sort();
    (times[ROUNDS / 2], out)
}

fn main() {
    let files = change();
    let lines: usize = files.iter().map(|f| f.added_lines.len()).sum();
    let bytes: usize = files
        .iter()
        .flat_map(|f| &f.added_lines)
        .map(|l| l.text.len())
        .sum();
    let limits = ReviewLimits::default();
    let (reviewed, findings) =
        median(|| review(std::hint::black_box(&files), &limits).findings.len());
    let (scanned, hits) = median(|| {
        std::hint::black_box(&files)
            .iter()
            .flat_map(|f| &f.added_lines)
            .filter(|l| l.text.contains("\u{1}never"))
            .count()
    });
    let ms = reviewed.as_secs_f64() * 1e3;
    println!(
        "review of a {FILES}-file change ({lines} added lines, {bytes} bytes), median of {ROUNDS}:"
    );
    println!(
        "  review:   {ms:8.2} ms  ({findings} findings)   target < 100 ms: {}",
        if ms < 100.0 { "met" } else { "MISSED" }
    );
    println!(
        "  baseline: {:8.2} ms  (one contains() per line, {hits} hits)",
        scanned.as_secs_f64() * 1e3
    );
    println!(
        "  ratio review / baseline: {:.1}x",
        reviewed.as_secs_f64() / scanned.as_secs_f64().max(1e-9)
    );
}
