//! The guarded task pipeline's pure half: the task, its limits, the cycles of the correction
//! loop, validation and review results, the risk score and the report. The use case that runs
//! the stages lives in `forge-app`; here are only values and rules.

pub mod buildcache;
pub mod change;
pub mod classify;
pub mod cycle;
pub mod delivery;
pub mod failed_tests;
pub mod finding;
pub mod guardrail;
pub mod id;
pub mod index;
pub mod instructions;
pub mod kind;
pub mod prompt;
pub mod repo_url;
pub mod repomap;
pub mod report;
pub mod review;
pub mod risk;
pub mod risk_score;
pub mod spec;
pub mod status;
pub mod travel;
pub mod validation;

pub use buildcache::{CacheKind, CacheState, StepCache};
pub use change::{ChangeKind, FileChange};
pub use classify::{choose_model, classify};
pub use cycle::{Cycle, CycleKind};
pub use delivery::{
    CommitIdentity, Delivery, DeliveryDecision, IdentitySource, NotificationResult,
};
pub use failed_tests::{FailedTests, FailureScanner};
pub use finding::{Finding, ReviewReport, Severity};
pub use guardrail::{LoopState, Next, next_step};
pub use id::TaskId;
pub use index::{IndexEntry, summarize as summarize_index};
pub use kind::TaskType;
pub use prompt::{
    OutputBounds, failure_text, named_step, review_fix_prompt, task_prompt, validation_fix_prompt,
};
pub use repo_url::is_repository_url;
pub use report::{TaskOutcome, TaskReport, discard_command, shell_quote, totals};
pub use review::{AddedLine, ChangedFile, ReviewLimits, review};
pub use risk::{RiskInputs, score as risk_score};
pub use risk_score::{RiskLevel, RiskScore};
pub use spec::{ContextFile, Goal, TaskLimits, TaskSpec};
pub use status::{StopReason, TaskStatus};
pub use validation::{StepName, StepTests, ValidationReport, ValidationStep, compare_step};
