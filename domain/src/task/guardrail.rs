//! The correction loop's decision after each agent run and its validation/review.
//!
//! In order:
//! 1. cancelled → `Stop(Cancelled)`;
//! 2. no file changed → `Stop(NoChanges)`;
//! 3. validation passed and no critical finding → `Done(Validated)` (even past a limit: the
//!    work is done), or `Done(NoSteps)` when there was no validation step to pass;
//! 4. validation failed: the guardrails first — cumulative cost ≥ `max_total_cost_usd` →
//!    `Stop(CostCeiling)`; elapsed ≥ `timeout_ms` → `Stop(Timeout)`; `cycles` ≥
//!    `max_cycles` → `Stop(MaxCycles)` — else `FixValidation`;
//! 5. validation passed with a critical finding: a guardrail crossed or `review_cycles` ≥
//!    `max_review_cycles` → `Done(ReviewFindings)` (the validated change goes on with its
//!    finding to the delivery step, whose risk gate holds it for approval), else
//!    `FixReview`.
//!
//! `cycles` counts the agent runs of the validation loop so far, the main run included, so
//! `max_cycles = 5` allows the main run and four corrections.

use super::spec::TaskLimits;
use super::status::StopReason;

/// The loop's state after a run and its checks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopState {
    pub cost_usd: f64,
    pub elapsed_ms: u64,
    pub cycles: u32,
    pub review_cycles: u32,
    pub files_changed: usize,
    /// [`super::ValidationReport::passes_against`] the baseline: a step that already failed
    /// on the untouched worktree does not keep the loop going.
    pub validation_passed: bool,
    /// How many validation steps ran: none configured or detected → a passing change ends
    /// `NoSteps`, never `Validated`.
    pub validation_steps: usize,
    pub critical_findings: bool,
    pub cancelled: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Finished; the change goes to scoring and delivery.
    Done(StopReason),
    /// Resume the session with the failing validation output.
    FixValidation,
    /// Resume the session with the critical review findings.
    FixReview,
    /// A guardrail or a fault ended the loop.
    Stop(StopReason),
}

impl Next {
    /// The stop reason of a finished loop; `None` while it goes on.
    pub fn stop_reason(self) -> Option<StopReason> {
        match self {
            Next::Done(r) | Next::Stop(r) => Some(r),
            Next::FixValidation | Next::FixReview => None,
        }
    }
}

pub fn next_step(state: &LoopState, limits: &TaskLimits) -> Next {
    if state.cancelled {
        return Next::Stop(StopReason::Cancelled);
    }
    if state.files_changed == 0 {
        return Next::Stop(StopReason::NoChanges);
    }
    if state.validation_passed && !state.critical_findings {
        return Next::Done(if state.validation_steps == 0 {
            StopReason::NoSteps
        } else {
            StopReason::Validated
        });
    }
    let guard = if state.cost_usd >= limits.max_total_cost_usd {
        Some(StopReason::CostCeiling)
    } else if state.elapsed_ms >= limits.timeout_ms {
        Some(StopReason::Timeout)
    } else {
        None
    };
    if !state.validation_passed {
        return match guard {
            Some(reason) => Next::Stop(reason),
            None if state.cycles >= limits.max_cycles => Next::Stop(StopReason::MaxCycles),
            None => Next::FixValidation,
        };
    }
    if guard.is_some() || state.review_cycles >= limits.max_review_cycles {
        Next::Done(StopReason::ReviewFindings)
    } else {
        Next::FixReview
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> LoopState {
        LoopState {
            cost_usd: 0.5,
            elapsed_ms: 10_000,
            cycles: 1,
            review_cycles: 0,
            files_changed: 1,
            validation_passed: true,
            validation_steps: 2,
            critical_findings: false,
            cancelled: false,
        }
    }

    fn check(input: LoopState, expected: Next) {
        assert_eq!(
            next_step(&input, &TaskLimits::default()),
            expected,
            "{input:?}"
        );
    }

    #[test]
    fn guardrail_decisions() {
        use Next::*;
        use StopReason::*;
        let failing = LoopState {
            validation_passed: false,
            ..state()
        };
        let critical = LoopState {
            critical_findings: true,
            ..state()
        };
        for (input, expected) in [
            (state(), Done(Validated)),
            // Nothing to validate: passed, but not validated.
            (
                LoopState {
                    validation_steps: 0,
                    ..state()
                },
                Done(NoSteps),
            ),
            (
                LoopState {
                    validation_steps: 0,
                    critical_findings: true,
                    ..state()
                },
                FixReview,
            ),
            (
                LoopState {
                    cancelled: true,
                    ..state()
                },
                Stop(Cancelled),
            ),
            (
                LoopState {
                    files_changed: 0,
                    ..failing
                },
                Stop(NoChanges),
            ),
            (failing, FixValidation),
            (
                LoopState {
                    cycles: 4,
                    ..failing
                },
                FixValidation,
            ),
            (
                LoopState {
                    cycles: 5,
                    ..failing
                },
                Stop(MaxCycles),
            ),
            (
                LoopState {
                    cost_usd: 10.0,
                    ..failing
                },
                Stop(CostCeiling),
            ),
            (
                LoopState {
                    cost_usd: 9.99,
                    ..failing
                },
                FixValidation,
            ),
            (
                LoopState {
                    elapsed_ms: 300_000,
                    ..failing
                },
                Stop(Timeout),
            ),
            (
                LoopState {
                    elapsed_ms: 299_999,
                    ..failing
                },
                FixValidation,
            ),
            // Cost is checked before time and cycles.
            (
                LoopState {
                    cost_usd: 11.0,
                    elapsed_ms: 400_000,
                    cycles: 9,
                    ..failing
                },
                Stop(CostCeiling),
            ),
            (critical, FixReview),
            (
                LoopState {
                    review_cycles: 1,
                    ..critical
                },
                FixReview,
            ),
            (
                LoopState {
                    review_cycles: 2,
                    ..critical
                },
                Done(ReviewFindings),
            ),
            (
                LoopState {
                    cost_usd: 10.0,
                    ..critical
                },
                // A validated change with a finding and no budget left goes on to delivery.
                Done(ReviewFindings),
            ),
            (
                LoopState {
                    elapsed_ms: 300_000,
                    ..critical
                },
                Done(ReviewFindings),
            ),
            // Validation is fixed before the review: a failing change with a critical finding.
            (
                LoopState {
                    critical_findings: true,
                    ..failing
                },
                FixValidation,
            ),
            // Done work is done even past a limit.
            (
                LoopState {
                    cost_usd: 12.0,
                    elapsed_ms: 900_000,
                    cycles: 6,
                    ..state()
                },
                Done(Validated),
            ),
        ] {
            check(input, expected);
        }
        assert_eq!(FixReview.stop_reason(), None);
        assert_eq!(Stop(Timeout).stop_reason(), Some(Timeout));
    }

    #[test]
    fn a_lower_ceiling_stops_after_the_first_run() {
        let limits = TaskLimits {
            max_total_cost_usd: 0.3,
            ..TaskLimits::default()
        };
        let failing = LoopState {
            validation_passed: false,
            ..state()
        };
        assert_eq!(
            next_step(&failing, &limits),
            Next::Stop(StopReason::CostCeiling)
        );
    }
}
