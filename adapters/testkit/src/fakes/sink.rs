//! An event sink that keeps what it was given, per run, in memory.

use std::sync::{Arc, Mutex};

use forge_domain::{AgentEvent, RunId, SessionId, SinkDelivery};
use forge_ports::{EventSink, RunSink};

/// One pushed event: (run, session known at the time, event, timestamp).
pub type Pushed = (RunId, Option<SessionId>, AgentEvent, u64);

/// Records every pushed event; reports each as delivered.
#[derive(Clone, Default)]
pub struct RecordingSink {
    pushed: Arc<Mutex<Vec<Pushed>>>,
    opened: Arc<Mutex<Vec<RunId>>>,
}

impl RecordingSink {
    pub fn pushed(&self) -> Vec<Pushed> {
        self.pushed.lock().map(|p| p.clone()).unwrap_or_default()
    }

    pub fn opened(&self) -> Vec<RunId> {
        self.opened.lock().map(|p| p.clone()).unwrap_or_default()
    }
}

impl EventSink for RecordingSink {
    fn open(&self, run_id: &RunId) -> Box<dyn RunSink> {
        if let Ok(mut opened) = self.opened.lock() {
            opened.push(run_id.clone());
        }
        Box::new(RecordingRun {
            run_id: run_id.clone(),
            pushed: Arc::clone(&self.pushed),
            count: 0,
        })
    }
}

struct RecordingRun {
    run_id: RunId,
    pushed: Arc<Mutex<Vec<Pushed>>>,
    count: u64,
}

impl RunSink for RecordingRun {
    fn push(&mut self, event: &AgentEvent, session_id: Option<&SessionId>, timestamp_ms: u64) {
        self.count += 1;
        if let Ok(mut pushed) = self.pushed.lock() {
            pushed.push((
                self.run_id.clone(),
                session_id.cloned(),
                event.clone(),
                timestamp_ms,
            ));
        }
    }

    fn close(self: Box<Self>) -> SinkDelivery {
        SinkDelivery {
            delivered: self.count,
            ..SinkDelivery::default()
        }
    }
}
