//! `cargo xtask <task>`: project automation, one module per task.
//!
//! - `ci`: format check, clippy with warnings denied, every test;
//! - `e2e`: forge through the real pinned CLIs against the fake model, in groups (`--list`);
//! - `bench`: the workspace benches and time-to-first-event through forge vs the raw CLI;
//! - `man`: the man pages of `forge-code-agent` into `target/man/`;
//! - `new-provider`: a new adapter crate, wired into the workspace and the registry.

mod bench;
mod bench_acp;
mod bench_board;
mod bench_context;
mod bench_memory;
mod bench_queue;
mod bench_queue_phases;
mod bench_sandbox;
mod bench_serve;
mod bench_warm;
mod ci;
mod e2e;
mod man;
mod new_provider;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    about = "Project automation for forge-code-agent"
)]
struct Xtask {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// cargo fmt --check, cargo clippy -D warnings, cargo test (the whole workspace), then
    /// the real-CLI end-to-end suite
    Ci,
    /// forge through the real pinned claude, codex and gemini against the fake model,
    /// offline, group by group (`--list` shows the groups and their scenarios)
    ///
    /// Examples: `cargo xtask e2e -s shell_fail -p codex` (one scenario, one CLI),
    /// `cargo xtask e2e --group task -p claude`, `cargo xtask e2e -s auto` (every loop case).
    E2e(e2e::E2eArgs),
    /// `cargo bench --workspace`, then time-to-first-event through forge vs the raw CLI
    Bench(bench::BenchArgs),
    /// Generate target/man/forge-code-agent.1 (and one page per subcommand)
    Man,
    /// Create adapters/NAME (a Provider and Decoder skeleton, a fixture, a passing decode
    /// snapshot test) and wire it into the workspace and cli/src/compose.rs
    NewProvider(new_provider::NewProviderArgs),
}

fn main() -> ExitCode {
    let xtask = Xtask::parse();
    let outcome = match xtask.task {
        Task::Ci => ci::run(),
        Task::E2e(args) => e2e::run(&args),
        Task::Bench(args) => bench::run(&args),
        Task::Man => man::run(),
        Task::NewProvider(args) => new_provider::run(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln_error(&e);
            ExitCode::FAILURE
        }
    }
}

fn eprintln_error(e: &anyhow::Error) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "xtask: {e:#}");
}

/// The workspace root (xtask lives one level below it).
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}
