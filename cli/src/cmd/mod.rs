//! One module per subcommand; `dispatch` picks it and, for those that need one, starts the
//! async runtime (after argument parsing, so `--help` and `--version` stay instant).

pub(crate) mod approvals;
pub(crate) mod auto;
mod completions;
mod config_show;
pub(crate) mod delivery;
pub(crate) mod demo;
pub(crate) mod doctor;
mod events;
pub(crate) mod fake_model;
pub(crate) mod forge;
pub(crate) mod permissions;
pub(crate) mod pull_request;
pub(crate) mod queue;
pub(crate) mod review;
mod run;
mod run_prompt;
mod runs;
mod sandbox_bridge;
pub(crate) mod serve;
pub(crate) mod task;
pub(crate) mod time;

use crate::args::{Cli, Command, ConfigCommand};
use crate::exit::Failure;

/// Runs the parsed command; returns the exit code.
///
/// # Errors
/// A [`Failure`] when the command could not do its job (the caller prints it).
pub fn dispatch(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::Completions { shell } => completions::run(shell),
        Command::Config(ConfigCommand::Show { config, json }) => config_show::run(&config, json),
        // Before tracing and forge's runtime: the bridge runs its own, inside the sandbox.
        Command::SandboxBridge(args) => Ok(sandbox_bridge::run(&args)),
        command => {
            init_tracing();
            // One thread: children are spawned from it, so the Linux parent-death signal
            // (tied to the spawning thread) lasts as long as forge does.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(dispatch_async(command))
        }
    }
}

async fn dispatch_async(command: Command) -> Result<u8, Failure> {
    match command {
        Command::Run(args) => run::run(args, false).await,
        Command::Stream(args) => run::run(args, true).await,
        Command::Doctor(args) => doctor::run(args).await,
        Command::Runs(command) => runs::run(command).await,
        Command::Events(args) => events::run(&args),
        Command::Demo(args) => demo::run(args).await,
        Command::Auto(args) => auto::run(args).await,
        Command::FakeModel(command) => fake_model::run(command).await,
        Command::Task(command) => task::run(command).await,
        Command::Approvals(command) => approvals::run(command).await,
        Command::Permissions(command) => permissions::run(command).await,
        Command::Review(args) => review::run(*args).await,
        Command::Serve(args) => serve::run(args).await,
        Command::Worker(args) => queue::worker::run(args).await,
        Command::Forge(command) => forge::poll::run(command).await,
        Command::Completions { .. } | Command::Config(_) | Command::SandboxBridge(_) => Ok(0),
    }
}

/// Diagnostics go to stderr, filtered by `FORGE_LOG` (RUST_LOG syntax; default `warn`).
fn init_tracing() {
    let filter = std::env::var("FORGE_LOG").unwrap_or_else(|_| "warn".into());
    if let Err(e) = forge_adapter_telemetry::init_tracing(false, &filter) {
        tracing::warn!("{e}");
    }
}
