//! The queue's use cases: a worker that claims tasks from a [`forge_ports::TaskQueue`] and
//! runs each through a [`QueuedTaskRunner`] while holding its lease.

mod approvals;
pub mod followup;
pub mod submit;
mod worker;

pub use followup::{FollowupRefusal, followup_options};
pub use submit::{ContextFile, FollowupOf, SubmitRefusal, TaskOptions, approval_json, submission};
pub use worker::{
    QueuedTaskRunner, RunEnd, StopReason, TaskEvent, Worker, WorkerConfig, WorkerEvent,
    WorkerSummary,
};
