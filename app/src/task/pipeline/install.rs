//! Stage `install`: the plan's install command, once, before anything else runs in the
//! work tree. A failed install ends the task (`error`), its report kept as the baseline.

use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::task::StopReason;

use super::super::request::Stage;
use super::super::validate::StepRunner;
use super::task::{Ending, Reporter, Stopped, Task};

/// Runs the install step when the plan has one.
///
/// # Errors
/// A [`Stopped`] when the step could not run, was cancelled or failed.
pub(super) async fn install(
    task: &Task<'_>,
    runner: &StepRunner,
    log_dir: &Path,
    report: &mut Reporter,
) -> Result<(), Stopped> {
    let Some(install) = task.plan.install() else {
        return Ok(());
    };
    report.stage(Stage::Context, 0.0, "install");
    let done = runner
        .run(
            &task.worktree,
            &[install],
            Some(log_dir),
            "install",
            &task.cancel,
        )
        .await?;
    if done.passed {
        return Ok(());
    }
    let mut ending = Ending::new(StopReason::Error);
    ending.baseline = Some(done);
    Err(Stopped {
        stop: StopReason::Error,
        error: ForgeError::io("install step", "the install command failed (see baseline)"),
        partial: Some(ending),
    })
}
