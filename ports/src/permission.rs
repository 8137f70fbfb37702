//! Permission requests (issue 41): an agent's request to use a tool, kept until someone —
//! a person anywhere the store reaches, a rule, or the clock — decides it once.
//!
//! Implemented by both stores (SQLite on one machine, PostgreSQL across machines): a queued
//! task's request lives in the queue, so anyone with the queue answers it and the worker
//! waiting on it learns of the answer within a second. Nothing is kept in a process's
//! memory alone: a serve or worker that restarts finds its pending requests still there,
//! answered or expired, never forgotten.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::permission::{
    PermissionDecided, PermissionDecision, PermissionId, PermissionOwner, PermissionRequest,
    ToolRequest,
};

#[async_trait]
pub trait PermissionRequests: Send + Sync {
    /// Stores a new pending request; its time is the store's clock and it expires
    /// `timeout_ms` later. Returns it as stored.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when a request with that id exists, or it already
    /// carries a decision; [`ForgeError::Io`] when the store cannot be reached or written.
    async fn ask_permission(
        &self,
        request: &PermissionRequest,
        timeout_ms: u64,
    ) -> Result<PermissionRequest, ForgeError>;

    /// The request with that id, pending or decided; `None` when there is none.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or read.
    async fn permission(&self, id: &PermissionId) -> Result<Option<PermissionRequest>, ForgeError>;

    /// The pending requests, oldest first; only `owner`'s when given.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or read.
    async fn pending_permissions(
        &self,
        owner: Option<&PermissionOwner>,
    ) -> Result<Vec<PermissionRequest>, ForgeError>;

    /// Decides the request once across every process and machine: the first decision
    /// stands (one conditional write, its time the store's clock), a later one changes
    /// nothing and gets [`PermissionDecided::Already`]. A request past its expiry is
    /// denied by timeout first, so a late answer loses to it. `None` when there is no such
    /// request.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or written.
    async fn decide_permission(
        &self,
        id: &PermissionId,
        decision: &PermissionDecision,
    ) -> Result<Option<PermissionDecided>, ForgeError>;

    /// Denies by timeout every pending request past its expiry (the store's clock), each
    /// once; returns those it decided so.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or written.
    async fn expire_permissions(&self) -> Result<Vec<PermissionRequest>, ForgeError>;

    /// Decides every pending request of `owner` with `decision` (a cancelled run's, as
    /// cancelled); returns those it decided.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached or written.
    async fn close_permissions(
        &self,
        owner: &PermissionOwner,
        decision: &PermissionDecision,
    ) -> Result<Vec<PermissionRequest>, ForgeError>;

    /// Waits until the request is decided — by anyone, from anywhere, or by its expiry,
    /// which this call carries out when it comes — or `timeout_ms` passed; returns the
    /// request as it then is (`None`: there is no such request). A decision made in
    /// another process is seen within a second.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached (the caller retries).
    async fn wait_for_permission(
        &self,
        id: &PermissionId,
        timeout_ms: u64,
    ) -> Result<Option<PermissionRequest>, ForgeError>;
}

/// One run's way to ask before a tool is used (`--permission-mode ask`): the agent's
/// session hands it every permission request of the agent; rules decide first, else a
/// person, through the store, else the timeout. Built by the app for the run.
#[async_trait]
pub trait PermissionAsker: Send + Sync {
    /// Stores the request; when a rule decides it, decided at once. Returns it as stored.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be written (the session then denies: a
    /// request nobody can see is never allowed).
    async fn ask(&self, tool: ToolRequest) -> Result<PermissionRequest, ForgeError>;

    /// Waits until the request is decided — by anyone, or by its timeout — and returns it
    /// decided.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be reached for longer than the request's
    /// time (the session then denies).
    async fn answer(&self, id: &PermissionId) -> Result<PermissionRequest, ForgeError>;

    /// The run is over: its requests still pending are closed as cancelled.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the store cannot be written.
    async fn close(&self) -> Result<Vec<PermissionRequest>, ForgeError>;
}
