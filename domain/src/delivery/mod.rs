//! Delivery: what happens to a task's change once the pipeline has scored it.
//!
//! Pure data and rules only: the rows the store keeps (tasks, code changes, approvals,
//! notifications, the append-only audit log), the gate (risk below the threshold → commit,
//! otherwise hold for a person), the commit message with its `Forge-Task` trailer, and the
//! approval request a notifier sends. The store, git and HTTP live in adapters.

pub mod approval;
pub mod audit;
pub mod gate;
pub mod identity;
pub mod message;
pub mod notice;
pub mod record;

pub use crate::task::NotificationResult;
pub use approval::{Approval, ApprovalId, ApprovalState, Decision};
pub use audit::{AuditAction, AuditEntry};
pub use gate::{DEFAULT_RISK_THRESHOLD, Gate, gate};
pub use identity::{BUILT_IN_EMAIL, BUILT_IN_NAME, choose_identity};
pub use message::{CommitMessage, TRAILER, task_id_from_message};
pub use notice::ApprovalNotice;
pub use record::{CodeChange, TaskRecord};
