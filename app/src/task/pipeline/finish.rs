//! Stages `cleanup`, `risk` and `outcome`, run in every outcome: the instruction file goes
//! back first; then the risk score, the [`TaskOutcome`] and the artifacts `review.json`,
//! `manifest.json` and `report.json`.

use forge_domain::task::{ChangedFile, StopReason, TaskId, TaskOutcome, discard_command, totals};
use serde::Serialize;

use super::super::guard_file::{self, Guard};
use super::super::request::Stage;
use super::super::rules;
use super::task::{Classified, Ending, Reporter, Task};

/// `manifest.json`: what the change touched, and where everything is.
#[derive(Debug, Serialize)]
struct Manifest<'a> {
    task_id: &'a TaskId,
    branch: &'a str,
    worktree: String,
    base: &'a str,
    files: &'a [forge_domain::task::FileChange],
    runs: Vec<String>,
}

/// Puts the instruction file back; a failure to do so ends the task in `error`.
pub(super) async fn cleanup(
    task: &Task<'_>,
    guard: Option<&Guard>,
    ending: &mut Ending,
    report: &mut Reporter,
) {
    report.stage(Stage::Cleanup, task.cost(), "");
    if let Some(guard) = guard {
        if let Err(e) = guard_file::restore(task.files(), guard).await {
            ending.error.get_or_insert_with(|| e.to_string());
            ending.stop = StopReason::Error;
        }
    }
}

/// Scores the risk, builds the outcome and writes the closing artifacts (best effort:
/// the outcome is returned even when they cannot be written).
pub(super) async fn finish(
    task: &Task<'_>,
    class: Classified,
    ending: Ending,
    report: &mut Reporter,
) -> TaskOutcome {
    report.stage(Stage::Risk, task.cost(), "");
    let outcome = outcome(task, class, ending);
    let files = task.files();
    let redactor = task.redactor();
    let _ = task
        .dir
        .write_json(files, redactor, "review.json", &outcome.review)
        .await;
    let manifest = Manifest {
        task_id: &task.task_id,
        branch: &task.branch,
        worktree: task.worktree.display().to_string(),
        base: &task.base,
        files: &outcome.files,
        runs: outcome
            .cycles
            .iter()
            .filter_map(|c| c.run_id.as_ref())
            .map(|r| {
                task.worktree
                    .join(".forgecode/runs")
                    .join(r.as_str())
                    .display()
                    .to_string()
            })
            .collect(),
    };
    let _ = task
        .dir
        .write_json(files, redactor, "manifest.json", &manifest)
        .await;
    let _ = task
        .dir
        .write_json(files, redactor, "report.json", &outcome)
        .await;
    report.stage(Stage::Done, outcome.cost_usd, outcome.stop_reason.as_str());
    outcome
}

fn outcome(task: &Task<'_>, class: Classified, ending: Ending) -> TaskOutcome {
    let (cost_usd, usage) = totals(&task.cycles);
    let files: Vec<_> = ending
        .changed
        .iter()
        .map(ChangedFile::to_file_change)
        .collect();
    let last_validation = task.cycles.iter().rev().find_map(|c| c.validation.as_ref());
    let risk = rules::risk(
        &ending.review,
        &files,
        last_validation,
        ending.baseline.as_ref(),
    );
    let tests = last_validation
        .map(|v| v.compare(ending.baseline.as_ref()))
        .unwrap_or_default();
    let worktree = task.worktree.display().to_string();
    let sandbox_denied = sandbox_denied(&task.cycles, ending.baseline.as_ref());
    TaskOutcome {
        task_id: task.task_id.clone(),
        status: ending.stop.status(),
        stop_reason: ending.stop,
        provider: task.req.provider.clone(),
        task: task.req.spec.task.clone(),
        task_type: class.task_type,
        model: class.model,
        branch: task.branch.clone(),
        rollback: discard_command(&worktree, &task.branch),
        worktree,
        cycles: task.cycles.clone(),
        baseline: ending.baseline,
        tests,
        review: ending.review,
        risk,
        files,
        cost_usd,
        usage,
        duration_ms: task.elapsed(),
        summary: ending.summary,
        error: ending.error,
        delivery: None,
        context_files: ending.context_files,
        sandbox: task.pipeline.sandbox(),
        pull_request: None,
        session_travel: None,
        sandbox_denied,
    }
}

/// Everything the sandbox refused over the task, in order: the baseline's steps, then per
/// cycle the agent's run and its validation's steps.
fn sandbox_denied(
    cycles: &[forge_domain::task::Cycle],
    baseline: Option<&forge_domain::task::ValidationReport>,
) -> Vec<forge_domain::sandbox::SandboxDenial> {
    let steps = |v: Option<&forge_domain::task::ValidationReport>| {
        v.into_iter()
            .flat_map(|v| v.steps.iter())
            .flat_map(|s| s.sandbox_denied.iter().cloned())
            .collect::<Vec<_>>()
    };
    let mut out = steps(baseline);
    for cycle in cycles {
        out.extend(cycle.sandbox_denied.iter().cloned());
        out.extend(steps(cycle.validation.as_ref()));
    }
    out
}
