//! Pull-request review (`forge-code-agent review`): the pure half. One list of findings from
//! the deterministic rules of the task pipeline ([`crate::task::review`]) and from the
//! agent's answer, placed against the change's hunks, and rendered as Markdown, JSON, SARIF
//! 2.1.0 and a GitHub review payload; the exit-code rule.
//!
//! The app's use case gathers the change through the `Vcs` port, runs the agent and hands
//! the pieces in here; nothing here reads a file or a clock.

pub mod answer;
pub mod diff;
pub mod finding;
pub mod github;
pub mod markdown;
pub mod outcome;
pub mod prompt;
pub mod sarif;

pub use answer::{AnswerError, ParsedAnswer, Rejected, parse_answer};
pub use diff::{DiffChange, DiffFile, Hunk, Placement, parse_patch, place};
pub use finding::{FindingSource, ReviewFinding, ReviewSeverity, dedupe};
pub use outcome::{
    FailOn, RATE_LIMITED_RETRIES_BEFORE_SKIP, ReviewOutcome, ReviewStatus, exit_code,
};
