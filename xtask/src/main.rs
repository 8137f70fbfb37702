//! `cargo xtask <task>`: project automation, one module per task.
//!
//! - `ci`: format check, clippy with warnings denied, every test;
//! - `man`: the man pages of `forge-code-agent` into `target/man/`.

mod ci;
mod man;

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
    /// cargo fmt --check, cargo clippy -D warnings, cargo test (the whole workspace)
    Ci,
    /// Generate target/man/forge-code-agent.1 (and one page per subcommand)
    Man,
}

fn main() -> ExitCode {
    let xtask = Xtask::parse();
    let outcome = match xtask.task {
        Task::Ci => ci::run(),
        Task::Man => man::run(),
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
