//! `task context --baseline`: the validation commands a task would run, run once in a scratch
//! work tree at the task's base (a detached work tree through the [`Vcs`] port, removed
//! afterwards), so a user sees what already fails before any agent touches the code. The
//! steps run through the same [`StepRunner`] as a task's validation: each one confined to
//! the scratch work tree (`confine::code`).
//!
//! [`Vcs`]: forge_ports::Vcs

use std::collections::BTreeMap;
use std::path::Path;

use forge_domain::ForgeError;
use forge_domain::task::{StepName, ValidationReport};
use forge_ports::FileStore;
use serde::Serialize;

use super::detect::{PROJECT_FILES, ValidationPlan, plan_validation};
use super::validate::StepRunner;
use crate::config::ValidationConfig;
use crate::handle::RunCanceller;

/// What `--baseline` needs besides the task ports.
#[derive(Clone)]
pub struct BaselineInputs {
    /// `[validation]` of the repository's `forge.toml` (detection when no step is set).
    pub validation: ValidationConfig,
    pub runner: StepRunner,
    /// Stops the running step (Ctrl-C); the scratch work tree is removed all the same.
    pub cancel: RunCanceller,
}

/// The baseline as `task context` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreviewBaseline {
    /// The commit validated.
    pub commit: String,
    /// Where the steps came from (`forge.toml [validation]`, `detected from Cargo.toml`).
    pub source: String,
    /// Every step passed.
    pub passed: bool,
    pub steps: Vec<BaselineStep>,
}

/// One step of the baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BaselineStep {
    pub name: StepName,
    pub command: String,
    pub passed: bool,
    /// `None` when the step was killed (its timeout).
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// The tests its output names as failing (empty when it passed or named none).
    pub failing_tests: Vec<String>,
    /// The end of its output (failing steps only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
}

impl PreviewBaseline {
    fn new(commit: String, plan: &ValidationPlan, report: ValidationReport) -> Self {
        Self {
            commit,
            source: plan.source.describe(),
            passed: report.passed,
            steps: report
                .steps
                .into_iter()
                .map(|s| {
                    let passed = s.passed();
                    BaselineStep {
                        name: s.name,
                        command: s.command,
                        passed,
                        exit_code: s.exit_code,
                        timed_out: s.timed_out,
                        duration_ms: s.duration_ms,
                        failing_tests: s.failed_tests.map(|f| f.names).unwrap_or_default(),
                        output_tail: (!passed).then_some(s.output_tail),
                    }
                })
                .collect(),
        }
    }
}

/// The validation plan of the project checked out at `dir`: `validation`'s steps when any
/// is set, else those detected from the project's files there.
///
/// # Errors
/// [`ForgeError::Io`] when a project file cannot be read.
pub(crate) async fn plan_in(
    files: &dyn FileStore,
    validation: &ValidationConfig,
    dir: &Path,
) -> Result<ValidationPlan, ForgeError> {
    let mut found = BTreeMap::new();
    if !validation.any_set() {
        for name in PROJECT_FILES {
            if let Some(bytes) = files.read(&dir.join(name)).await? {
                found.insert(
                    (*name).to_owned(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                );
            }
        }
    }
    Ok(plan_validation(validation, &found))
}

/// Runs the validation plan of the work tree `scratch` (at `commit`): install first when
/// the project has one, then lint, build and test, every step even after a failure.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when there is no validation step (none configured, none
/// detected); [`ForgeError::ExecutableNotFound`] when a step's program is not installed;
/// [`ForgeError::Io`] when `sh` cannot be started; [`ForgeError::Cancelled`] when cancelled.
pub(crate) async fn run_in(
    files: &dyn FileStore,
    inputs: &BaselineInputs,
    scratch: &Path,
    commit: String,
) -> Result<PreviewBaseline, ForgeError> {
    let plan = plan_in(files, &inputs.validation, scratch).await?;
    if plan.steps.is_empty() {
        return Err(ForgeError::InvalidRequest {
            reason: format!(
                "--baseline: no validation step to run: none is configured in [validation] of \
                 forge.toml and none was detected at {} (known projects: {}); set \
                 [validation] test = \"…\" (or lint, build) in forge.toml",
                &commit[..commit.len().min(12)],
                PROJECT_FILES.join(", ")
            ),
        });
    }
    inputs.runner.check_tools(&plan.steps, scratch)?;
    let steps: Vec<_> = plan.steps.iter().collect();
    let report = inputs
        .runner
        .run(scratch, &steps, None, "baseline", &inputs.cancel)
        .await?;
    Ok(PreviewBaseline::new(commit, &plan, report))
}

/// The human lines of a baseline.
pub fn render(b: &PreviewBaseline) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "baseline at {} ({}): {}\n",
        &b.commit[..b.commit.len().min(12)],
        b.source,
        if b.passed {
            "every step passes"
        } else {
            "already failing"
        }
    );
    for step in &b.steps {
        let verdict = if step.passed {
            "pass".to_owned()
        } else if step.timed_out {
            "FAIL (timed out)".to_owned()
        } else {
            match step.exit_code {
                Some(code) => format!("FAIL (exit {code})"),
                None => "FAIL (killed)".to_owned(),
            }
        };
        let _ = writeln!(
            s,
            "  {:<8} {verdict}  `{}` ({} ms)",
            step.name.as_str(),
            step.command,
            step.duration_ms
        );
        if !step.failing_tests.is_empty() {
            let _ = writeln!(
                s,
                "           failing tests: {}",
                step.failing_tests.join(", ")
            );
        }
    }
    s
}
