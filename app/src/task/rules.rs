//! The one place the pipeline asks the domain's task rules (`forge_domain::task`):
//! classification, model choice, the instruction file and prompt texts, the review, the
//! risk score and the correction loop's decision. Keeping the calls here lets the stages
//! read as plain steps, and shows in one file what the app adds (none of the rules).

use forge_domain::ProviderId;
use forge_domain::task::{
    ChangedFile, FileChange, Finding, OutputBounds, ReviewLimits, ReviewReport, RiskInputs,
    RiskScore, StepName, TaskSpec, TaskType, ValidationReport, instructions,
};

pub use forge_domain::task::{LoopState, Next, choose_model, classify, next_step};

/// The instruction file the provider's CLI reads from its working directory.
pub fn instruction_file_name(provider: &ProviderId) -> &'static str {
    instructions::file_name(provider)
}

/// What the instruction file is written from.
pub struct InstructionInputs<'a> {
    pub task_type: TaskType,
    pub spec: &'a TaskSpec,
    pub file_name: &'a str,
    pub branch: &'a str,
    pub index: Option<&'a str>,
    pub validation: &'a [(StepName, String)],
    pub baseline: Option<&'a ValidationReport>,
}

/// The instruction file's bytes: forge's section wrapped around the repository's own file
/// (kept byte for byte; restored from the saved original, not by unwrapping).
pub fn instruction_file(inputs: &InstructionInputs<'_>, original: Option<&[u8]>) -> Vec<u8> {
    let section = instructions::render(&instructions::InstructionInputs {
        task_type: inputs.task_type,
        file_name: inputs.file_name,
        branch: inputs.branch,
        goal: &inputs.spec.goal,
        research: &inputs.spec.context_files,
        repo_index: inputs.index.filter(|_| inputs.task_type != TaskType::Fix),
        validation: inputs.validation,
        baseline: inputs.baseline,
        extra: inputs.spec.instructions.as_deref(),
    });
    instructions::wrap(&section, original)
}

/// The main run's prompt.
pub fn task_prompt(task_type: TaskType, spec: &TaskSpec, instruction_file: &str) -> String {
    forge_domain::task::task_prompt(spec, task_type, instruction_file)
}

/// The correction prompt after a failed validation: the steps the change is to blame for.
pub fn fix_validation_prompt(
    validation: &ValidationReport,
    baseline: Option<&ValidationReport>,
    map: Option<&str>,
) -> String {
    forge_domain::task::validation_fix_prompt(validation, baseline, OutputBounds::default(), map)
}

/// The correction prompt after a review with CRITICAL findings.
pub fn review_fix_prompt(findings: &[&Finding]) -> String {
    forge_domain::task::review_fix_prompt(findings.iter().copied())
}

/// The heuristic review of a change.
pub fn review(files: &[ChangedFile]) -> ReviewReport {
    forge_domain::task::review(files, &ReviewLimits::default())
}

/// Whether validation failed in a way the change is to blame for (a step that passed, or
/// did not run, on the untouched tree fails now).
pub fn blamed(validation: &ValidationReport, baseline: Option<&ValidationReport>) -> bool {
    validation.regressions(baseline).next().is_some()
}

/// The risk score of the outcome.
pub fn risk(
    review: &ReviewReport,
    files: &[FileChange],
    validation: Option<&ValidationReport>,
    baseline: Option<&ValidationReport>,
) -> RiskScore {
    forge_domain::task::risk_score(&RiskInputs {
        review,
        files,
        validation,
        baseline,
    })
}

/// The repository index summary (≤ `cap` characters) of the walked entries.
pub fn index_summary(entries: &[forge_ports::IndexEntry], cap: usize) -> String {
    let files: Vec<forge_domain::task::IndexEntry> = entries
        .iter()
        .filter(|e| e.kind == forge_ports::EntryKind::File)
        .map(|e| forge_domain::task::IndexEntry {
            path: e.path.clone(),
            size_bytes: e.size,
        })
        .collect();
    forge_domain::task::summarize_index(&files, cap)
}
