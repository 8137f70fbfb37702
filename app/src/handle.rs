//! A streaming run: live events, cancel, and the final result.

use std::pin::Pin;
use std::task::{Context, Poll};

use forge_domain::{AgentEvent, ExecutionResult, ForgeError, ProviderId, RunId};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_stream::Stream;
use tokio_util::sync::CancellationToken;

/// Stops a run from anywhere (a signal handler, another task). Cloneable.
#[derive(Clone, Debug)]
pub struct RunCanceller {
    pub(crate) cancel: CancellationToken,
    pub(crate) kill: CancellationToken,
}

impl RunCanceller {
    pub(crate) fn new() -> Self {
        Self {
            cancel: CancellationToken::new(),
            kill: CancellationToken::new(),
        }
    }

    /// Cancels the run through the kill ladder (SIGINT, grace, SIGTERM, grace, SIGKILL).
    /// Everything received so far is kept; the result says cancelled.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Cancels and kills the process group at once (a second Ctrl-C).
    pub fn kill_now(&self) {
        self.cancel.cancel();
        self.kill.cancel();
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// A run in progress. Read events with [`RunHandle::next_event`] (or as a `Stream`), then
/// take the result with [`RunHandle::result`]. Dropping the handle does not stop the run;
/// call [`RunHandle::cancel`] for that.
pub struct RunHandle {
    pub(crate) run_id: RunId,
    pub(crate) provider: ProviderId,
    pub(crate) events: mpsc::Receiver<AgentEvent>,
    pub(crate) canceller: RunCanceller,
    pub(crate) task: JoinHandle<ExecutionResult>,
}

impl RunHandle {
    pub fn run_id(&self) -> &RunId {
        &self.run_id
    }

    pub fn canceller(&self) -> RunCanceller {
        self.canceller.clone()
    }

    pub fn cancel(&self) {
        self.canceller.cancel();
    }

    /// The next canonical event; `None` once the run has ended and every event was read.
    pub async fn next_event(&mut self) -> Option<AgentEvent> {
        self.events.recv().await
    }

    /// Waits for the final result. Events not read yet are dropped (they are in the
    /// artifact bundle's `events.jsonl` and in the result's raw events).
    pub async fn result(self) -> ExecutionResult {
        let RunHandle {
            events,
            task,
            provider,
            run_id,
            ..
        } = self;
        // Closing our end first: the run never blocks on a reader that stopped reading.
        drop(events);
        match task.await {
            Ok(result) => result,
            Err(join_error) => {
                let mut result =
                    ExecutionResult::empty(provider, forge_domain::ExecutionStatus::Error);
                result.metadata.run_id = Some(run_id);
                result
                    .errors
                    .push(ForgeError::io("run task failed", join_error));
                result
            }
        }
    }
}

impl Stream for RunHandle {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        self.events.poll_recv(cx)
    }
}
