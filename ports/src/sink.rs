//! The event sink: a copy of every canonical event of a run, sent to a backend that records
//! runs. Delivery is best effort by contract: it never fails or slows the run.

use forge_domain::{AgentEvent, RunId, SessionId, SinkDelivery};

/// Where runs' events are copied to.
pub trait EventSink: Send + Sync {
    /// Starts delivery for one run. Never fails: a sink that cannot deliver counts drops.
    fn open(&self, run_id: &RunId) -> Box<dyn RunSink>;

    /// Deliveries over every run of this sink so far, for a server's `/metrics`; none by
    /// default.
    fn totals(&self) -> SinkDelivery {
        SinkDelivery::default()
    }
}

/// The delivery of one run's events, in order.
pub trait RunSink: Send {
    /// Queues `event` without waiting. When the queue is full the oldest queued event is
    /// dropped (and counted). `session_id` is the run's conversation id once known.
    fn push(&mut self, event: &AgentEvent, session_id: Option<&SessionId>, timestamp_ms: u64);

    /// The delivery so far; events still queued go on being sent in the background.
    /// Returns at once: the run does not wait for its sink.
    fn close(self: Box<Self>) -> SinkDelivery;
}
