//! Stage `instructions`: the guardrail instruction file (`CLAUDE.md`, `AGENTS.md`,
//! `GEMINI.md`) written into the work tree around the repository's own, a copy kept in
//! the task's artifacts, and the [`Guard`] that puts the original back at cleanup.

use forge_domain::task::TaskType;

use super::super::guard_file::{self, Guard};
use super::super::request::Stage;
use super::super::rules::{self, InstructionInputs};
use super::gather::Gathered;
use super::task::{Reporter, Stopped, Task};

/// The instruction file as written.
pub(super) struct Written {
    /// Its name in the work tree (also what the changed files leave out).
    pub file_name: &'static str,
    pub guard: Guard,
}

/// Writes the instruction file.
///
/// # Errors
/// A [`Stopped`] when it cannot be written.
pub(super) async fn write(
    task: &Task<'_>,
    task_type: TaskType,
    context: &Gathered,
    report: &mut Reporter,
) -> Result<Written, Stopped> {
    report.stage(Stage::Instructions, 0.0, "");
    let name = rules::instruction_file_name(&task.req.provider);
    let path = task.worktree.join(name);
    let commands: Vec<_> = task
        .plan
        .steps
        .iter()
        .map(|s| (s.name, s.command.clone()))
        .collect();
    let inputs = InstructionInputs {
        task_type,
        spec: &task.req.spec,
        file_name: name,
        branch: &task.branch,
        index: context.map.as_ref().map(|m| m.text.as_str()),
        validation: &commands,
        baseline: Some(&context.baseline),
    };
    let guard = guard_file::install(task.files(), &task.dir.dir, &path, |original| {
        rules::instruction_file(&inputs, original)
    })
    .await?;
    let written = task
        .files()
        .read(&path)
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    let _ = task.dir.write(task.files(), name, &written).await;
    Ok(Written {
        file_name: name,
        guard,
    })
}
