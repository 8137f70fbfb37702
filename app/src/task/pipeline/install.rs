//! Stage `install`: the plan's install command, once, before anything else runs in the
//! work tree. A ready node cache stands in for it (`node_modules` linked, the step recorded
//! as not run); a new Python cache is created first. A failed install ends the task
//! (`error`), its report kept as the baseline.

use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::task::{StopReason, ValidationReport};

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
    let installs: Vec<_> = match &task.warm {
        Some(warm) => warm.install_steps(task.plan.install()),
        None => task.plan.install().cloned().into_iter().collect(),
    };
    let skipped = task
        .warm
        .as_ref()
        .and_then(|w| w.skipped_install(task.plan.install()));
    if installs.is_empty() && skipped.is_none() {
        return Ok(());
    }
    report.stage(Stage::Context, 0.0, "install");
    let refs: Vec<_> = installs.iter().collect();
    let mut done = runner
        .run(
            &task.worktree,
            &refs,
            Some(log_dir),
            "install",
            &task.cancel,
        )
        .await?;
    if let Some(step) = skipped {
        done = ValidationReport::from_steps(std::iter::once(step).chain(done.steps).collect());
    }
    if done.passed {
        if let Some(warm) = &task.warm {
            warm.after_install().await?;
        }
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
