//! The prompts of a task's agent runs: the main run's per-type template, the "FIX VALIDATION
//! ERRORS" prompt of a validation-fix run and the review-fix prompt. Failing output is bounded
//! (the tail of each step, a cap on the whole) so a noisy build cannot blow the context.

use std::fmt::Write as _;

use super::finding::Finding;
use super::kind::TaskType;
use super::spec::TaskSpec;
use super::validation::{ValidationReport, ValidationStep, compare_step};

/// The seed's rule: an answer without tool calls is a failed task.
pub const TOOLS_RULE: &str = "You MUST use tools to read and modify files in the workspace. \
Do not only describe the change: make it. If you respond with only text and no tool calls, \
the task will be marked as FAILED.";

const DONE_RULE: &str =
    "When you are done, reply with a short summary of what you changed and why.";

/// How much failing output a fix prompt carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputBounds {
    /// The last this-many bytes of each failing step's output.
    pub per_step: usize,
    /// All steps together.
    pub total: usize,
}

impl Default for OutputBounds {
    fn default() -> Self {
        Self {
            per_step: 4_000,
            total: 12_000,
        }
    }
}

fn intro(task_type: TaskType) -> &'static str {
    match task_type {
        TaskType::Implement => "Implement the following in this repository.",
        TaskType::Fix => "Fix the following problem in this repository.",
        TaskType::Create => "Create the following in this repository.",
        TaskType::Refactor => "Refactor the code as follows, keeping its behaviour identical.",
    }
}

fn default_expected(task_type: TaskType) -> &'static str {
    match task_type {
        TaskType::Implement => {
            "The feature implemented completely, with tests, and the project building and passing its tests."
        }
        TaskType::Fix => {
            "The root cause fixed with a minimal change, a test covering it, and the project's tests passing."
        }
        TaskType::Create => {
            "The new files in place, wired into the project, with tests, and the project building."
        }
        TaskType::Refactor => {
            "The same behaviour with a clearer structure, every call site updated, and the tests passing."
        }
    }
}

/// The main run's prompt.
pub fn task_prompt(spec: &TaskSpec, task_type: TaskType, instruction_file: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {} task\n", task_type.label());
    let _ = writeln!(out, "{}\n", intro(task_type));
    let _ = writeln!(out, "{}\n", spec.task.trim());
    let expected = spec
        .expected
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .unwrap_or(default_expected(task_type));
    let _ = writeln!(out, "## Expected output\n\n{expected}\n");
    let _ = writeln!(out, "## Rules\n");
    let _ = writeln!(
        out,
        "- Follow `{instruction_file}`: its decision protocol, safety rules and validation commands."
    );
    let _ = writeln!(out, "- {TOOLS_RULE}");
    let _ = writeln!(out, "- {DONE_RULE}");
    out
}

/// The validation-fix prompt: the failing steps the change is to blame for, each with its
/// bounded output tail; steps that already failed on the baseline are named, not shown;
/// then `map`, the repository map ranked by the failure
/// ([`super::repomap::failure::failure_map`]), when the failure names the repository's code.
pub fn validation_fix_prompt(
    validation: &ValidationReport,
    baseline: Option<&ValidationReport>,
    bounds: OutputBounds,
    map: Option<&str>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# FIX VALIDATION ERRORS\n");
    let _ = writeln!(
        out,
        "Your change does not pass validation. Fix the code so these steps pass (change a test \
         only when the test itself is wrong):"
    );
    let mut budget = bounds.total;
    for step in validation.regressions(baseline) {
        let tail = tail(&step.output_tail, bounds.per_step.min(budget));
        budget = budget.saturating_sub(tail.len());
        let _ = writeln!(
            out,
            "\n## {}: `{}` — {}\n",
            step.name,
            step.command,
            outcome(step)
        );
        for line in step.unreachable_lines() {
            let _ = writeln!(
                out,
                "forge's sandbox: {line} (the user's setting: no change of yours lifts it)."
            );
        }
        let tests = compare_step(step, baseline.and_then(|b| b.step(step.name)));
        if !tests.newly_failing.is_empty() {
            let _ = writeln!(
                out,
                "Tests your change broke: {}.",
                tests.newly_failing.join(", ")
            );
        }
        if let Some(reason) = &tests.reason {
            let _ = writeln!(out, "Blamed on your change: {reason}.");
        }
        if !tests.already_failing.is_empty() {
            let _ = writeln!(
                out,
                "Already failing before your change (not yours, leave them): {}.",
                tests.already_failing.join(", ")
            );
        }
        let _ = writeln!(out, "```text\n{}\n```", tail.trim_end());
    }
    let inherited: Vec<String> = validation
        .failing()
        .filter(|s| !validation.regressions(baseline).any(|r| r.name == s.name))
        .map(named_step)
        .collect();
    if !inherited.is_empty() {
        let _ = writeln!(
            out,
            "\nAlready failing before your change (baseline), not blamed on you: {}.",
            inherited.join(", ")
        );
    }
    if let Some(map) = map.filter(|m| !m.trim().is_empty()) {
        let _ = writeln!(
            out,
            "\n## Where to look\n\nThe repository's files this failure points at, most relevant \
             first:\n```text\n{}\n```",
            map.trim_end()
        );
    }
    let _ = writeln!(out, "\n{TOOLS_RULE}\n{DONE_RULE}");
    out
}

/// What a failure says, for ranking the map by it: the output of each step the change is
/// to blame for and the tests it named.
pub fn failure_text(validation: &ValidationReport, baseline: Option<&ValidationReport>) -> String {
    let mut out = String::new();
    for step in validation.regressions(baseline) {
        if let Some(t) = &step.failed_tests {
            let _ = writeln!(out, "{}", t.names.join("\n"));
        }
        let _ = writeln!(out, "{}", step.output_tail);
    }
    out
}

/// `test` or `test (tests: a, b)`: a failing step with the tests its output named.
pub fn named_step(step: &ValidationStep) -> String {
    match step.failed_tests.as_ref().filter(|t| !t.names.is_empty()) {
        Some(t) => format!("{} (tests: {})", step.name, t.names.join(", ")),
        None => step.name.as_str().to_owned(),
    }
}

/// The review-fix prompt: the critical findings, each with its place and rule.
pub fn review_fix_prompt<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# FIX REVIEW FINDINGS\n");
    let _ = writeln!(
        out,
        "forge's review of your change found critical problems. Remove each one: take secrets \
         out of the files (read them from the environment instead), restore sensitive files you \
         changed, and remove dangerous commands.\n"
    );
    for f in findings {
        let place = match f.line {
            Some(line) => format!("{}:{line}", f.path),
            None => f.path.clone(),
        };
        let _ = writeln!(
            out,
            "- [{}] {place} ({}): {}",
            f.severity.label(),
            f.rule,
            f.message
        );
    }
    let _ = writeln!(out, "\n{TOOLS_RULE}\n{DONE_RULE}");
    out
}

fn outcome(step: &ValidationStep) -> String {
    match (step.timed_out, step.exit_code) {
        (true, _) => format!("timed out after {} ms", step.duration_ms),
        (false, Some(code)) => format!("exit code {code}"),
        (false, None) => "killed".to_owned(),
    }
}

/// At most the last `max` bytes of `text`, marked when cut: from the first whole line in
/// that window when there is one, else from a character boundary.
pub fn tail(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    if let Some(nl) = text[start..].find('\n')
        && start + nl + 1 < text.len()
    {
        start += nl + 1;
    }
    format!("[… {start} earlier bytes cut]\n{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::finding::Severity;
    use crate::task::validation::StepName;

    fn step(name: StepName, exit_code: Option<i32>, tail: &str) -> ValidationStep {
        ValidationStep {
            name,
            command: format!("make {name}"),
            exit_code,
            duration_ms: 800,
            output_tail: tail.into(),
            timed_out: false,
            cache: None,
            failed_tests: None,
            sandbox_denied: Vec::new(),
        }
    }

    #[test]
    fn task_prompts_per_type() {
        let mut spec = TaskSpec::new("Implement user authentication with JWT tokens");
        spec.expected = Some("A working auth module with login endpoint".into());
        insta::assert_snapshot!(
            "prompt_implement",
            task_prompt(&spec, TaskType::Implement, "CLAUDE.md")
        );
        let spec = TaskSpec::new("Fix the failing JWT test");
        let fix = task_prompt(&spec, TaskType::Fix, "AGENTS.md");
        insta::assert_snapshot!("prompt_fix_default_expected", fix);
        for t in TaskType::ALL {
            let p = task_prompt(&spec, t, "GEMINI.md");
            assert!(p.contains(TOOLS_RULE) && p.contains(t.label()), "{t}");
        }
    }

    #[test]
    fn validation_fix_prompt_is_bounded_and_spares_the_baseline() {
        let noisy = "warning: x\n".repeat(1000) + "error: expected `;` at src/lib.rs:3";
        let validation = ValidationReport::from_steps(vec![
            step(StepName::Build, Some(0), "ok"),
            step(StepName::Lint, Some(2), &noisy),
            step(StepName::Test, Some(1), "FAIL: old flaky test"),
        ]);
        let baseline = ValidationReport::from_steps(vec![step(StepName::Test, Some(1), "FAIL")]);
        let bounds = OutputBounds {
            per_step: 120,
            total: 500,
        };
        let prompt = validation_fix_prompt(&validation, Some(&baseline), bounds, None);
        insta::assert_snapshot!("prompt_fix_validation", prompt);
        assert!(prompt.contains("error: expected `;`"));
        assert!(prompt.len() < 1_200);
        assert!(!prompt.contains("old flaky test"));
    }

    #[test]
    fn validation_fix_prompt_names_the_broken_and_the_inherited_tests() {
        let tests = |exit: i32, names: &[&str]| {
            let mut s = step(StepName::Test, Some(exit), "FAILED (failures=2)");
            s.failed_tests = Some(crate::task::FailedTests {
                names: names.iter().map(|n| (*n).to_owned()).collect(),
                count: Some(names.len() as u64),
                itemized: true,
            });
            s
        };
        let validation =
            ValidationReport::from_steps(vec![tests(1, &["t.test_data", "t.test_legacy"])]);
        let baseline = ValidationReport::from_steps(vec![tests(1, &["t.test_legacy"])]);
        let prompt =
            validation_fix_prompt(&validation, Some(&baseline), OutputBounds::default(), None);
        insta::assert_snapshot!("prompt_fix_validation_tests", prompt);
        assert!(prompt.contains("Tests your change broke: t.test_data."));
        assert!(prompt.contains("not yours, leave them): t.test_legacy."));
    }

    #[test]
    fn the_failure_map_goes_before_the_rules_and_its_text_is_the_blamed_output() {
        let mut failing = step(StepName::Test, Some(1), "panicked at src/config.rs:4:9");
        failing.failed_tests = Some(crate::task::FailedTests {
            names: vec!["config::tests::parses".to_owned()],
            count: Some(1),
            itemized: true,
        });
        let validation = ValidationReport::from_steps(vec![failing]);
        let map =
            "3 files; most relevant to the failure first\nsrc/config.rs\n  4: pub fn parse()\n";
        let prompt = validation_fix_prompt(&validation, None, OutputBounds::default(), Some(map));
        let at_map = prompt.find("## Where to look").unwrap();
        assert!(prompt[at_map..].contains("src/config.rs\n  4: pub fn parse()"));
        assert!(at_map < prompt.find(TOOLS_RULE).unwrap());
        let without = validation_fix_prompt(&validation, None, OutputBounds::default(), Some(" "));
        assert!(!without.contains("Where to look"));
        let text = failure_text(&validation, None);
        assert!(text.contains("config::tests::parses") && text.contains("src/config.rs:4:9"));
        // a step failing on the baseline too is not the change's: nothing to rank by
        assert_eq!(failure_text(&validation, Some(&validation)), "");
    }

    #[test]
    fn the_total_bound_holds_over_many_steps() {
        let big = "x".repeat(10_000);
        let validation = ValidationReport::from_steps(
            StepName::ALL
                .into_iter()
                .map(|n| step(n, Some(1), &big))
                .collect(),
        );
        let prompt = validation_fix_prompt(&validation, None, OutputBounds::default(), None);
        assert!(
            prompt.len() < OutputBounds::default().total + 2_000,
            "{}",
            prompt.len()
        );
        let timed_out = ValidationStep {
            timed_out: true,
            exit_code: None,
            ..step(StepName::Test, None, "")
        };
        assert_eq!(outcome(&timed_out), "timed out after 800 ms");
        assert_eq!(outcome(&step(StepName::Test, None, "")), "killed");
    }

    #[test]
    fn tail_cuts_on_a_char_boundary() {
        for (text, max, expected) in [
            ("abc", 5, "abc"),
            ("abcdef", 3, "[… 3 earlier bytes cut]\ndef"),
            ("one\ntwo\nthree", 8, "[… 8 earlier bytes cut]\nthree"),
            ("one\ntwo\n", 3, "[… 5 earlier bytes cut]\nwo\n"),
            ("ééé", 3, "[… 4 earlier bytes cut]\né"),
        ] {
            assert_eq!(tail(text, max), expected);
        }
    }

    #[test]
    fn review_fix_prompt_lists_the_findings() {
        let findings = [Finding {
            rule: "secret.aws_access_key".into(),
            severity: Severity::Critical,
            path: "deploy.sh".into(),
            line: Some(1),
            message: "AWS access key id in an added line".into(),
        }];
        insta::assert_snapshot!("prompt_fix_review", review_fix_prompt(&findings));
    }
}
