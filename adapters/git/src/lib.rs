//! The [`forge_ports::Vcs`] port over the `git` CLI.
//!
//! [`GitCli`] never spawns anything itself: it hands an [`forge_ports::Invocation`] to the
//! [`forge_ports::ProcessRunner`] it was built with, so process hygiene (process group,
//! timeout, environment) stays in one crate and tests need no git at all.

mod git_cli;

pub use git_cli::GitCli;
