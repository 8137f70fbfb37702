//! Where a run's decoded events go: the bundle, the log, and the live stream if anyone
//! listens.

use forge_domain::{AgentEvent, ForgeError};
use forge_ports::{RunArtifacts, RunLogger};
use tokio::sync::mpsc;

pub(super) struct Delivery<'a> {
    pub bundle: Box<dyn RunArtifacts>,
    pub log: &'a dyn RunLogger,
    pub sink: Option<mpsc::Sender<AgentEvent>>,
    /// The first failed bundle write, kept for the result.
    pub artifact_error: Option<ForgeError>,
}

impl Delivery<'_> {
    /// Hands `batch` on and empties it.
    pub async fn deliver(&mut self, batch: &mut Vec<AgentEvent>) {
        if batch.is_empty() {
            return;
        }
        if let Err(e) = self.bundle.append_events(batch).await {
            self.artifact_error.get_or_insert(e);
        }
        for event in batch.iter() {
            self.log.event(event);
        }
        if let Some(sink) = &self.sink {
            for event in batch.drain(..) {
                if sink.send(event).await.is_err() {
                    // The reader went away; the run goes on and keeps its result.
                    self.sink = None;
                    break;
                }
            }
        }
        batch.clear();
    }
}
