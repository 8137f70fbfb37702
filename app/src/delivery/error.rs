//! What can go wrong when delivering, deciding or rolling back.

use forge_domain::ForgeError;
use forge_domain::delivery::{ApprovalId, ApprovalState};
use forge_domain::task::{TaskId, TaskStatus};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeliveryError {
    #[error("no task with id {0} in the store (see `forge-code-agent task list`)")]
    NoSuchTask(TaskId),

    #[error("no approval with id {0} (see `forge-code-agent approvals list`)")]
    NoSuchApproval(ApprovalId),

    /// Another person or process decided first.
    #[error("approval {id} already decided: {} by {}", .state.as_str(), .by.as_deref().unwrap_or("someone"))]
    AlreadyDecided {
        id: ApprovalId,
        state: ApprovalState,
        by: Option<String>,
    },

    /// The task is not in a state the action applies to.
    #[error("task {task} is {status}: {reason}")]
    WrongState {
        task: TaskId,
        status: TaskStatus,
        reason: String,
    },

    /// The store, git or the file system failed.
    #[error(transparent)]
    Forge(#[from] ForgeError),
}

impl DeliveryError {
    pub fn kind(&self) -> &'static str {
        match self {
            DeliveryError::NoSuchTask(_) => "no_such_task",
            DeliveryError::NoSuchApproval(_) => "no_such_approval",
            DeliveryError::AlreadyDecided { .. } => "already_decided",
            DeliveryError::WrongState { .. } => "wrong_state",
            DeliveryError::Forge(e) => e.kind(),
        }
    }
}
