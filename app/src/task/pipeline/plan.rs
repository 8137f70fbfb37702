//! Stages `plan` and `prompt`: the main run's prompt, and `plan.json` (what the task will
//! do, with which validation and context) in the task's artifacts.

use forge_domain::ProviderId;
use forge_domain::task::{TaskId, TaskType};
use serde::Serialize;

use super::super::context::ContextPart;
use super::super::request::Stage;
use super::super::rules;
use super::task::{Classified, Reporter, Stopped, Task};

/// What the plan is written from besides the task itself.
pub(super) struct PlanInputs<'a> {
    pub class: &'a Classified,
    pub context: &'a [ContextPart],
    pub instruction_file: &'a str,
}

/// What `plan.json` holds.
#[derive(Debug, Serialize)]
struct Plan<'a> {
    task_id: &'a TaskId,
    task: &'a str,
    task_type: TaskType,
    provider: &'a ProviderId,
    model: Option<&'a str>,
    branch: &'a str,
    worktree: String,
    base: &'a str,
    limits: &'a forge_domain::task::TaskLimits,
    validation_source: String,
    validation: Vec<(String, String)>,
    context: &'a [ContextPart],
    instruction_file: String,
    prompt_chars: usize,
}

/// Writes `plan.json` and gives the main run's prompt.
///
/// # Errors
/// A [`Stopped`] when `plan.json` cannot be written.
pub(super) async fn write(
    task: &Task<'_>,
    inputs: &PlanInputs<'_>,
    report: &mut Reporter,
) -> Result<String, Stopped> {
    let task_type = inputs.class.task_type;
    let prompt = rules::task_prompt(task_type, &task.req.spec, inputs.instruction_file);
    report.stage(Stage::Plan, 0.0, "");
    let plan = Plan {
        task_id: &task.task_id,
        task: &task.req.spec.task,
        task_type,
        provider: &task.req.provider,
        model: inputs.class.model(),
        branch: &task.branch,
        worktree: task.worktree.display().to_string(),
        base: &task.base,
        limits: &task.req.spec.limits,
        validation_source: task.plan.source.describe(),
        validation: task
            .plan
            .steps
            .iter()
            .map(|s| (s.name.to_string(), s.command.clone()))
            .collect(),
        context: inputs.context,
        instruction_file: inputs.instruction_file.to_owned(),
        prompt_chars: prompt.len(),
    };
    task.dir
        .write_json(task.files(), task.redactor(), "plan.json", &plan)
        .await?;
    Ok(prompt)
}
