//! What a run's events pass on their way to the caller: the event sink (a copy of each
//! event to a backend) and the session callback (the conversation id, once, at first
//! sight). Neither can slow the run: the sink queues without waiting, and events are
//! drained here even when the caller stopped reading.

use std::sync::Arc;

use forge_domain::{AgentEvent, ExecutionResult, ForgeError, ProviderId, RunId, SessionId};
use forge_ports::{Clock, RunSink};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Called once per run with its session id, as soon as the CLI announces it.
pub type SessionCallback = Arc<dyn Fn(&RunId, &SessionId) + Send + Sync>;

pub(crate) struct Tap {
    pub run_id: RunId,
    pub sink: Option<Box<dyn RunSink>>,
    pub on_session: Option<SessionCallback>,
    pub clock: Arc<dyn Clock>,
    pub session: Option<SessionId>,
}

impl Tap {
    fn see(&mut self, event: &AgentEvent) {
        if self.session.is_none() {
            if let AgentEvent::SessionStarted { session_id, .. } = event {
                self.session = Some(session_id.clone());
                if let Some(callback) = &self.on_session {
                    callback(&self.run_id, session_id);
                }
            }
        }
        if let Some(sink) = &mut self.sink {
            sink.push(event, self.session.as_ref(), self.clock.now_ms());
        }
    }

    fn finish(self, result: &mut ExecutionResult) {
        if let Some(sink) = self.sink {
            result.metadata.event_sink = Some(sink.close());
        }
    }
}

/// Puts `tap` between a run's events and its reader; returns the reader's channel and a
/// task yielding the result with the sink's delivery in its metadata.
pub(crate) fn wrap(
    mut tap: Tap,
    mut inner: mpsc::Receiver<AgentEvent>,
    task: JoinHandle<ExecutionResult>,
    provider: ProviderId,
    buffer: usize,
) -> (mpsc::Receiver<AgentEvent>, JoinHandle<ExecutionResult>) {
    let (tx, rx) = mpsc::channel(buffer);
    let task = tokio::spawn(async move {
        let mut reader = Some(tx);
        while let Some(event) = inner.recv().await {
            tap.see(&event);
            if let Some(tx) = &reader {
                if tx.send(event).await.is_err() {
                    // The reader went away; the tap still sees the rest.
                    reader = None;
                }
            }
        }
        drop(reader);
        let mut result = match task.await {
            Ok(result) => result,
            Err(join_error) => {
                let mut result =
                    ExecutionResult::empty(provider, forge_domain::ExecutionStatus::Error);
                result.metadata.run_id = Some(tap.run_id.clone());
                result
                    .errors
                    .push(ForgeError::io("run task failed", join_error));
                result
            }
        };
        tap.finish(&mut result);
        result
    });
    (rx, task)
}
