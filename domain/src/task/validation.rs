//! The result of running the validation commands (install, lint, build, test) once.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::failed_tests::FailedTests;

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
    /// The tests its output named as failing (set when the step failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_tests: Option<FailedTests>,
    /// What the sandbox refused the step (the code under test reaching out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_denied: Vec<crate::sandbox::SandboxDenial>,
}

impl ValidationStep {
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// Failed while the sandbox refused one of its connections: the environment's failure
    /// (a registry or host it could not reach), which says nothing about the code. A
    /// baseline step that failed so is never "already failing".
    pub fn failed_unreachable(&self) -> bool {
        !self.passed()
            && self
                .sandbox_denied
                .iter()
                .any(|d| d.kind == crate::event::DenialKind::Network)
    }

    /// The report's lines beside a failed step the sandbox refused a connection
    /// ([`crate::sandbox::unreachable_lines`]); none for a step that passed.
    pub fn unreachable_lines(&self) -> Vec<String> {
        if self.passed() {
            return Vec::new();
        }
        crate::sandbox::unreachable_lines(self.name.as_str(), &self.sandbox_denied)
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

    /// The failing steps the change is to blame for (see [`compare_step`]).
    pub fn regressions<'a>(
        &'a self,
        baseline: Option<&'a ValidationReport>,
    ) -> impl Iterator<Item = &'a ValidationStep> + 'a {
        self.failing()
            .filter(move |s| compare_step(s, baseline.and_then(|b| b.step(s.name))).regression)
    }

    /// Passed, or fails only where the baseline already failed: what the correction loop
    /// treats as passing.
    pub fn passes_against(&self, baseline: Option<&ValidationReport>) -> bool {
        self.regressions(baseline).next().is_none()
    }

    pub fn step(&self, name: StepName) -> Option<&ValidationStep> {
        self.steps.iter().find(|s| s.name == name)
    }

    /// The steps that failed because the sandbox refused them a connection (see
    /// [`ValidationStep::failed_unreachable`]).
    pub fn unreachable(&self) -> impl Iterator<Item = &ValidationStep> {
        self.steps.iter().filter(|s| s.failed_unreachable())
    }

    /// Every step that fails now or failed on the baseline, against the baseline.
    pub fn compare(&self, baseline: Option<&ValidationReport>) -> Vec<StepTests> {
        self.steps
            .iter()
            .filter(|s| {
                !s.passed()
                    || baseline
                        .and_then(|b| b.step(s.name))
                        .is_some_and(|b| !b.passed())
            })
            .map(|s| compare_step(s, baseline.and_then(|b| b.step(s.name))))
            .collect()
    }
}

/// One step's failing tests against the baseline: what `task run` reports per step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepTests {
    pub step: StepName,
    /// Failing now and on the untouched tree: not the change's.
    pub already_failing: Vec<String>,
    /// Failing now, passing (or absent) on the untouched tree: the change's.
    pub newly_failing: Vec<String>,
    /// Failing on the untouched tree, passing now.
    pub fixed: Vec<String>,
    /// The change is to blame for the step's failure.
    pub regression: bool,
    /// Why the step is blamed when its tests cannot say (the failures are not itemized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Compares a step with the same step on the untouched tree.
///
/// A test failing now that passed (or did not exist) before is the change's regression.
/// When either run's failures cannot be itemized, the step is the change's regression if
/// it fails *more* than before: another exit code, a timeout, more failures counted, or a
/// different list of names. When unsure, the change is blamed: committing a break is worse
/// than one more correction cycle. A baseline step that failed because the sandbox refused
/// it a connection ([`ValidationStep::failed_unreachable`]) is no baseline: it could not
/// run, so it masks nothing the change breaks.
pub fn compare_step(now: &ValidationStep, base: Option<&ValidationStep>) -> StepTests {
    let environment = base.filter(|b| b.failed_unreachable());
    let base = base.filter(|b| !b.failed_unreachable());
    let mut out = compare_with(now, base);
    if let Some(base) = environment
        && out.regression
    {
        let lines = base.unreachable_lines();
        let what = lines.first().map_or("", String::as_str);
        out.reason = Some(format!(
            "fails now; before the change it could not run ({what})"
        ));
    }
    out
}

fn compare_with(now: &ValidationStep, base: Option<&ValidationStep>) -> StepTests {
    let empty = FailedTests::default();
    let now_tests = if now.passed() {
        &empty
    } else {
        now.failed_tests.as_ref().unwrap_or(&empty)
    };
    let base_failed = base.filter(|b| !b.passed());
    let base_tests = base_failed.map_or(&empty, |b| b.failed_tests.as_ref().unwrap_or(&empty));
    let now_names: BTreeSet<&String> = now_tests.names.iter().collect();
    let base_names: BTreeSet<&String> = base_tests.names.iter().collect();
    let list = |set: BTreeSet<&&String>| set.into_iter().map(|s| (*s).clone()).collect::<Vec<_>>();
    let mut out = StepTests {
        step: now.name,
        already_failing: list(now_names.intersection(&base_names).collect()),
        newly_failing: list(now_names.difference(&base_names).collect()),
        fixed: list(base_names.difference(&now_names).collect()),
        regression: false,
        reason: None,
    };
    if now.passed() {
        return out;
    }
    let Some(base) = base_failed else {
        out.regression = true;
        if now_tests.names.is_empty() {
            out.reason = Some("fails now, passed before the change".into());
        }
        return out;
    };
    if now_tests.itemized && base_tests.itemized {
        out.regression = !out.newly_failing.is_empty();
        return out;
    }
    out.reason = if now.timed_out && !base.timed_out {
        Some("timed out, did not before the change".into())
    } else if now.exit_code != base.exit_code {
        Some(format!(
            "exit code {}, was {} before the change",
            code(now.exit_code),
            code(base.exit_code)
        ))
    } else if now_tests.count.unwrap_or(0) > base_tests.count.unwrap_or(0) {
        Some(format!(
            "{} failures, {} before the change",
            now_tests.count.unwrap_or(0),
            base_tests.count.unwrap_or(0)
        ))
    } else if now_names != base_names {
        Some("a different list of failures than before the change".into())
    } else {
        None
    };
    out.regression = out.reason.is_some() || !out.newly_failing.is_empty();
    out
}

fn code(exit: Option<i32>) -> String {
    exit.map_or_else(|| "none (killed)".to_owned(), |c| c.to_string())
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
            failed_tests: None,
            sandbox_denied: Vec::new(),
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

    fn tested(
        exit_code: Option<i32>,
        names: &[&str],
        count: Option<u64>,
        itemized: bool,
    ) -> ValidationStep {
        let mut s = step(StepName::Test, exit_code, false);
        s.failed_tests = Some(FailedTests {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            count,
            itemized,
        });
        s
    }

    fn refused(mut s: ValidationStep) -> ValidationStep {
        s.sandbox_denied = vec![crate::sandbox::SandboxDenial::refused(
            "index.crates.io:443",
            crate::sandbox::DenyReason::NotAllowed,
        )];
        s
    }

    #[test]
    fn a_baseline_the_sandbox_kept_from_its_registry_masks_nothing() {
        let cut_off = refused(step(StepName::Build, Some(101), false));
        let failing = step(StepName::Build, Some(101), false);
        let pass = step(StepName::Build, Some(0), false);
        // (now, baseline, regression)
        let table: [(&ValidationStep, Option<&ValidationStep>, bool); 6] = [
            // The masking case: the same exit code after the change, but the baseline only
            // failed because the sandbox refused it the index.
            (&failing, Some(&cut_off), true),
            (&cut_off, Some(&cut_off), true),
            (&pass, Some(&cut_off), false),
            // Look-alikes: a baseline that failed on its own still excuses the same failure,
            // and a refusal beside a baseline that passed changes nothing.
            (&failing, Some(&failing), false),
            (&failing, Some(&refused(pass.clone())), true),
            (&pass, Some(&refused(pass.clone())), false),
        ];
        for (now, base, regression) in table {
            let got = compare_step(now, base);
            assert_eq!(got.regression, regression, "{now:?} vs {base:?}: {got:?}");
        }
        let reason = compare_step(&failing, Some(&cut_off)).reason.unwrap();
        assert!(
            reason.contains("could not reach index.crates.io"),
            "{reason}"
        );
        let now = ValidationReport::from_steps(vec![failing.clone()]);
        let base = ValidationReport::from_steps(vec![cut_off.clone()]);
        assert!(!now.passes_against(Some(&base)));
        assert_eq!(base.unreachable().count(), 1);
        assert_eq!(now.unreachable().count(), 0);
    }

    #[test]
    fn a_failed_step_says_what_the_sandbox_refused_it() {
        let check = |s: &ValidationStep, lines: usize, unreachable: bool| {
            assert_eq!(s.unreachable_lines().len(), lines, "{s:?}");
            assert_eq!(s.failed_unreachable(), unreachable, "{s:?}");
        };
        check(&refused(step(StepName::Build, Some(101), false)), 1, true);
        check(&refused(step(StepName::Test, None, true)), 1, true);
        // Look-alikes: a step that passed despite a refusal, a failure without one, a
        // refused file.
        check(&refused(step(StepName::Build, Some(0), false)), 0, false);
        check(&step(StepName::Build, Some(101), false), 0, false);
        let mut fs = step(StepName::Build, Some(1), false);
        fs.sandbox_denied = vec![crate::sandbox::SandboxDenial::fs("/w/.envrc", "protected")];
        check(&fs, 0, false);
    }

    #[test]
    fn tests_are_compared_with_the_baseline_test_by_test() {
        let legacy = tested(Some(1), &["test_legacy"], Some(1), true);
        let both = tested(Some(1), &["test_data", "test_legacy"], Some(2), true);
        let unlisted = tested(Some(1), &[], None, false);
        let pass = step(StepName::Test, Some(0), false);
        // (now, baseline, regression, newly failing, already failing, fixed)
        type Row<'a> = (
            &'a ValidationStep,
            Option<&'a ValidationStep>,
            bool,
            &'a [&'a str],
            &'a [&'a str],
            &'a [&'a str],
        );
        let table: [Row<'_>; 9] = [
            // The masking case: the step already failed, the change breaks another test.
            (
                &both,
                Some(&legacy),
                true,
                &["test_data"],
                &["test_legacy"],
                &[],
            ),
            (&legacy, Some(&legacy), false, &[], &["test_legacy"], &[]),
            (&pass, Some(&legacy), false, &[], &[], &["test_legacy"]),
            (
                &legacy,
                Some(&both),
                false,
                &[],
                &["test_legacy"],
                &["test_data"],
            ),
            (&legacy, Some(&pass), true, &["test_legacy"], &[], &[]),
            (&legacy, None, true, &["test_legacy"], &[], &[]),
            // Not itemized: the same failure is not blamed, a bigger or other one is.
            (&unlisted, Some(&unlisted), false, &[], &[], &[]),
            (
                &tested(Some(101), &[], None, false),
                Some(&unlisted),
                true,
                &[],
                &[],
                &[],
            ),
            (&unlisted, Some(&legacy), true, &[], &[], &["test_legacy"]),
        ];
        for (now, base, regression, newly, already, fixed) in table {
            let got = compare_step(now, base);
            assert_eq!(got.regression, regression, "{now:?} vs {base:?}: {got:?}");
            assert_eq!(got.newly_failing, newly, "{got:?}");
            assert_eq!(got.already_failing, already, "{got:?}");
            assert_eq!(got.fixed, fixed, "{got:?}");
        }
    }
}
