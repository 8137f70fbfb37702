//! The one place the pipeline asks the domain's task rules: classification, model choice,
//! the instruction file and prompt texts, the review, the risk score and the correction
//! loop's decision. Keeping the calls here lets the stages read as plain steps.

use forge_domain::task::{
    ChangedFile, Finding, ReviewReport, RiskLevel, RiskScore, Severity, StopReason, TaskLimits,
    TaskSpec, TaskType, ValidationReport,
};

pub use forge_domain::task::classify::{choose_model, classify};

/// The instruction file each CLI reads from its working directory.
pub fn instruction_file_name(provider: &str) -> &'static str {
    match provider {
        "codex" => "AGENTS.md",
        "gemini" => "GEMINI.md",
        _ => "CLAUDE.md",
    }
}

const BEGIN: &str =
    "<!-- forge-code-agent: task instructions (generated, removed after the task) -->";
const END: &str = "<!-- forge-code-agent: end of task instructions -->";

/// What the instruction file says: role, protocol, safety and quality rules, context.
pub struct InstructionInputs<'a> {
    pub task_type: TaskType,
    pub spec: &'a TaskSpec,
    pub index: Option<&'a str>,
    pub baseline: Option<&'a ValidationReport>,
}

/// The instruction file's text: forge's section, then the repository's own file unchanged.
pub fn instruction_file(inputs: &InstructionInputs<'_>, original: Option<&[u8]>) -> Vec<u8> {
    let mut text = String::new();
    text.push_str(BEGIN);
    text.push_str(
        "\n# Role\nYou are a careful senior engineer completing one task in this repository.\n",
    );
    text.push_str("\n# Decision protocol\n");
    text.push_str(match inputs.task_type {
        TaskType::Fix => "1. Reproduce or locate the failure. 2. Find the root cause. 3. Make the smallest change that fixes it. 4. Run the tests.\n",
        TaskType::Create => "1. Look at how similar files are laid out. 2. Create the new files following the project's conventions. 3. Add tests.\n",
        TaskType::Refactor => "1. Keep behaviour identical. 2. Change structure in small steps. 3. Run the tests after each step.\n",
        TaskType::Implement => "1. Read the relevant code. 2. Plan the change. 3. Implement it with tests. 4. Run the tests.\n",
    });
    text.push_str("\n# Safety rules\n- Never modify `.env*` files, credentials or private keys; never write secrets into files.\n- Do not add dependencies unless the task needs them.\n- Never force push; do not run git commands that rewrite history.\n- Stay inside this workspace.\n");
    text.push_str("\n# Code quality\n- Follow the existing style. Keep functions small. Handle errors. Add or update tests.\n");
    if let Some(baseline) = inputs.baseline.filter(|b| !b.passed) {
        text.push_str("\n# Already failing before this task\n");
        for step in baseline.failing() {
            text.push_str(&format!(
                "- `{}` (`{}`) failed before any change.\n",
                step.name, step.command
            ));
        }
    }
    for file in &inputs.spec.context_files {
        text.push_str(&format!(
            "\n# Research context: {}\n{}\n",
            file.name, file.text
        ));
    }
    if let Some(index) = inputs.index {
        text.push_str(&format!("\n# Repository index\n```\n{index}\n```\n"));
    }
    if let Some(extra) = &inputs.spec.instructions {
        text.push_str(&format!("\n# Project rules\n{extra}\n"));
    }
    text.push_str(END);
    text.push('\n');
    let mut bytes = text.into_bytes();
    if let Some(original) = original {
        bytes.push(b'\n');
        bytes.extend_from_slice(original);
    }
    bytes
}

const MUST_USE_TOOLS: &str = "You MUST use tools to read and modify files. Do not describe the change: make it. If you respond with only text and no tool calls, the task will be marked as FAILED.";

/// The main run's prompt.
pub fn task_prompt(task_type: TaskType, spec: &TaskSpec) -> String {
    let mut prompt = format!("{} task: {}\n", task_type.label(), spec.task);
    if let Some(expected) = &spec.expected {
        prompt.push_str(&format!("\nExpected output: {expected}\n"));
    }
    if !spec.goal.is_empty() {
        prompt.push_str(&format!(
            "\nGoal: {} {}\n",
            spec.goal.title.as_deref().unwrap_or(""),
            spec.goal.description.as_deref().unwrap_or("")
        ));
    }
    prompt.push('\n');
    prompt.push_str(MUST_USE_TOOLS);
    prompt
}

/// The correction prompt after a failed validation, with each failing step's output.
pub fn fix_validation_prompt(report: &ValidationReport) -> String {
    let mut prompt = String::from(
        "FIX VALIDATION ERRORS\n\nThe change does not pass validation yet. Fix the code so these steps pass:\n",
    );
    for step in report.failing() {
        prompt.push_str(&format!(
            "\n## {} (`{}`) exited with {}\n```\n{}\n```\n",
            step.name,
            step.command,
            step.exit_code
                .map_or_else(|| "no code".to_owned(), |c| c.to_string()),
            step.output_tail
        ));
    }
    prompt.push('\n');
    prompt.push_str(MUST_USE_TOOLS);
    prompt
}

/// The correction prompt after a review with CRITICAL findings.
pub fn review_fix_prompt(findings: &[&Finding]) -> String {
    let mut prompt = String::from(
        "FIX REVIEW FINDINGS\n\nThe review found problems that must be fixed before the change can be accepted:\n",
    );
    for f in findings {
        let line = f.line.map(|l| format!(":{l}")).unwrap_or_default();
        prompt.push_str(&format!("- [{}] {}{line}: {}\n", f.rule, f.path, f.message));
    }
    prompt.push('\n');
    prompt.push_str(MUST_USE_TOOLS);
    prompt
}

/// The review of a change.
pub fn review(files: &[ChangedFile]) -> ReviewReport {
    let mut findings = Vec::new();
    for file in files {
        let name = file.path.rsplit('/').next().unwrap_or(&file.path);
        if name.starts_with(".env") && name != ".env.example" {
            findings.push(Finding {
                rule: "sensitive-file".into(),
                severity: Severity::Critical,
                path: file.path.clone(),
                line: None,
                message: "an environment file was changed".into(),
            });
        }
        for line in &file.added_lines {
            if line.text.contains("AKIA")
                || line.text.contains("-----BEGIN") && line.text.contains("PRIVATE KEY")
            {
                findings.push(Finding {
                    rule: "secret".into(),
                    severity: Severity::Critical,
                    path: file.path.clone(),
                    line: Some(line.line),
                    message: "a secret was added".into(),
                });
            }
        }
    }
    ReviewReport { findings }
}

/// The risk score of the outcome.
pub fn risk(
    review: &ReviewReport,
    files: &[ChangedFile],
    validation: Option<&ValidationReport>,
    _baseline: Option<&ValidationReport>,
) -> RiskScore {
    let mut score: u32 = 0;
    let mut reasons = Vec::new();
    let critical = review.count(Severity::Critical);
    if critical > 0 {
        score += 6;
        reasons.push(format!("{critical} critical finding(s)"));
    }
    if validation.is_none_or(|v| !v.passed) {
        score += 3;
        reasons.push("validation did not pass".into());
    }
    let lines: u64 = files.iter().map(|f| f.added + f.removed).sum();
    if lines > 500 {
        score += 2;
        reasons.push(format!("{lines} changed lines"));
    }
    let score = u8::try_from(score.min(10)).unwrap_or(10);
    RiskScore {
        score,
        level: RiskLevel::of(score),
        reasons,
    }
}

/// What the correction loop does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    Done(StopReason),
    FixValidation,
    FixReview,
    Stop(StopReason),
}

/// Where the loop stands after a validation (and, when it passed, a review).
pub struct LoopState {
    pub cost_usd: f64,
    pub elapsed_ms: u64,
    pub cycles: u32,
    pub review_cycles: u32,
    pub validation_passed: bool,
    pub critical_findings: bool,
}

/// The correction loop's decision.
pub fn next_step(state: &LoopState, limits: &TaskLimits) -> Next {
    if state.validation_passed && !state.critical_findings {
        return Next::Done(StopReason::Validated);
    }
    let guard = if state.cost_usd >= limits.max_total_cost_usd {
        Some(StopReason::CostCeiling)
    } else if state.elapsed_ms >= limits.timeout_ms {
        Some(StopReason::Timeout)
    } else {
        None
    };
    if !state.validation_passed {
        if let Some(reason) = guard {
            return Next::Stop(reason);
        }
        if state.cycles >= limits.max_cycles {
            return Next::Stop(StopReason::MaxCycles);
        }
        return Next::FixValidation;
    }
    if guard.is_some() || state.review_cycles >= limits.max_review_cycles {
        return Next::Done(StopReason::ReviewFindings);
    }
    Next::FixReview
}
