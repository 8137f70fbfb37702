//! How a run's final status follows from what was seen. One rule for every provider.

use crate::result::ExecutionStatus;

/// What the runtime knows when a run ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatusInputs {
    /// The CLI's own end-of-run report, if one arrived: `Some(true)` when it said success.
    pub reported_success: Option<bool>,
    /// The process exit code (`None`: killed by a signal, or never started).
    pub exit_code: Option<i32>,
    /// Any decoded output arrived before the end.
    pub saw_output: bool,
    pub cancelled: bool,
    pub timed_out: bool,
}

/// The status rule:
/// - a cancelled or timed-out run is `Partial`, whatever the CLI printed while dying;
/// - no end-of-run report: `Partial` when something arrived (crash or kill mid-stream),
///   `Error` when the CLI died with nothing to show (start-up failure), `Partial` otherwise;
/// - a report of failure is `Error`, even with exit code 0;
/// - a report of success is `Success` only with exit code 0.
pub fn derive_status(inputs: StatusInputs) -> ExecutionStatus {
    if inputs.cancelled || inputs.timed_out {
        return ExecutionStatus::Partial;
    }
    match inputs.reported_success {
        None => match (inputs.saw_output, inputs.exit_code) {
            (false, Some(code)) if code != 0 => ExecutionStatus::Error,
            _ => ExecutionStatus::Partial,
        },
        Some(false) => ExecutionStatus::Error,
        // An unknown exit (a transcript decoded without its exit code) keeps the CLI's word.
        Some(true) if matches!(inputs.exit_code, Some(0) | None) => ExecutionStatus::Success,
        Some(true) => ExecutionStatus::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ExecutionStatus::*;

    fn check(
        reported: Option<bool>,
        exit: Option<i32>,
        saw: bool,
        cancel: bool,
        timeout: bool,
        want: ExecutionStatus,
    ) {
        let got = derive_status(StatusInputs {
            reported_success: reported,
            exit_code: exit,
            saw_output: saw,
            cancelled: cancel,
            timed_out: timeout,
        });
        assert_eq!(
            got, want,
            "reported={reported:?} exit={exit:?} saw={saw} cancel={cancel} timeout={timeout}"
        );
    }

    #[test]
    fn status_table() {
        check(Some(true), Some(0), true, false, false, Success);
        check(Some(true), Some(1), true, false, false, Error);
        check(Some(true), None, true, false, false, Success);
        check(Some(false), None, true, false, false, Error);
        check(Some(true), Some(-1), true, false, false, Error);
        check(Some(false), Some(0), true, false, false, Error);
        check(None, Some(0), true, false, false, Partial);
        check(None, Some(143), true, false, false, Partial);
        check(None, Some(1), false, false, false, Error);
        check(None, None, false, false, false, Partial);
        check(Some(true), Some(0), true, true, false, Partial);
        check(Some(false), Some(0), true, false, true, Partial);
    }
}
