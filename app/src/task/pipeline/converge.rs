//! Stages `validation`, `correction` and `review`, as one loop: validate the change; when
//! it is to blame for a failure, or the review finds something critical, run a correction
//! (resuming the same session where the CLI can) and validate again, until the guardrails
//! ([`rules::next_step`]) say done or stop.

use forge_domain::SessionId;
use forge_domain::task::repomap::RepoMap;
use forge_domain::task::{CycleKind, ReviewReport, ValidationReport};

use super::super::context;
use super::super::request::Stage;
use super::super::rules::{self, LoopState, Next};
use super::changes::changed_files;
use super::task::{Checks, Ending, Reporter, Stopped, Task};

/// What the loop needs from the stages before it.
pub(super) struct Converge<'a> {
    pub checks: &'a Checks,
    pub model: Option<&'a str>,
    pub instruction_file: &'a str,
    /// The session corrections resume (the latest run's).
    pub session: Option<SessionId>,
}

/// Validates, reviews and corrects until the loop ends; gives the ending.
///
/// # Errors
/// A [`Stopped`] when a validation step cannot run, is cancelled, or git fails.
pub(super) async fn converge(
    task: &mut Task<'_>,
    inputs: Converge<'_>,
    mut ending: Ending,
    report: &mut Reporter,
) -> Result<Ending, Stopped> {
    let Converge {
        checks,
        model,
        instruction_file,
        mut session,
    } = inputs;
    let mut review_cycles = 0;
    loop {
        report.stage(
            Stage::Validation,
            task.cost(),
            &format!("cycle {}", task.cycles.len()),
        );
        let label = format!("{}", task.cycles.len());
        let validation = checks.run(&task.worktree, &label, &task.cancel).await?;
        // A step that failed on the untouched tree too is recorded, never blamed.
        let passed = !rules::blamed(&validation, ending.baseline.as_ref());
        if let Some(last) = task.cycles.last_mut() {
            last.validation = Some(validation.clone());
        }
        let mut critical = false;
        if passed {
            report.stage(Stage::Review, task.cost(), "");
            ending.review = review(&ending.changed);
            critical = ending.review.has_critical();
        }
        let state = LoopState {
            cost_usd: task.cost(),
            elapsed_ms: task.elapsed(),
            cycles: u32::try_from(task.cycles.len()).unwrap_or(u32::MAX),
            review_cycles,
            files_changed: ending.changed.len(),
            validation_passed: passed,
            validation_steps: validation.steps.len(),
            critical_findings: critical,
            cancelled: task.cancel.is_cancelled(),
        };
        let (kind, prompt) = match rules::next_step(&state, &task.req.spec.limits) {
            Next::Done(stop) | Next::Stop(stop) => {
                ending.stop = stop;
                return Ok(ending);
            }
            Next::FixValidation => {
                report.stage(Stage::Correction, task.cost(), "");
                let map = failure_map(task, &validation, ending.baseline.as_ref()).await;
                (
                    CycleKind::ValidationFix,
                    rules::fix_validation_prompt(
                        &validation,
                        ending.baseline.as_ref(),
                        map.as_ref().map(|m| m.text.as_str()),
                    ),
                )
            }
            Next::FixReview => {
                review_cycles += 1;
                report.stage(Stage::ReviewFix, task.cost(), "");
                let critical: Vec<_> = ending.review.critical().collect();
                (CycleKind::ReviewFix, rules::review_fix_prompt(&critical))
            }
        };
        let run = task
            .agent_run(kind, prompt, session.clone(), model, report)
            .await;
        if run.cycle.session_id.is_some() {
            session = run.cycle.session_id.clone();
        }
        // The latest run's words describe the change as it now is (a commit's summary).
        if !run.result.content.is_empty() {
            ending.summary = Some(run.result.content.clone());
        }
        let stop = run.stop;
        task.cycles.push(run.cycle);
        ending.changed = changed_files(task, instruction_file).await?;
        if let Some(stop) = stop {
            ending.stop = stop;
            return Ok(ending);
        }
    }
}

/// The map ranked by what the failure the change is to blame for says (files, identifiers),
/// for the correction prompt; `None` when it names nothing of the repository.
async fn failure_map(
    task: &Task<'_>,
    validation: &ValidationReport,
    baseline: Option<&ValidationReport>,
) -> Option<RepoMap> {
    let failure = forge_domain::task::failure_text(validation, baseline);
    let repo = std::path::Path::new(&task.req.repo);
    context::failure_map(
        task.pipeline.ports.mapper.as_ref(),
        &task.worktree,
        repo,
        &failure,
    )
    .await
}

/// The heuristic review of the change (forge's own, no model).
fn review(changed: &[forge_domain::task::ChangedFile]) -> ReviewReport {
    rules::review(changed)
}
