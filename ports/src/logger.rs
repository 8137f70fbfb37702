//! Diagnostics for people: what a run did, at what level.

use forge_domain::{AgentEvent, ExecutionResult, ProviderId, RunId};

pub trait Logger: Send + Sync {
    /// Opens the log scope of one run (a span carrying run id and provider).
    fn run(&self, run_id: &RunId, provider: &ProviderId) -> Box<dyn RunLogger>;
    /// A message outside any run.
    fn warn(&self, message: &str);
}

/// The log of one run. Messages and events are redacted by the caller.
pub trait RunLogger: Send + Sync {
    fn info(&self, message: &str);
    fn warn(&self, message: &str);
    fn event(&self, event: &AgentEvent);
    fn finished(&self, result: &ExecutionResult);
}
