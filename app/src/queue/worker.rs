//! [`Worker`]: claim, run under a renewed lease, record — with up to `concurrency` tasks at
//! once, until told to stop.
//!
//! The lease is the only proof that a task is this worker's: when a heartbeat says it is
//! lost, or no heartbeat has succeeded for longer than the lease (the database is gone and
//! another worker may take the task over when it is back), the run is stopped at once, so
//! a task never runs on two workers. A cancel seen by the heartbeat stops the run the same
//! way and records `cancelled`. Results are recorded with retries until the database
//! answers, so a restart of the database loses nothing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_domain::delivery::{ApprovalId, ApprovalState};
use forge_domain::queue::{
    Finish, Heartbeat, QueueDelivery, QueueState, QueuedTask, pushed_delivery, state_of_exit,
};
use forge_domain::queue_approval::{ApprovalOutcome, QueueApproval};
use forge_domain::task::TaskId;
use forge_ports::TaskQueue;
use futures::future::BoxFuture;
use tokio::sync::{Notify, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

/// The most events stored in one write.
const EVENT_BATCH: usize = 256;

/// Runs one claimed task to its end (the guarded pipeline, in the binary: `task run`).
#[async_trait]
pub trait QueuedTaskRunner: Send + Sync {
    /// Runs `task`, sending its progress (stages) to `events` as it goes — the worker
    /// stores them with the task, in order; when `stop` fires, ends it promptly (the kill
    /// ladder) and returns. Errors are in the returned [`RunEnd`], never lost.
    async fn run(
        &self,
        task: &QueuedTask,
        stop: CancellationToken,
        events: mpsc::UnboundedSender<TaskEvent>,
    ) -> RunEnd;

    /// Carries out the decision taken on `approval` (a change of `task` this worker holds):
    /// commits (and pushes when the task asked to) or removes it. Errors are in the
    /// returned outcome, never lost. A runner that cannot says so in the outcome.
    async fn carry_out(&self, approval: &QueueApproval, task: &QueuedTask) -> ApprovalOutcome {
        let _ = task;
        ApprovalOutcome::Failed {
            error: format!(
                "this worker cannot carry out approvals ({} stays held)",
                approval.approval_id
            ),
        }
    }
}

/// One event of a running task, stored with it (`kind`, e.g. `stage`, and its data).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEvent {
    pub kind: String,
    pub data: serde_json::Value,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunEnd {
    pub exit_code: Option<i32>,
    pub report: Option<serde_json::Value>,
    pub error: Option<String>,
}

/// Why the worker stopped a run before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// `task cancel` from any machine.
    Cancelled,
    /// The lease is someone else's now, or could not be renewed in time.
    LeaseLost,
    /// The worker is shutting down past its deadline: the task goes back to the queue.
    HandedBack,
}

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// This worker's name in the queue (`worker` of the tasks it holds).
    pub name: String,
    /// The key the changes it holds for approval are filed under: stable across restarts
    /// on one machine (a name with a pid in it is not), so a decision taken while the
    /// worker was down is carried out when it is back. `name` unless set.
    pub holder: String,
    pub concurrency: usize,
    pub lease_ms: u64,
    /// How often the lease is renewed and a cancel looked for.
    pub heartbeat_ms: u64,
    /// The longest an idle worker waits before looking again (leases that ran out wake
    /// nobody).
    pub idle_ms: u64,
    /// After a stop request, how long running tasks may go on before they are handed back.
    pub drain: Duration,
}

impl WorkerConfig {
    /// Defaults for `name`: one task, a 30 s lease renewed every 500 ms (so a cancel is
    /// seen within half a second), idle look every second, 60 s to drain.
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            holder: name.clone(),
            name,
            concurrency: 1,
            lease_ms: 30_000,
            heartbeat_ms: 500,
            idle_ms: 1_000,
            drain: Duration::from_secs(60),
        }
    }
}

/// What the worker tells its caller as it goes (the CLI prints these lines).
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerEvent {
    Claimed {
        task: TaskId,
        attempt: u32,
    },
    Finished {
        task: TaskId,
        state: QueueState,
    },
    Stopped {
        task: TaskId,
        reason: StopReason,
    },
    QueueError {
        doing: &'static str,
        error: String,
    },
    /// A decision on a held change was carried out (`error`: it failed, the change stays).
    ApprovalCarriedOut {
        approval: ApprovalId,
        state: ApprovalState,
        error: Option<String>,
    },
}

/// What a worker did by the time it stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerSummary {
    pub claimed: u32,
    pub finished: u32,
    pub handed_back: u32,
    pub lost: u32,
}

pub struct Worker {
    pub(super) queue: Arc<dyn TaskQueue>,
    pub(super) runner: Arc<dyn QueuedTaskRunner>,
    pub(super) config: WorkerConfig,
    events: Option<mpsc::UnboundedSender<WorkerEvent>>,
}

/// Backoff between failed queue calls: 100 ms doubling to 5 s.
pub(super) fn backoff(failures: u32) -> Duration {
    Duration::from_millis(100u64.saturating_mul(1 << failures.min(6)).min(5_000))
}

impl Worker {
    pub fn new(
        queue: Arc<dyn TaskQueue>,
        runner: Arc<dyn QueuedTaskRunner>,
        config: WorkerConfig,
    ) -> Self {
        Self {
            queue,
            runner,
            config,
            events: None,
        }
    }

    /// Where progress events go.
    #[must_use]
    pub fn events(mut self, tx: mpsc::UnboundedSender<WorkerEvent>) -> Self {
        self.events = Some(tx);
        self
    }

    /// Claims and runs tasks until `stop` fires; then claims no more, lets running tasks
    /// finish within the drain deadline and hands the rest back.
    pub async fn run(self, stop: CancellationToken) -> WorkerSummary {
        let this = Arc::new(self);
        let slots = Arc::new(Semaphore::new(this.config.concurrency.max(1)));
        let hand_back = CancellationToken::new();
        let mut running = tokio::task::JoinSet::new();
        let mut summary = WorkerSummary::default();
        let mut failures = 0u32;
        // Decisions on held changes are carried out alongside, woken with the worker.
        let wake = Arc::new(Notify::new());
        let decisions =
            tokio::spawn(Arc::clone(&this).carry_out_decisions(stop.clone(), Arc::clone(&wake)));
        loop {
            let permit = tokio::select! {
                () = stop.cancelled() => break,
                permit = Arc::clone(&slots).acquire_owned() => match permit {
                    Ok(p) => p,
                    Err(_) => break,
                },
            };
            // Collect what finished meanwhile.
            while let Some(done) = running.try_join_next() {
                add(&mut summary, done.ok());
            }
            match this
                .queue
                .claim(&this.config.name, this.config.lease_ms)
                .await
            {
                Ok(Some(task)) => {
                    failures = 0;
                    summary.claimed += 1;
                    this.emit(WorkerEvent::Claimed {
                        task: task.task_id.clone(),
                        attempt: task.attempts,
                    });
                    let (this, hand_back) = (Arc::clone(&this), hand_back.clone());
                    running.spawn(async move {
                        let outcome = this.run_one(task, hand_back).await;
                        drop(permit);
                        outcome
                    });
                }
                Ok(None) => {
                    failures = 0;
                    drop(permit);
                    tokio::select! {
                        () = stop.cancelled() => break,
                        waited = this.queue.wait_for_work(this.config.idle_ms) => {
                            wake.notify_one();
                            if let Err(e) = waited {
                                this.queue_error("waiting for work", &e);
                                failures += 1;
                                sleep_or_stop(backoff(failures), &stop).await;
                            }
                        }
                    }
                }
                Err(e) => {
                    drop(permit);
                    this.queue_error("claiming", &e);
                    failures += 1;
                    sleep_or_stop(backoff(failures), &stop).await;
                }
            }
        }
        // Stopping: running tasks get the drain deadline, then go back to the queue.
        let deadline = tokio::time::sleep(this.config.drain);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                done = running.join_next() => match done {
                    Some(done) => add(&mut summary, done.ok()),
                    None => break,
                },
                () = &mut deadline, if !hand_back.is_cancelled() => hand_back.cancel(),
            }
        }
        let _ = decisions.await;
        summary
    }

    pub(super) fn emit(&self, event: WorkerEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    pub(super) fn queue_error(&self, doing: &'static str, e: &ForgeError) {
        self.emit(WorkerEvent::QueueError {
            doing,
            error: e.to_string(),
        });
    }

    /// Runs one claimed task under its lease; what became of it.
    async fn run_one(&self, task: QueuedTask, hand_back: CancellationToken) -> Ended {
        let id = task.task_id.clone();
        let push = super::approvals::push_asked(&task);
        let name = self.config.name.clone();
        let stop = CancellationToken::new();
        // The run's events are stored in order by one task of their own, so a slow queue
        // never holds the run up; it ends when the run drops its sender.
        // (The attempt's first event, `claimed`, was stored by the claim itself.)
        let (events_tx, mut events_rx) = mpsc::unbounded_channel::<TaskEvent>();
        let store_events = {
            let (queue, id, tx) = (Arc::clone(&self.queue), id.clone(), self.events.clone());
            tokio::spawn(async move {
                // What queued up while the last write went on is stored in one write: an
                // agent streaming fast costs a commit per burst, not per event.
                let mut batch = Vec::new();
                while events_rx.recv_many(&mut batch, EVENT_BATCH).await > 0 {
                    let events: Vec<(String, serde_json::Value)> =
                        batch.drain(..).map(|e| (e.kind, e.data)).collect();
                    if let Err(e) = queue.append_events(&id, &events).await {
                        if let Some(tx) = &tx {
                            let _ = tx.send(WorkerEvent::QueueError {
                                doing: "storing events",
                                error: e.to_string(),
                            });
                        }
                    }
                }
            })
        };
        let run = {
            let (runner, stop) = (Arc::clone(&self.runner), stop.clone());
            tokio::spawn(async move { runner.run(&task, stop, events_tx).await })
        };
        tokio::pin!(run);
        let mut reason = None;
        let mut last_renewal = Instant::now();
        // The claim set the lease just now: the first renewal is one period away.
        let period = Duration::from_millis(self.config.heartbeat_ms);
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The renewal in flight, awaited beside the run: a run that ends while one is in
        // flight is seen at once (its answer is then not needed: a finish checks the
        // holder itself).
        let mut renewal: Option<BoxFuture<'_, Result<Heartbeat, ForgeError>>> = None;
        let end = loop {
            tokio::select! {
                end = &mut run => break end.unwrap_or_else(|e| RunEnd {
                    error: Some(format!("the run panicked: {e}")),
                    ..RunEnd::default()
                }),
                () = hand_back.cancelled(), if reason.is_none() => {
                    reason = Some(StopReason::HandedBack);
                    stop.cancel();
                }
                _ = tick.tick(), if reason.is_none() && renewal.is_none() => {
                    renewal = Some(self.queue.heartbeat(&id, &name, self.config.lease_ms));
                }
                renewed = async {
                    match renewal.as_mut() {
                        Some(r) => r.await,
                        None => std::future::pending().await,
                    }
                }, if reason.is_none() && renewal.is_some() => {
                    renewal = None;
                    match renewed {
                        Ok(Heartbeat::Held) => last_renewal = Instant::now(),
                        Ok(Heartbeat::CancelRequested) => {
                            reason = Some(StopReason::Cancelled);
                            stop.cancel();
                        }
                        Ok(Heartbeat::Lost) => {
                            reason = Some(StopReason::LeaseLost);
                            stop.cancel();
                        }
                        Err(e) => {
                            self.queue_error("renewing a lease", &e);
                            // Past the lease another worker may hold the task: stop before
                            // that can happen (one heartbeat of margin).
                            let margin = self.config.lease_ms.saturating_sub(self.config.heartbeat_ms);
                            if last_renewal.elapsed() >= Duration::from_millis(margin) {
                                reason = Some(StopReason::LeaseLost);
                                stop.cancel();
                            }
                        }
                    }
                }
            }
        };
        // A renewal still in flight is not needed any more.
        drop(renewal);
        // Every event of the run is stored before the task's end is.
        let _ = store_events.await;
        if let Some(reason) = reason {
            self.emit(WorkerEvent::Stopped {
                task: id.clone(),
                reason,
            });
        }
        match reason {
            Some(StopReason::LeaseLost) => Ended::Lost,
            Some(StopReason::HandedBack) => {
                self.retry("handing a task back", || self.queue.release(&id, &name))
                    .await;
                Ended::HandedBack
            }
            cancelled => {
                let mut state = state_of_exit(end.exit_code, cancelled.is_some());
                let mut error = end.error.clone().or_else(|| {
                    (state == QueueState::Cancelled).then(|| "cancelled by task cancel".to_owned())
                });
                if let Some(conflict) = self.record_delivery(&id, end.report.as_ref()).await {
                    state = QueueState::Failed;
                    error = Some(conflict);
                }
                if state == QueueState::Succeeded {
                    self.file_held_change(&id, push, end.report.as_ref()).await;
                }
                let finish = Finish {
                    state,
                    exit_code: end.exit_code,
                    error,
                    report: end.report,
                };
                // One statement records the result and its `finished` event.
                let recorded = self
                    .retry("recording a result", || {
                        self.queue.finish(&id, &name, &finish)
                    })
                    .await;
                if recorded {
                    self.emit(WorkerEvent::Finished { task: id, state });
                    Ended::Finished
                } else {
                    Ended::Lost
                }
            }
        }
    }

    /// Records the push the report names in the queue, where one delivery per task stands
    /// (retried until the database answers). A different commit recorded first means the
    /// task was delivered twice: said, so it cannot pass unseen.
    pub(super) async fn record_delivery(
        &self,
        id: &TaskId,
        report: Option<&serde_json::Value>,
    ) -> Option<String> {
        let (branch, commit) = report.and_then(pushed_delivery)?;
        let delivery = QueueDelivery {
            task_id: id.clone(),
            branch,
            commit,
            worker: self.config.name.clone(),
            at_ms: 0,
        };
        let mut failures = 0;
        let standing = loop {
            match self.queue.record_delivery(&delivery).await {
                Ok(standing) => break standing,
                Err(e @ ForgeError::InvalidRequest { .. }) => return Some(e.to_string()),
                Err(e) => {
                    self.queue_error("recording a delivery", &e);
                    failures += 1;
                    tokio::time::sleep(backoff(failures)).await;
                }
            }
        };
        (standing.commit != delivery.commit).then(|| {
            format!(
                "delivered twice: {} pushed {} on {}, but {} recorded {} first",
                delivery.worker, delivery.commit, delivery.branch, standing.worker, standing.commit
            )
        })
    }

    /// Retries `call` with backoff until the queue answers (a database restart is waited
    /// out); its answer.
    pub(super) async fn retry<'a, F, Fut>(&'a self, doing: &'static str, call: F) -> bool
    where
        F: Fn() -> Fut + 'a,
        Fut: std::future::Future<Output = Result<bool, ForgeError>> + 'a,
    {
        let mut failures = 0;
        loop {
            match call().await {
                Ok(done) => return done,
                Err(e) => {
                    self.queue_error(doing, &e);
                    failures += 1;
                    tokio::time::sleep(backoff(failures)).await;
                }
            }
        }
    }
}

enum Ended {
    Finished,
    HandedBack,
    Lost,
}

fn add(summary: &mut WorkerSummary, ended: Option<Ended>) {
    match ended {
        Some(Ended::Finished) => summary.finished += 1,
        Some(Ended::HandedBack) => summary.handed_back += 1,
        Some(Ended::Lost) | None => summary.lost += 1,
    }
}

async fn sleep_or_stop(pause: Duration, stop: &CancellationToken) {
    tokio::select! {
        () = tokio::time::sleep(pause) => {}
        () = stop.cancelled() => {}
    }
}
