//! `completions SHELL`.

use clap::CommandFactory;

use crate::args::Cli;
use crate::exit::Failure;

pub fn run(shell: clap_complete::Shell) -> Result<u8, Failure> {
    let mut command = Cli::command();
    clap_complete::generate(
        shell,
        &mut command,
        "forge-code-agent",
        &mut std::io::stdout(),
    );
    Ok(0)
}
