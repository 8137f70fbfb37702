//! One run's queue and its delivery task.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use forge_domain::{AgentEvent, RunId, SessionId, SinkDelivery};
use forge_ports::RunSink;
use serde_json::Value;
use tokio::sync::Notify;

use crate::SinkConfig;
use crate::body::event_body;

#[derive(Debug, Default)]
pub(crate) struct Counters {
    delivered: AtomicU64,
    retries: AtomicU64,
    dropped: AtomicU64,
    pending: AtomicU64,
}

impl Counters {
    pub(crate) fn snapshot(&self) -> SinkDelivery {
        SinkDelivery {
            delivered: self.delivered.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            pending: self.pending.load(Ordering::Relaxed),
        }
    }

    fn add(&self, field: fn(&Self) -> &AtomicU64, n: u64) {
        field(self).fetch_add(n, Ordering::Relaxed);
    }

    fn sub_pending(&self) {
        self.pending.fetch_sub(1, Ordering::Relaxed);
    }
}

struct Shared {
    queue: Mutex<VecDeque<Value>>,
    wake: Notify,
    closed: AtomicBool,
    /// This run's counts, and the sink's over all runs.
    run: Counters,
    totals: Arc<Counters>,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, VecDeque<Value>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn count(&self, field: fn(&Counters) -> &AtomicU64, n: u64) {
        self.run.add(field, n);
        self.totals.add(field, n);
    }

    fn done_one(&self) {
        self.run.sub_pending();
        self.totals.sub_pending();
    }
}

pub(crate) struct RunQueue {
    run_id: RunId,
    capacity: usize,
    shared: Arc<Shared>,
}

impl RunQueue {
    pub(crate) fn start(
        run_id: RunId,
        url: String,
        token: Option<String>,
        config: SinkConfig,
        client: reqwest::Client,
        totals: Arc<Counters>,
    ) -> Self {
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            wake: Notify::new(),
            closed: AtomicBool::new(false),
            run: Counters::default(),
            totals,
        });
        let worker = Worker {
            shared: Arc::clone(&shared),
            url,
            token,
            config,
            client,
        };
        tokio::spawn(worker.run());
        Self {
            run_id,
            capacity: config.queue.max(1),
            shared,
        }
    }
}

impl RunSink for RunQueue {
    fn push(&mut self, event: &AgentEvent, session_id: Option<&SessionId>, timestamp_ms: u64) {
        let body = event_body(&self.run_id, session_id, event, timestamp_ms);
        {
            let mut queue = self.shared.queue();
            if queue.len() >= self.capacity {
                queue.pop_front();
                self.shared.count(|c| &c.dropped, 1);
                self.shared.done_one();
            }
            queue.push_back(body);
        }
        self.shared.count(|c| &c.pending, 1);
        self.shared.wake.notify_one();
    }

    fn close(self: Box<Self>) -> SinkDelivery {
        self.shared.closed.store(true, Ordering::Relaxed);
        self.shared.wake.notify_one();
        self.shared.run.snapshot()
    }
}

struct Worker {
    shared: Arc<Shared>,
    url: String,
    token: Option<String>,
    config: SinkConfig,
    client: reqwest::Client,
}

impl Worker {
    async fn run(self) {
        loop {
            let next = self.shared.queue().pop_front();
            match next {
                Some(body) => {
                    self.deliver(&body).await;
                    self.shared.done_one();
                }
                None if self.shared.closed.load(Ordering::Relaxed) => return,
                None => self.shared.wake.notified().await,
            }
        }
    }

    /// Sends one event, retrying with backoff; counts it delivered or dropped.
    async fn deliver(&self, body: &Value) {
        let mut wait = self.config.backoff;
        for attempt in 0..=self.config.retries {
            if attempt > 0 {
                self.shared.count(|c| &c.retries, 1);
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2);
            }
            let mut request = self.client.post(&self.url).json(body);
            if let Some(token) = &self.token {
                request = request.bearer_auth(token);
            }
            match request.send().await {
                Ok(response) if response.status().is_success() => {
                    self.shared.count(|c| &c.delivered, 1);
                    return;
                }
                Ok(response) => tracing::debug!("event sink answered {}", response.status()),
                Err(e) => tracing::debug!("event sink: {e}"),
            }
        }
        tracing::warn!(
            "event sink: an event was dropped after {} retries",
            self.config.retries
        );
        self.shared.count(|c| &c.dropped, 1);
    }
}
