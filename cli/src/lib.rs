//! forge-cli: the `forge-code-agent` binary and the composition root.
//!
//! This is the only crate that names concrete adapters. Library users who want forge with
//! the real CLIs and the real runtime call [`registry`], [`runtime`] or [`agent_builder`].
//! Swapping providers needs no code change: `forge.toml`, `FORGE_*` and `CLAUDE_CLI_*`
//! decide the provider, binary, model and limits (`cli/examples/swap_provider.rs` is this
//! example as a program: `FORGE_PROVIDER=gemini cargo run -p forge-cli --example
//! swap_provider -- "Fix the failing test"`).
//!
//! ```no_run
//! use forge_app::{CodeAgent, from_config::apply_request_defaults};
//!
//! # async fn swap_provider() -> anyhow::Result<()> {
//! let config = forge_cli::load_config(&forge_cli::ConfigFlags::default())?;
//! let agent = CodeAgent::from_config(&config, forge_cli::registry(), forge_cli::runtime())?;
//! let mut request = agent.request("Fix the failing test");
//! apply_request_defaults(&config, &mut request);
//! let result = agent.run(request).await;
//! println!("{:?}: {}", result.status, result.content);
//! # Ok(())
//! # }
//! ```
//!
//! In code instead of configuration:
//!
//! ```no_run
//! # fn build() -> anyhow::Result<()> {
//! let agent = forge_cli::agent_builder()
//!     .provider("codex")
//!     .workdir(".")
//!     .timeout(std::time::Duration::from_secs(600))
//!     .build()?;
//! # let _ = agent;
//! # Ok(())
//! # }
//! ```

mod args;
mod cmd;
mod compose;
mod config_load;
mod egress;
mod exit;
mod output;
mod permissions;
mod prompt;
mod sandbox;
mod signals;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

pub use args::{Cli, ConfigFlags};
pub use compose::{agent_builder, environment_redactor, event_sink, registry, runtime, tool_host};
pub use config_load::load_config;
pub use exit::{Failure, exit_code_of};
pub use forge_adapter_git::GitCli;
/// The pinned CLIs and their offline settings (`demo`, the e2e suite), re-exported so the
/// paths `forge_cli::offline` and `forge_cli::npm_install` stay.
pub use forge_adapter_offline::{self as offline, npm_install};

/// The clap command (for man pages and completions).
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses the command line, runs the command and returns the process exit code.
pub fn main() -> ExitCode {
    // Before any thread starts: the local offset can only be read while single-threaded.
    cmd::time::detect_local_offset();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" that exit 0; usage errors exit 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    match cmd::dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(failure) => {
            let _ = writeln!(std::io::stderr(), "error: {failure}");
            ExitCode::from(failure.code())
        }
    }
}
