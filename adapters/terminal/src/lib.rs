//! Commands run for an agent: the client side of ACP's `terminal/*`, generic (nothing here
//! knows the protocol). Each command runs through the [`forge_ports::ProcessRunner`] port in
//! its own process group, in a directory inside the workspace, its output capped to the
//! newest bytes; a kill or release walks the run's kill ladder, and the run's end walks it on
//! every command still there, so nothing an agent started outlives its run.

pub mod output;
pub mod record;
pub mod terminals;

pub use output::CappedOutput;
pub use terminals::{Command, DEFAULT_OUTPUT_LIMIT, Exit, Snapshot, Terminals};
