//! forge-adapter-sink: the [`EventSink`] port over HTTP.
//!
//! Each canonical event of a run is POSTed as the seed's body `{session_id,
//! interaction_id, event_type, event_data, timestamp}` with `Authorization: Bearer`. Per
//! run: a bounded queue (the oldest event is dropped and counted when it is full) and one
//! delivery task sending in order, retrying a failed attempt with exponential backoff.
//! Nothing here can fail or slow a run: `push` never waits, `close` returns at once.

mod body;
mod delivery;

use std::sync::Arc;
use std::time::Duration;

use forge_domain::{RunId, SinkDelivery};
use forge_ports::{EventSink, RunSink};

pub use body::{event_body, rfc3339_ms};
use delivery::{Counters, RunQueue};

/// Tuning of the delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SinkConfig {
    /// Events queued per run before the oldest is dropped.
    pub queue: usize,
    /// Attempts after the first, for one event.
    pub retries: u32,
    /// Wait before the first retry; doubled for each further one.
    pub backoff: Duration,
    /// One attempt's limit.
    pub timeout: Duration,
}

impl Default for SinkConfig {
    fn default() -> Self {
        Self {
            queue: 1024,
            retries: 3,
            backoff: Duration::from_millis(200),
            timeout: Duration::from_secs(10),
        }
    }
}

/// POSTs events to `url`.
pub struct HttpEventSink {
    url: String,
    token: Option<String>,
    config: SinkConfig,
    client: reqwest::Client,
    totals: Arc<Counters>,
}

impl HttpEventSink {
    /// # Errors
    /// The message of an HTTP client that cannot be built, or a URL that is not http(s).
    pub fn new(url: &str, token: Option<String>, config: SinkConfig) -> Result<Self, String> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| format!("event sink URL {url:?}: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("event sink URL {url:?}: not http or https"));
        }
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| format!("event sink: {e}"))?;
        Ok(Self {
            url: url.to_owned(),
            token: token.filter(|t| !t.is_empty()),
            config,
            client,
            totals: Arc::new(Counters::default()),
        })
    }

    /// Deliveries over every run of this sink so far (`pending`: queued or in flight now).
    pub fn totals(&self) -> SinkDelivery {
        self.totals.snapshot()
    }
}

impl EventSink for HttpEventSink {
    fn open(&self, run_id: &RunId) -> Box<dyn RunSink> {
        Box::new(RunQueue::start(
            run_id.clone(),
            self.url.clone(),
            self.token.clone(),
            self.config,
            self.client.clone(),
            Arc::clone(&self.totals),
        ))
    }

    fn totals(&self) -> SinkDelivery {
        self.totals.snapshot()
    }
}
