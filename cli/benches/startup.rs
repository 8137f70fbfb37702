//! Start-up time of `forge-code-agent --version` and `--help` against `/bin/true` (the cost
//! of any fork+exec), measured in the same run. Target: under 20 ms each.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark reports by printing and fails by panicking"
)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RUNS: u32 = 50;

fn median_ms(program: &str, args: &[&str]) -> f64 {
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            let status = Command::new(program)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success(), "{program} {args:?} failed");
            started.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn main() {
    let forge = env!("CARGO_BIN_EXE_forge-code-agent");
    let baseline = median_ms("/bin/true", &[]);
    println!("startup, median of {RUNS} runs");
    println!("  /bin/true                     {baseline:7.2} ms");
    for args in [&["--version"][..], &["--help"][..], &["run", "--help"][..]] {
        let ms = median_ms(forge, args);
        println!(
            "  forge-code-agent {:<12} {ms:7.2} ms  ({:.1}x /bin/true, target < 20 ms: {})",
            args.join(" "),
            ms / baseline,
            if ms < 20.0 { "ok" } else { "MISSED" }
        );
    }
}
