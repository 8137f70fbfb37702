//! The runs this server started: each one's events as they arrive, kept in memory so any
//! number of subscribers can read them from any point, in order, while the run goes on.
//!
//! One pump task per run reads the [`RunHandle`] and appends; subscribers never slow it
//! (they read the shared log at their own pace and wait on a `watch` for more).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use forge_app::{RunCanceller, RunHandle};
use forge_domain::{AgentEvent, ExecutionResult};
use tokio::sync::watch;

/// One event of a run: its sequence number (1-based, as its line in `events.jsonl`), its
/// kind and its canonical JSON.
#[derive(Debug, Clone)]
pub struct Frame {
    pub seq: u64,
    pub event: Arc<AgentEvent>,
    pub json: Arc<str>,
}

impl Frame {
    pub fn new(seq: u64, event: AgentEvent) -> Self {
        let json = serde_json::to_string(&event).unwrap_or_else(|_| "{}".into());
        Self {
            seq,
            event: Arc::new(event),
            json: json.into(),
        }
    }
}

/// What a subscriber reads: events, then the result once.
#[derive(Debug, Clone)]
pub enum Item {
    Event(Frame),
    Result(Arc<ExecutionResult>),
}

#[derive(Default)]
struct Log {
    frames: Vec<Frame>,
    result: Option<Arc<ExecutionResult>>,
}

/// A run started through the API.
pub struct LiveRun {
    pub run_id: String,
    pub workdir: PathBuf,
    pub provider: String,
    pub started_at_ms: u64,
    cancel_on_disconnect: bool,
    canceller: RunCanceller,
    log: Mutex<Log>,
    changed: watch::Sender<u64>,
    subscribers: AtomicUsize,
}

impl LiveRun {
    pub fn new(
        handle: &RunHandle,
        workdir: PathBuf,
        provider: String,
        started_at_ms: u64,
        cancel_on_disconnect: bool,
    ) -> Arc<Self> {
        Arc::new(Self {
            run_id: handle.run_id().as_str().to_owned(),
            workdir,
            provider,
            started_at_ms,
            cancel_on_disconnect,
            canceller: handle.canceller(),
            log: Mutex::new(Log::default()),
            changed: watch::channel(0).0,
            subscribers: AtomicUsize::new(0),
        })
    }

    fn log(&self) -> MutexGuard<'_, Log> {
        // A panic while holding the lock leaves only whole frames behind: keep going.
        self.log.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends an event (the pump calls this) and wakes the subscribers.
    pub fn push(&self, event: AgentEvent) -> Frame {
        let frame = {
            let mut log = self.log();
            let frame = Frame::new(log.frames.len() as u64 + 1, event);
            log.frames.push(frame.clone());
            frame
        };
        self.changed.send_modify(|n| *n += 1);
        frame
    }

    /// Records the result: subscribers read it after the last event, then end.
    pub fn finish(&self, result: ExecutionResult) {
        self.log().result = Some(Arc::new(result));
        self.changed.send_modify(|n| *n += 1);
    }

    pub fn result(&self) -> Option<Arc<ExecutionResult>> {
        self.log().result.clone()
    }

    pub fn event_count(&self) -> u64 {
        self.log().frames.len() as u64
    }

    pub fn is_finished(&self) -> bool {
        self.log().result.is_some()
    }

    pub fn subscribers(&self) -> usize {
        self.subscribers.load(Ordering::Relaxed)
    }

    /// Cancels through the kill ladder; false when the run had already ended.
    pub fn cancel(&self) -> bool {
        if self.is_finished() {
            return false;
        }
        self.canceller.cancel();
        true
    }

    /// A reader of the events after sequence `after` (0: from the first).
    pub fn subscribe(self: &Arc<Self>, after: u64) -> Subscription {
        self.subscribers.fetch_add(1, Ordering::Relaxed);
        Subscription {
            run: Arc::clone(self),
            next: usize::try_from(after).unwrap_or(usize::MAX),
            result_sent: false,
            changed: self.changed.subscribe(),
        }
    }
}

/// Reads one run's events in order; dropping it is the subscriber going away.
pub struct Subscription {
    run: Arc<LiveRun>,
    next: usize,
    result_sent: bool,
    changed: watch::Receiver<u64>,
}

impl Subscription {
    /// The next event, then the result, then `None`.
    pub async fn next(&mut self) -> Option<Item> {
        loop {
            // Marking the version seen before looking: a push after the look wakes us.
            self.changed.borrow_and_update();
            {
                let log = self.run.log();
                if let Some(frame) = log.frames.get(self.next) {
                    self.next += 1;
                    return Some(Item::Event(frame.clone()));
                }
                if let Some(result) = &log.result {
                    if self.result_sent {
                        return None;
                    }
                    self.result_sent = true;
                    return Some(Item::Result(Arc::clone(result)));
                }
            }
            if self.changed.changed().await.is_err() {
                return None;
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let left = self.run.subscribers.fetch_sub(1, Ordering::Relaxed) - 1;
        if left == 0 && self.run.cancel_on_disconnect && !self.result_sent {
            self.run.cancel();
        }
    }
}

/// Every run this server started, by run id.
#[derive(Default)]
pub struct RunTable {
    runs: Mutex<HashMap<String, Arc<LiveRun>>>,
}

impl RunTable {
    fn runs(&self) -> MutexGuard<'_, HashMap<String, Arc<LiveRun>>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn insert(&self, run: Arc<LiveRun>) {
        self.runs().insert(run.run_id.clone(), run);
    }

    pub fn get(&self, run_id: &str) -> Option<Arc<LiveRun>> {
        self.runs().get(run_id).cloned()
    }

    pub fn all(&self) -> Vec<Arc<LiveRun>> {
        let mut runs: Vec<_> = self.runs().values().cloned().collect();
        runs.sort_by_key(|r| std::cmp::Reverse(r.started_at_ms));
        runs
    }

    /// Open subscriptions over all runs.
    pub fn subscribers(&self) -> usize {
        self.runs().values().map(|r| r.subscribers()).sum()
    }
}

/// Reads the run to its end into `run` (and hands each event to `tap`), then records the
/// result. The run never waits on a subscriber: the log is memory.
pub async fn pump(mut handle: RunHandle, run: Arc<LiveRun>, mut tap: impl FnMut(&Frame) + Send) {
    while let Some(event) = handle.next_event().await {
        let frame = run.push(event);
        tap(&frame);
    }
    run.finish(handle.result().await);
}
