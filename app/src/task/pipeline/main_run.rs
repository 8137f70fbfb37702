//! Stages `main run` and `changes`: the agent works on the task; then what it changed.
//! A run that must stop the task (cancel, timeout, a limit) or that changed nothing ends
//! the task here.

use forge_domain::task::{CycleKind, StopReason};
use forge_domain::{ExecutionStatus, SessionId};

use super::super::request::Stage;
use super::changes::changed_files;
use super::task::{Ending, Reporter, Stopped, Task};

/// How the main run left the task.
pub(super) enum MainRun {
    /// The task is over; the ending says why.
    Ended,
    /// Files changed: validation comes next, resuming `session` where the CLI can.
    Changed { session: Option<SessionId> },
}

/// Runs the agent on `prompt`, then reads the change into `ending`.
///
/// # Errors
/// A [`Stopped`] when the changed files cannot be read.
pub(super) async fn main_run(
    task: &mut Task<'_>,
    prompt: String,
    model: Option<&str>,
    instruction_file: &str,
    ending: &mut Ending,
    report: &mut Reporter,
) -> Result<MainRun, Stopped> {
    task.main_prompt = Some(prompt.clone());
    // A follow-up's main run resumes its parent's session (where the CLI can).
    let resume = task.req.run_template.resume_session_id.clone();
    let run = task
        .agent_run(CycleKind::Main, prompt, resume, model, report)
        .await;
    let main_failed = run.result.status == ExecutionStatus::Error;
    ending.summary = Some(run.result.content.clone()).filter(|s| !s.is_empty());
    let run_error = run.result.errors.first().map(ToString::to_string);
    let stop = run.stop;
    let session = run.cycle.session_id.clone();
    task.cycles.push(run.cycle);
    if let Some(stop) = stop {
        ending.stop = stop;
        ending.changed = changed_files(task, instruction_file)
            .await
            .unwrap_or_default();
        return Ok(MainRun::Ended);
    }

    report.stage(Stage::Changes, task.cost(), "");
    ending.changed = changed_files(task, instruction_file).await?;
    if ending.changed.is_empty() {
        ending.stop = if main_failed {
            StopReason::Error
        } else {
            StopReason::NoChanges
        };
        ending.error = run_error;
        return Ok(MainRun::Ended);
    }
    Ok(MainRun::Changed { session })
}
