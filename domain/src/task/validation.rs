//! The result of running the validation commands (install, lint, build, test) once.

use serde::{Deserialize, Serialize};

/// Which validation step; the order of the variants is the order they run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepName {
    Install,
    Lint,
    Build,
    Test,
}

impl StepName {
    pub const ALL: [StepName; 4] = [
        StepName::Install,
        StepName::Lint,
        StepName::Build,
        StepName::Test,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StepName::Install => "install",
            StepName::Lint => "lint",
            StepName::Build => "build",
            StepName::Test => "test",
        }
    }
}

impl std::fmt::Display for StepName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One validation command as it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationStep {
    pub name: StepName,
    pub command: String,
    /// `None` when the process was killed (timeout, cancel) or never started.
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The last part of the combined output, bounded by the caller.
    pub output_tail: String,
    /// The step's own timeout killed it.
    #[serde(default)]
    pub timed_out: bool,
    /// The build cache the step used, and whether it was warm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<super::buildcache::StepCache>,
}

impl ValidationStep {
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// All steps of one validation pass.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ValidationReport {
    pub passed: bool,
    pub steps: Vec<ValidationStep>,
}

impl ValidationReport {
    /// `passed` is derived: every step passed (an empty pass — nothing configured or
    /// detected — passes).
    pub fn from_steps(steps: Vec<ValidationStep>) -> Self {
        Self {
            passed: steps.iter().all(ValidationStep::passed),
            steps,
        }
    }

    pub fn failing(&self) -> impl Iterator<Item = &ValidationStep> {
        self.steps.iter().filter(|s| !s.passed())
    }

    /// The failing steps the change is to blame for: those that did not already fail on the
    /// untouched worktree (`baseline`).
    pub fn regressions<'a>(
        &'a self,
        baseline: Option<&'a ValidationReport>,
    ) -> impl Iterator<Item = &'a ValidationStep> + 'a {
        self.failing()
            .filter(move |s| !baseline.is_some_and(|b| b.failing().any(|f| f.name == s.name)))
    }

    /// Passed, or fails only where the baseline already failed: what the correction loop
    /// treats as passing.
    pub fn passes_against(&self, baseline: Option<&ValidationReport>) -> bool {
        self.regressions(baseline).next().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: StepName, exit_code: Option<i32>, timed_out: bool) -> ValidationStep {
        ValidationStep {
            name,
            command: "sh test.sh".into(),
            exit_code,
            duration_ms: 3,
            output_tail: String::new(),
            timed_out,
            cache: None,
        }
    }

    #[test]
    fn a_report_passes_only_when_every_step_exits_zero_in_time() {
        for (steps, passed) in [
            (vec![], true),
            (vec![step(StepName::Build, Some(0), false)], true),
            (
                vec![
                    step(StepName::Build, Some(0), false),
                    step(StepName::Test, Some(1), false),
                ],
                false,
            ),
            (vec![step(StepName::Test, None, false)], false),
            (vec![step(StepName::Test, Some(0), true)], false),
        ] {
            let r = ValidationReport::from_steps(steps);
            assert_eq!(r.passed, passed, "{r:?}");
            assert_eq!(r.failing().count() == 0, passed);
        }
    }

    #[test]
    fn only_steps_the_baseline_passed_are_regressions() {
        let report = |failing: &[StepName]| {
            ValidationReport::from_steps(
                [StepName::Build, StepName::Test]
                    .into_iter()
                    .map(|n| step(n, Some(i32::from(failing.contains(&n))), false))
                    .collect(),
            )
        };
        for (now, base, expected) in [
            (report(&[StepName::Test]), None, vec![StepName::Test]),
            (
                report(&[StepName::Test]),
                Some(report(&[])),
                vec![StepName::Test],
            ),
            (
                report(&[StepName::Test]),
                Some(report(&[StepName::Test])),
                vec![],
            ),
            (
                report(&[StepName::Build, StepName::Test]),
                Some(report(&[StepName::Test])),
                vec![StepName::Build],
            ),
            (report(&[]), Some(report(&[StepName::Test])), vec![]),
        ] {
            let got: Vec<StepName> = now.regressions(base.as_ref()).map(|s| s.name).collect();
            assert_eq!(got, expected);
            assert_eq!(now.passes_against(base.as_ref()), expected.is_empty());
        }
    }
}
