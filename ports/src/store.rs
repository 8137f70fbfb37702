//! The task store: tasks, their changes, approvals, notifications and the audit log.
//!
//! One durable place that a server and workers on several machines can share later. Writes
//! that belong together (a row and its audit entries) go in one call, so an implementation
//! can make them one transaction: after a crash either both are there or neither is.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::{
    Approval, ApprovalId, ApprovalState, AuditEntry, CodeChange, Decision, NotificationResult,
    TaskRecord,
};
use forge_domain::task::TaskId;

/// What deciding an approval did.
#[derive(Debug, Clone, PartialEq)]
pub enum DecideOutcome {
    /// This call decided it; the approval as it now stands.
    Decided(Approval),
    /// Someone else decided first; the approval as they left it. Nothing was changed.
    AlreadyDecided(Approval),
}

#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Inserts or replaces the task's row and appends `audit`, together.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be written (locked, corrupt, disk full); the
    /// message names the database. Nothing is written then.
    async fn save_task(&self, task: &TaskRecord, audit: &[AuditEntry]) -> Result<(), ForgeError>;

    /// The task's row, `None` when there is none.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be read.
    async fn task(&self, id: &TaskId) -> Result<Option<TaskRecord>, ForgeError>;

    /// Every task, newest first.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be read.
    async fn tasks(&self) -> Result<Vec<TaskRecord>, ForgeError>;

    /// Inserts or replaces the task's code change and appends `audit`, together.
    ///
    /// # Errors
    /// [`ForgeError::Io`] as for [`TaskStore::save_task`].
    async fn save_change(
        &self,
        change: &CodeChange,
        audit: &[AuditEntry],
    ) -> Result<(), ForgeError>;

    /// The task's code change, `None` when there is none.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be read.
    async fn change(&self, task: &TaskId) -> Result<Option<CodeChange>, ForgeError>;

    /// Stores a new pending approval and appends `audit`, together.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when an approval with that id exists;
    /// [`ForgeError::Io`] when the store cannot be written.
    async fn create_approval(
        &self,
        approval: &Approval,
        audit: &[AuditEntry],
    ) -> Result<(), ForgeError>;

    /// The approval, `None` when there is none.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be read.
    async fn approval(&self, id: &ApprovalId) -> Result<Option<Approval>, ForgeError>;

    /// Approvals in `state` (all when `None`), oldest first.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be read.
    async fn approvals(&self, state: Option<ApprovalState>) -> Result<Vec<Approval>, ForgeError>;

    /// Decides a pending approval, atomically: of two concurrent callers (two processes, two
    /// machines) exactly one gets [`DecideOutcome::Decided`]; the other gets
    /// [`DecideOutcome::AlreadyDecided`]. The audit entry is appended only by the winner.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no approval with that id;
    /// [`ForgeError::Io`] when the store cannot be written.
    async fn decide_approval(
        &self,
        id: &ApprovalId,
        decision: Decision,
        by: &str,
        reason: Option<&str>,
        at_ms: u64,
    ) -> Result<DecideOutcome, ForgeError>;

    /// Records one channel's attempt to send the approval's notice and appends `audit`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be written.
    async fn record_notification(
        &self,
        approval: &ApprovalId,
        result: &NotificationResult,
        at_ms: u64,
        audit: &[AuditEntry],
    ) -> Result<(), ForgeError>;

    /// Every attempt recorded for the approval, oldest first.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be read.
    async fn notifications(
        &self,
        approval: &ApprovalId,
    ) -> Result<Vec<NotificationResult>, ForgeError>;

    /// Appends to the audit log (never updated, never deleted); returns the entry's sequence
    /// number.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be written.
    async fn append_audit(&self, entry: &AuditEntry) -> Result<u64, ForgeError>;

    /// The task's audit log, in order.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be read.
    async fn audit(&self, task: &TaskId) -> Result<Vec<AuditEntry>, ForgeError>;
}
