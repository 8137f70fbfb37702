//! The guarded task pipeline's pure half: the task, its limits, the cycles of the correction
//! loop, validation and review results, the risk score and the report. The use case that runs
//! the stages lives in `forge-app`; here are only values and rules.

pub mod change;
pub mod classify;
pub mod cycle;
pub mod delivery;
pub mod finding;
pub mod id;
pub mod kind;
pub mod report;
pub mod review;
pub mod risk_score;
pub mod spec;
pub mod status;
pub mod validation;

pub use change::{ChangeKind, FileChange};
pub use classify::{choose_model, classify};
pub use cycle::{Cycle, CycleKind};
pub use delivery::{Delivery, DeliveryDecision, NotificationResult};
pub use finding::{Finding, ReviewReport, Severity};
pub use id::TaskId;
pub use kind::TaskType;
pub use report::{TaskOutcome, TaskReport, discard_command, shell_quote, totals};
pub use review::{AddedLine, ChangedFile};
pub use risk_score::{RiskLevel, RiskScore};
pub use spec::{ContextFile, Goal, TaskLimits, TaskSpec};
pub use status::{StopReason, TaskStatus};
pub use validation::{StepName, ValidationReport, ValidationStep};
