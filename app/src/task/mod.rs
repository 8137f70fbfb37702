//! The guarded task pipeline (issue 13): [`TaskPipeline`] runs a task through its stages
//! in a work tree of its own and returns a [`forge_domain::task::TaskOutcome`]; `gc`
//! cleans up after crashes.

pub mod agent_run;
pub mod artifacts;
pub mod context;
pub mod detect;
pub mod gc;
pub mod guard_file;
pub mod pipeline;
pub mod preview;
pub mod preview_baseline;
pub mod request;
pub mod rules;
pub mod validate;
pub mod warm;

pub use gc::{GcReport, gc, trim_caches};
pub use pipeline::{TaskPipeline, TaskPorts, WORKTREES_DIR};
pub use request::{SessionTravelPlan, Stage, TaskProgress, TaskRequest};
