//! `auto`: the autonomous planner → executor loop (`auto --config auto.yaml`), and
//! `auto status` / `auto report` to look at a loop's saved state and report.

mod config;
mod health;
mod progress;
mod run;
mod show;

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::args::PermissionArg;
use crate::exit::Failure;

pub(crate) const AUTO_EXIT_CODES: &str = "\
Exit codes:
  0  completed (the planner said the goal is done)
  1  too_many_errors, or the provider is not usable (health check)
  2  usage or configuration error
  3  stopped before the goal was done: max_iterations, timeout, cost_ceiling, emergency_stop";

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, after_help = AUTO_EXIT_CODES)]
pub struct AutoArgs {
    #[command(subcommand)]
    pub command: Option<AutoCommand>,
    /// The loop's configuration (YAML: task, safety, provider, persona, research, executor)
    #[arg(long, value_name = "FILE", default_value = "auto.yaml")]
    pub config: PathBuf,
    /// The workspace the loop works in; its state lives in .forgecode/auto/
    #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
    pub workdir: PathBuf,
    /// Continue the loop saved in the workdir from its last saved step
    #[arg(long)]
    pub resume: bool,
    /// Print the final report as JSON
    #[arg(long)]
    pub json: bool,
    /// Permission mode of the loop's runs (planner, researcher, executor)
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<PermissionArg>,
}

#[derive(Debug, Subcommand)]
pub enum AutoCommand {
    /// Where the saved loop is: iteration, step in progress, cost, stop reason
    Status(ShowArgs),
    /// The loop's report (report.md, or report.json with --json)
    Report(ShowArgs),
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The workspace of the loop
    #[arg(long, short = 'C', value_name = "DIR", default_value = ".")]
    pub workdir: PathBuf,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

pub async fn run(args: AutoArgs) -> Result<u8, Failure> {
    match args.command {
        Some(AutoCommand::Status(show)) => show::status(&show),
        Some(AutoCommand::Report(show)) => show::report(&show),
        None => run::run(args).await,
    }
}
