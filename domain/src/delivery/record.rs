//! The rows the store keeps for a task and its change.

use serde::{Deserialize, Serialize};

use crate::task::{TaskId, TaskStatus};

/// A task as the store lists it. `report` is the whole task report (the pipeline's outcome
/// with its `delivery` object) as JSON, so `task show` prints what `task run` printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub task_id: TaskId,
    pub status: TaskStatus,
    pub title: String,
    /// The user's repository (not the worktree).
    pub repo: String,
    pub branch: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    pub risk_score: u8,
    pub created_at_ms: u64,
    pub updated_at_ms: u64,
    pub report: serde_json::Value,
}

/// A delivered (or held) change: the commit, where it went, how to undo it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeChange {
    pub task_id: TaskId,
    pub branch: String,
    /// The commit on the task branch; `None` while held for approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Where the base branch pointed when the task started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    pub pushed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_error: Option<String>,
    pub files: Vec<String>,
    pub at_ms: u64,
}
