//! What the delivery step did with a task's change (filled by delivery, issue 14).

use serde::{Deserialize, Serialize};

use super::status::TaskStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryDecision {
    Committed,
    PendingApproval,
    Rejected,
    RolledBack,
}

impl DeliveryDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryDecision::Committed => "committed",
            DeliveryDecision::PendingApproval => "pending_approval",
            DeliveryDecision::Rejected => "rejected",
            DeliveryDecision::RolledBack => "rolled_back",
        }
    }

    /// The task's status becomes the decision.
    pub fn status(self) -> TaskStatus {
        match self {
            DeliveryDecision::Committed => TaskStatus::Committed,
            DeliveryDecision::PendingApproval => TaskStatus::PendingApproval,
            DeliveryDecision::Rejected => TaskStatus::Rejected,
            DeliveryDecision::RolledBack => TaskStatus::RolledBack,
        }
    }
}

/// One notification channel's result (`webhook`, `telegram`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationResult {
    pub channel: String,
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub decision: DeliveryDecision,
    pub branch: String,
    /// The commit on the task branch, when one was made.
    #[serde(default)]
    pub commit: Option<String>,
    #[serde(default)]
    pub pushed: bool,
    #[serde(default)]
    pub push_error: Option<String>,
    /// The push was refused because another attempt of this task (a worker that took it
    /// over) delivered first: the commit that attempt pushed, found on the remote's branch
    /// by its `Forge-Task` trailer. Nothing was pushed, and that is not an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_by_another_attempt: Option<String>,
    #[serde(default)]
    pub approval_id: Option<String>,
    #[serde(default)]
    pub notifications: Vec<NotificationResult>,
    /// Who the commit names as author and committer, and where forge took it from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<CommitIdentity>,
}

/// A commit's author and committer as delivery chose them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitIdentity {
    pub name: String,
    pub email: String,
    pub source: IdentitySource,
}

/// Where a commit's identity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentitySource {
    /// `[delivery] author`.
    Config,
    /// git's own configuration (or its `GIT_AUTHOR_*` environment).
    Git,
    /// Neither had one (a fresh worker machine): forge's bot identity.
    BuiltIn,
}
