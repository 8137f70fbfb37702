//! The task queue: tasks submitted from any machine, claimed by workers on any machine.
//!
//! A worker claims a task with a lease it renews by heartbeat; a worker that dies loses the
//! lease when it runs out and another worker takes the task over. An implementation makes
//! each call one atomic step, so a task is never held by two workers at once: a claim takes
//! only a queued task or one whose lease ran out, and a heartbeat or finish by a worker
//! that no longer holds the task changes nothing.

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::ApprovalId;
use forge_domain::queue::{
    Finish, Heartbeat, QueueDelivery, QueueEvent, QueueSubmission, QueuedTask,
};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_domain::task::TaskId;

#[async_trait]
pub trait TaskQueue: Send + Sync {
    /// Adds a task in state `queued` and wakes idle workers.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when a task with that id exists; [`ForgeError::Io`]
    /// when the queue cannot be reached or written (the message names it).
    async fn submit(&self, task: &QueueSubmission) -> Result<QueuedTask, ForgeError>;

    /// Claims the oldest queued task (or one whose lease ran out) for `worker`, with a
    /// lease of `lease_ms`, counting an attempt; a task whose lease ran out after its last
    /// allowed attempt becomes `dead` instead. `None`: nothing to run. The attempt's first
    /// event, `claimed` (`{"worker", "attempt"}`), is stored in the same step (one commit,
    /// and no reader sees the attempt without it).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or written.
    async fn claim(&self, worker: &str, lease_ms: u64) -> Result<Option<QueuedTask>, ForgeError>;

    /// Renews `worker`'s lease on the task for `lease_ms` and says whether a cancel was
    /// asked for; [`Heartbeat::Lost`] when the worker no longer holds it.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or written.
    async fn heartbeat(
        &self,
        id: &TaskId,
        worker: &str,
        lease_ms: u64,
    ) -> Result<Heartbeat, ForgeError>;

    /// Records how the task ended, when `worker` still holds it, with its `finished` event
    /// (`{"state", "exit_code"}`) in the same step: one commit, and the event is stored
    /// exactly when the result is. `false` (nothing written) when it does not hold it.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when `finish.state` is not final; [`ForgeError::Io`]
    /// when the queue cannot be reached or written.
    async fn finish(&self, id: &TaskId, worker: &str, finish: &Finish) -> Result<bool, ForgeError>;

    /// Hands a task `worker` holds back to the queue (a worker stopping): `queued` again,
    /// the attempt not counted, idle workers woken. `false` when it does not hold it.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or written.
    async fn release(&self, id: &TaskId, worker: &str) -> Result<bool, ForgeError>;

    /// Cancels the task: a queued one becomes `cancelled` at once, a running one is marked
    /// so its worker's next heartbeat stops it. A final task is left as it is. `None` when
    /// there is no such task; else the task as it now stands.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or written.
    async fn cancel(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError>;

    /// The task, `None` when there is none.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or read.
    async fn task(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError>;

    /// The newest `limit` tasks, newest first.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or read.
    async fn tasks(&self, limit: u32) -> Result<Vec<QueuedTask>, ForgeError>;

    /// Appends one event to the task's stored events (and tells listeners); its `seq`, the
    /// task's own count: 1 for its first event, then 2, 3 … (never reused, never skipped).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such task; [`ForgeError::Io`] when
    /// the queue cannot be reached or written.
    async fn append_event(
        &self,
        id: &TaskId,
        kind: &str,
        data: &serde_json::Value,
    ) -> Result<u64, ForgeError>;

    /// Appends `events` (kind, data) in order, numbered as [`TaskQueue::append_event`]
    /// numbers them; the `seq` of the last, 0 when there are none. The adapters store them
    /// in one write (one commit for a burst of an agent's events); this default appends
    /// them one by one.
    ///
    /// # Errors
    /// As for [`TaskQueue::append_event`]; an adapter's one write stores none of them then.
    async fn append_events(
        &self,
        id: &TaskId,
        events: &[(String, serde_json::Value)],
    ) -> Result<u64, ForgeError> {
        let mut last = 0;
        for (kind, data) in events {
            last = self.append_event(id, kind, data).await?;
        }
        Ok(last)
    }

    /// The task's events with `seq` greater than `after`, in order.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or read.
    async fn events(&self, id: &TaskId, after: u64) -> Result<Vec<QueueEvent>, ForgeError>;

    /// Records the task's delivery once: the first record of a task stands (a unique key on
    /// the task), a later one changes nothing. Returns the record that stands, so a caller
    /// whose commit differs knows another delivery came first.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such task; [`ForgeError::Io`] when
    /// the queue cannot be reached or written.
    async fn record_delivery(&self, delivery: &QueueDelivery) -> Result<QueueDelivery, ForgeError>;

    /// Waits until an event of task `id` may have been appended, or `timeout_ms` passed,
    /// whichever is first (a reader streaming a task running on another machine).
    /// Spurious wake-ups are allowed; a caller reads [`TaskQueue::events`] after.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached (the caller reads and retries).
    async fn wait_for_events(&self, id: &TaskId, timeout_ms: u64) -> Result<(), ForgeError>;

    /// Waits until any task of the queue may have changed since the caller saw the change
    /// counter `seen` (a submit, claim, stored event, result, hand-back, cancel or approval
    /// decision, by any process), or `timeout_ms` passed; returns the counter to pass next
    /// time. A `seen` that is not the current counter (0 at first) returns at once, so a
    /// caller that reads after each return misses no change. Spurious wake-ups are allowed.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached (the caller backs off and retries).
    async fn wait_for_changes(&self, seen: u64, timeout_ms: u64) -> Result<u64, ForgeError>;

    /// Waits until work may be there (a task was submitted or handed back) or `timeout_ms`
    /// passed, whichever is first. Spurious wake-ups are allowed; a caller claims after.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached (the caller backs off and retries).
    async fn wait_for_work(&self, timeout_ms: u64) -> Result<(), ForgeError>;

    /// Where the queue keeps its approvals (beside its tasks): the adapter's
    /// [`QueueApprovals`], which the approval methods below hand on to.
    fn approval_store(&self) -> &dyn QueueApprovals;

    /// Records the approval a finished task's held change waits for (see
    /// [`QueueApprovals::record`]).
    ///
    /// # Errors
    /// As [`QueueApprovals::record`].
    async fn record_approval(&self, approval: &QueueApproval) -> Result<QueueApproval, ForgeError> {
        self.approval_store().record(approval).await
    }

    /// The approvals, oldest first: pending ones only unless `all`.
    ///
    /// # Errors
    /// As [`QueueApprovals::list`].
    async fn approvals(&self, all: bool) -> Result<Vec<QueueApproval>, ForgeError> {
        self.approval_store().list(all).await
    }

    /// One approval, `None` when there is none.
    ///
    /// # Errors
    /// As [`QueueApprovals::get`].
    async fn approval(&self, id: &ApprovalId) -> Result<Option<QueueApproval>, ForgeError> {
        self.approval_store().get(id).await
    }

    /// Decides a pending approval, once across every machine (see [`QueueApprovals::decide`]).
    ///
    /// # Errors
    /// As [`QueueApprovals::decide`].
    async fn decide_approval(
        &self,
        id: &ApprovalId,
        decision: &QueueDecision,
    ) -> Result<Option<Decided>, ForgeError> {
        self.approval_store().decide(id, decision).await
    }

    /// The approvals `holder` holds that are decided and not carried out yet.
    ///
    /// # Errors
    /// As [`QueueApprovals::decided`].
    async fn decided_approvals(&self, holder: &str) -> Result<Vec<QueueApproval>, ForgeError> {
        self.approval_store().decided(holder).await
    }

    /// Records what carrying the decision out came to, once.
    ///
    /// # Errors
    /// As [`QueueApprovals::record_outcome`].
    async fn record_approval_outcome(
        &self,
        id: &ApprovalId,
        outcome: &ApprovalOutcome,
    ) -> Result<bool, ForgeError> {
        self.approval_store().record_outcome(id, outcome).await
    }
}

/// The approvals a queue keeps beside its tasks, one per task: each adapter implements it
/// in its own module; [`TaskQueue`] reaches it through [`TaskQueue::approval_store`].
#[async_trait]
pub trait QueueApprovals: Send + Sync {
    /// Records the approval a finished task's held change waits for, one per task: while it
    /// is pending a later record replaces it (the task re-ran on another worker, whose
    /// change is the one that exists now); once decided, a record changes nothing. Returns
    /// the record that stands.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is no such task; [`ForgeError::Io`] when
    /// the queue cannot be reached or written.
    async fn record(&self, approval: &QueueApproval) -> Result<QueueApproval, ForgeError>;

    /// The approvals, oldest first: pending ones only unless `all`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or read.
    async fn list(&self, all: bool) -> Result<Vec<QueueApproval>, ForgeError>;

    /// One approval, `None` when there is none.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or read.
    async fn get(&self, id: &ApprovalId) -> Result<Option<QueueApproval>, ForgeError>;

    /// Decides a pending approval, once across every machine: the first decision stands
    /// (one conditional write), a later one changes nothing and gets
    /// [`Decided::Already`]. The holding worker is woken. `None` when there is no such
    /// approval.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or written.
    async fn decide(
        &self,
        id: &ApprovalId,
        decision: &QueueDecision,
    ) -> Result<Option<Decided>, ForgeError>;

    /// The approvals `holder` holds that are decided and not carried out yet, oldest
    /// first (what a worker has to do).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or read.
    async fn decided(&self, holder: &str) -> Result<Vec<QueueApproval>, ForgeError>;

    /// Records what carrying the decision out came to, once: `false` (nothing written)
    /// when the approval is pending, already has an outcome, or does not exist.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the queue cannot be reached or written.
    async fn record_outcome(
        &self,
        id: &ApprovalId,
        outcome: &ApprovalOutcome,
    ) -> Result<bool, ForgeError>;
}
