//! The instruction file's text: role, the decision protocol of the task type, safety rules,
//! validation (with what already failed before the change), goal, research context, the
//! repository map (not for FIX), code-quality rules and the project's extra instructions.

use std::fmt::Write as _;

use crate::task::kind::TaskType;
use crate::task::prompt::named_step;
use crate::task::spec::{ContextFile, Goal};
use crate::task::validation::{StepName, ValidationReport};

/// Everything the file says; the caller reads files and runs commands, this only writes text.
#[derive(Debug, Clone, Copy)]
pub struct InstructionInputs<'a> {
    pub task_type: TaskType,
    /// `CLAUDE.md`, `AGENTS.md`, `GEMINI.md`: the file names itself so the agent leaves it alone.
    pub file_name: &'a str,
    pub branch: &'a str,
    pub goal: &'a Goal,
    pub research: &'a [ContextFile],
    /// The repository map ranked by the task; left out for FIX tasks, which stay focused.
    pub repo_index: Option<&'a str>,
    /// The validation commands forge runs after the agent.
    pub validation: &'a [(StepName, String)],
    pub baseline: Option<&'a ValidationReport>,
    /// `[task] instructions` from `forge.toml`.
    pub extra: Option<&'a str>,
}

/// The steps the agent follows for each task type.
pub fn protocol(task_type: TaskType) -> &'static [&'static str] {
    match task_type {
        TaskType::Implement => &[
            "Read the repository map below and the code the task touches before writing anything.",
            "Choose the smallest design that delivers the expected output; follow the existing architecture.",
            "Implement it completely (no stubs, no TODOs) and add tests for the new behaviour.",
            "Check that the validation commands below would pass, then stop.",
        ],
        TaskType::Fix => &[
            "Reproduce: read the failing test, error or report and the code it points at.",
            "Find the root cause; do not paper over the symptom.",
            "Make the minimal change that fixes it; leave unrelated code alone.",
            "Add or adjust a test that fails without the fix, then stop.",
        ],
        TaskType::Create => &[
            "Look at how the project lays out similar files and follow its conventions.",
            "Create the new files where the project keeps such files.",
            "Wire them in (module registration, exports, configuration) so they are used.",
            "Add tests for what you created, then stop.",
        ],
        TaskType::Refactor => &[
            "Keep behaviour identical: a refactor changes structure, not results.",
            "Work in small steps; the tests must pass before and after.",
            "Update every call site; leave no dead code behind.",
            "Do not change public interfaces unless the task asks for it, then stop.",
        ],
    }
}

pub const SAFETY_RULES: &[&str] = &[
    "Never create, modify or delete `.env*` files, private keys or credential files.",
    "Never write secrets, tokens or passwords into any file; read them from the environment.",
    "Do not add new dependencies unless the task cannot be done without them.",
    "Do not commit, never force-push and never rewrite git history: forge commits for you.",
    "Stay inside this workspace: read and write only files under it, delete nothing outside it.",
    "Do not turn off TLS verification, make files world-writable or pipe downloads into a shell.",
    "Do not change CI configuration or lockfiles unless the task requires it.",
];

pub const CODE_QUALITY_RULES: &[&str] = &[
    "Follow the conventions of the surrounding code: naming, formatting, error handling.",
    "Small, focused functions with names that explain them; comments say why, not what.",
    "Handle errors explicitly; no silent failures, no panics on bad input.",
    "No dead code, commented-out code or placeholder implementations.",
    "Keep existing tests passing and add tests for new behaviour.",
];

/// The instruction file's text (the section forge wraps around any existing file).
pub fn render(inputs: &InstructionInputs<'_>) -> String {
    let label = inputs.task_type.label();
    let mut out = String::new();
    let _ = writeln!(out, "# Forge task instructions\n");
    let _ = writeln!(out, "## Role\n");
    let _ = writeln!(
        out,
        "You are a senior software engineer completing one {label} task in a forge workspace: a \
         git worktree on branch `{}`. You do the work yourself with your tools, reading and \
         modifying files; forge validates, reviews and commits the result.\n",
        inputs.branch
    );
    let _ = writeln!(out, "## Decision protocol ({label})\n");
    for (i, step) in protocol(inputs.task_type).iter().enumerate() {
        let _ = writeln!(out, "{}. {step}", i + 1);
    }
    let _ = writeln!(out, "\n## Safety rules\n");
    for rule in SAFETY_RULES {
        let _ = writeln!(out, "- {rule}");
    }
    let _ = writeln!(
        out,
        "- Do not edit or delete `{}`: forge wrote it for this task and removes it when the task ends.",
        inputs.file_name
    );
    validation_section(&mut out, inputs);
    goal_section(&mut out, inputs.goal);
    if !inputs.research.is_empty() {
        let _ = writeln!(out, "\n## Research context");
        for note in inputs.research {
            let _ = write!(out, "\n### {}\n\n{}\n", note.name, note.text.trim_end());
        }
    }
    if inputs.task_type != TaskType::Fix
        && let Some(index) = inputs.repo_index.filter(|i| !i.trim().is_empty())
    {
        let _ = writeln!(
            out,
            "\n## Repository map\n\nThe files most likely to matter for this task, ranked by forge \
             from the task's words and the code's definitions and references; a starting point, \
             not a limit.\n\n```text\n{}\n```",
            index.trim_end()
        );
    }
    let _ = writeln!(out, "\n## Code quality\n");
    for rule in CODE_QUALITY_RULES {
        let _ = writeln!(out, "- {rule}");
    }
    if let Some(extra) = inputs.extra.filter(|e| !e.trim().is_empty()) {
        let _ = writeln!(out, "\n## Project instructions\n\n{}", extra.trim_end());
    }
    out
}

fn validation_section(out: &mut String, inputs: &InstructionInputs<'_>) {
    if inputs.validation.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Validation\n");
    let _ = writeln!(
        out,
        "forge runs these commands after you finish; they must pass:\n"
    );
    for (name, command) in inputs.validation {
        let _ = writeln!(out, "- {name}: `{command}`");
    }
    let already: Vec<String> = inputs
        .baseline
        .map(|b| b.failing().map(named_step).collect())
        .unwrap_or_default();
    if !already.is_empty() {
        let _ = writeln!(
            out,
            "\nAlready failing before your change (baseline): {}. You are not blamed for \
             these; fix them only if the task is about them, and do not mistake them for \
             failures of your own: forge compares test by test.",
            already.join(", ")
        );
    }
}

fn goal_section(out: &mut String, goal: &Goal) {
    if goal.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Goal\n");
    if let Some(title) = goal.title.as_deref().filter(|t| !t.is_empty()) {
        let _ = writeln!(out, "{title}");
    }
    if let Some(description) = goal.description.as_deref().filter(|d| !d.is_empty()) {
        let _ = writeln!(out, "\n{}", description.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::validation::ValidationStep;

    fn baseline() -> ValidationReport {
        ValidationReport::from_steps(vec![ValidationStep {
            name: StepName::Test,
            command: "sh test.sh".into(),
            exit_code: Some(1),
            duration_ms: 5,
            output_tail: "FAIL".into(),
            timed_out: false,
            cache: None,
            failed_tests: Some(crate::task::FailedTests {
                names: vec!["test_app.AppTest.test_legacy".into()],
                count: Some(1),
                itemized: true,
            }),
            sandbox_denied: Vec::new(),
        }])
    }

    fn render_for(task_type: TaskType, file_name: &str) -> String {
        let goal = Goal {
            title: Some("Accounts".into()),
            description: Some("Users sign in with email and password.".into()),
        };
        let research = [ContextFile {
            name: "notes/jwt.md".into(),
            text: "Use HS256 with a 15 minute expiry.\n".into(),
        }];
        let validation = [
            (StepName::Build, "cargo build".to_owned()),
            (StepName::Test, "sh test.sh".to_owned()),
        ];
        let baseline = baseline();
        render(&InstructionInputs {
            task_type,
            file_name,
            branch: "forge/t-1",
            goal: &goal,
            research: &research,
            repo_index: Some("src/ (3 files)\n  lib.rs 1.2 KB rust"),
            validation: &validation,
            baseline: Some(&baseline),
            extra: Some("Use tabs in Makefiles."),
        })
    }

    #[test]
    fn instruction_file_per_type() {
        insta::assert_snapshot!(
            "instructions_implement_claude",
            render_for(TaskType::Implement, "CLAUDE.md")
        );
        insta::assert_snapshot!(
            "instructions_fix_codex",
            render_for(TaskType::Fix, "AGENTS.md")
        );
        insta::assert_snapshot!(
            "instructions_create_gemini",
            render_for(TaskType::Create, "GEMINI.md")
        );
        insta::assert_snapshot!(
            "instructions_refactor_claude",
            render_for(TaskType::Refactor, "CLAUDE.md")
        );
    }

    #[test]
    fn fix_tasks_get_no_repository_index_and_empty_parts_are_left_out() {
        assert!(!render_for(TaskType::Fix, "CLAUDE.md").contains("## Repository map"));
        assert!(render_for(TaskType::Implement, "CLAUDE.md").contains("## Repository map"));
        let minimal = render(&InstructionInputs {
            task_type: TaskType::Implement,
            file_name: "AGENTS.md",
            branch: "forge/t",
            goal: &Goal::default(),
            research: &[],
            repo_index: None,
            validation: &[],
            baseline: None,
            extra: Some("  "),
        });
        for absent in [
            "## Goal",
            "## Research",
            "## Validation",
            "## Repository",
            "## Project",
        ] {
            assert!(!minimal.contains(absent), "{absent}");
        }
        // The safety text never trips forge's own review when the file leaks into a diff.
        let text = render_for(TaskType::Implement, "CLAUDE.md");
        let lines: Vec<&str> = text.lines().collect();
        let file = crate::task::review::tests::file("CLAUDE.md", &lines);
        assert_eq!(
            crate::task::review::tests::rules(&[file]),
            Vec::<String>::new()
        );
    }
}
