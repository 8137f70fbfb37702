//! The [`forge_ports::Vcs`] port over the `git` CLI.
//!
//! [`GitCli`] never spawns anything itself: it hands an [`forge_ports::Invocation`] to the
//! [`forge_ports::ProcessRunner`] it was built with, so process hygiene (process group,
//! timeout, environment) stays in one crate and unit tests need no git at all. Besides the
//! repository check it manages task work trees (`worktree`), reports the change a run made
//! (`changes`), diffs two commits for a review (`range`), resolves revisions (`refs`) and keeps a cache of remote repositories
//! (`remote`).

mod changes;
mod deliver;
mod git_cli;
mod range;
mod refs;
mod remote;
mod worktree;

pub use git_cli::GitCli;
pub use remote::cache_name;
