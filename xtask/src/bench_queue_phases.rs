//! Where a task's queue overhead goes, for `cargo xtask bench --queue`: a [`TimedQueue`]
//! wraps each worker's queue and marks, per task, when the worker woke, claimed and
//! recorded the result; the agent marks its run; the bench marks the submit and when it
//! was told. [`Breakdown`] turns the marks into per-phase medians.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::ApprovalId;
use forge_domain::queue::{
    Finish, Heartbeat, QueueDelivery, QueueEvent, QueueSubmission, QueuedTask,
};
use forge_domain::queue_approval::{ApprovalOutcome, Decided, QueueApproval, QueueDecision};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;

/// The moments of one task's way through the queue.
#[derive(Debug, Clone, Copy, Default)]
pub struct Marks {
    pub submit_called: Option<Instant>,
    pub submit_returned: Option<Instant>,
    /// When the worker that claimed it came back from waiting for work.
    pub woke: Option<Instant>,
    pub claimed: Option<Instant>,
    pub run_started: Option<Instant>,
    pub run_ended: Option<Instant>,
    pub finish_recorded: Option<Instant>,
    /// When the bench heard of the end (the worker's `Finished` event).
    pub told: Option<Instant>,
}

/// Every task's marks, shared by the bench, the workers' queues and the agent.
#[derive(Debug, Clone, Default)]
pub struct Timeline(Arc<Mutex<HashMap<TaskId, Marks>>>);

impl Timeline {
    pub fn mark(&self, id: &TaskId, set: impl FnOnce(&mut Marks)) {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        set(all.entry(id.clone()).or_default());
    }

    pub fn marks(&self, id: &TaskId) -> Marks {
        let all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        all.get(id).copied().unwrap_or_default()
    }
}

/// A worker's queue that marks the wake-up, the claim and the finish of each task.
pub struct TimedQueue {
    inner: Arc<dyn TaskQueue>,
    timeline: Timeline,
    last_wake: Mutex<Option<Instant>>,
}

impl TimedQueue {
    pub fn new(inner: Arc<dyn TaskQueue>, timeline: Timeline) -> Self {
        Self {
            inner,
            timeline,
            last_wake: Mutex::new(None),
        }
    }
}

#[async_trait]
impl TaskQueue for TimedQueue {
    async fn submit(&self, task: &QueueSubmission) -> Result<QueuedTask, ForgeError> {
        self.inner.submit(task).await
    }

    async fn claim(&self, worker: &str, lease_ms: u64) -> Result<Option<QueuedTask>, ForgeError> {
        let claimed = self.inner.claim(worker, lease_ms).await;
        if let Ok(Some(task)) = &claimed {
            let now = Instant::now();
            let woke = *self
                .last_wake
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.timeline.mark(&task.task_id, |m| {
                m.woke = woke;
                m.claimed = Some(now);
            });
        }
        claimed
    }

    async fn heartbeat(
        &self,
        id: &TaskId,
        worker: &str,
        lease_ms: u64,
    ) -> Result<Heartbeat, ForgeError> {
        self.inner.heartbeat(id, worker, lease_ms).await
    }

    async fn finish(&self, id: &TaskId, worker: &str, finish: &Finish) -> Result<bool, ForgeError> {
        let recorded = self.inner.finish(id, worker, finish).await;
        let now = Instant::now();
        self.timeline.mark(id, |m| m.finish_recorded = Some(now));
        recorded
    }

    async fn release(&self, id: &TaskId, worker: &str) -> Result<bool, ForgeError> {
        self.inner.release(id, worker).await
    }

    async fn cancel(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError> {
        self.inner.cancel(id).await
    }

    async fn task(&self, id: &TaskId) -> Result<Option<QueuedTask>, ForgeError> {
        self.inner.task(id).await
    }

    async fn tasks(&self, limit: u32) -> Result<Vec<QueuedTask>, ForgeError> {
        self.inner.tasks(limit).await
    }

    async fn append_event(
        &self,
        id: &TaskId,
        kind: &str,
        data: &serde_json::Value,
    ) -> Result<u64, ForgeError> {
        self.inner.append_event(id, kind, data).await
    }

    async fn append_events(
        &self,
        id: &TaskId,
        events: &[(String, serde_json::Value)],
    ) -> Result<u64, ForgeError> {
        self.inner.append_events(id, events).await
    }

    async fn events(&self, id: &TaskId, after: u64) -> Result<Vec<QueueEvent>, ForgeError> {
        self.inner.events(id, after).await
    }

    async fn record_delivery(&self, delivery: &QueueDelivery) -> Result<QueueDelivery, ForgeError> {
        self.inner.record_delivery(delivery).await
    }

    async fn wait_for_events(&self, id: &TaskId, timeout_ms: u64) -> Result<(), ForgeError> {
        self.inner.wait_for_events(id, timeout_ms).await
    }

    async fn wait_for_changes(&self, seen: u64, timeout_ms: u64) -> Result<u64, ForgeError> {
        self.inner.wait_for_changes(seen, timeout_ms).await
    }

    fn approval_store(&self) -> &dyn forge_ports::QueueApprovals {
        self.inner.approval_store()
    }

    async fn record_approval(&self, approval: &QueueApproval) -> Result<QueueApproval, ForgeError> {
        self.inner.record_approval(approval).await
    }

    async fn approvals(&self, all: bool) -> Result<Vec<QueueApproval>, ForgeError> {
        self.inner.approvals(all).await
    }

    async fn approval(&self, id: &ApprovalId) -> Result<Option<QueueApproval>, ForgeError> {
        self.inner.approval(id).await
    }

    async fn decide_approval(
        &self,
        id: &ApprovalId,
        decision: &QueueDecision,
    ) -> Result<Option<Decided>, ForgeError> {
        self.inner.decide_approval(id, decision).await
    }

    async fn decided_approvals(&self, holder: &str) -> Result<Vec<QueueApproval>, ForgeError> {
        self.inner.decided_approvals(holder).await
    }

    async fn record_approval_outcome(
        &self,
        id: &ApprovalId,
        outcome: &ApprovalOutcome,
    ) -> Result<bool, ForgeError> {
        self.inner.record_approval_outcome(id, outcome).await
    }

    async fn wait_for_work(&self, timeout_ms: u64) -> Result<(), ForgeError> {
        let waited = self.inner.wait_for_work(timeout_ms).await;
        *self
            .last_wake
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        waited
    }
}

/// The phases of the overhead, in order; their medians (ms) over the probed tasks.
pub const PHASES: [&str; 6] = [
    "submit (the call, one durable commit)",
    "submit returned -> worker woken (NOTIFY)",
    "woken -> claimed (the claim, one durable commit)",
    "claimed -> agent started",
    "agent ended -> result recorded (durable)",
    "result recorded -> caller told",
];

/// Per-phase samples (ms) of the probed tasks.
#[derive(Debug, Default)]
pub struct Breakdown {
    samples: [Vec<f64>; 6],
    /// Per task: the phases added up (submit called -> caller told, less the agent's run).
    totals: Vec<f64>,
}

fn ms(from: Option<Instant>, to: Option<Instant>) -> Option<f64> {
    let (from, to) = (from?, to?);
    // Signed: the NOTIFY may reach the worker before the submit's answer reaches the bench.
    Some(if to >= from {
        to.duration_since(from).as_secs_f64() * 1000.0
    } else {
        -(from.duration_since(to).as_secs_f64() * 1000.0)
    })
}

impl Breakdown {
    /// Adds one task's phases; `false` when a mark is missing (nothing added).
    pub fn add(&mut self, m: &Marks) -> bool {
        let phases = [
            ms(m.submit_called, m.submit_returned),
            ms(m.submit_returned, m.woke),
            ms(m.woke, m.claimed),
            ms(m.claimed, m.run_started),
            ms(m.run_ended, m.finish_recorded),
            ms(m.finish_recorded, m.told),
        ];
        if phases.iter().any(Option::is_none) {
            return false;
        }
        let mut total = 0.0;
        for (samples, value) in self.samples.iter_mut().zip(phases.into_iter().flatten()) {
            samples.push(value);
            total += value;
        }
        self.totals.push(total);
        true
    }

    /// The per-phase medians, in [`PHASES`] order.
    pub fn medians(&mut self) -> Vec<f64> {
        self.samples
            .iter_mut()
            .map(|s| crate::bench_queue::median(s))
            .collect()
    }

    /// The median of the per-task totals (the medians of the phases need not add up to it).
    pub fn total(&mut self) -> f64 {
        crate::bench_queue::median(&mut self.totals)
    }
}
