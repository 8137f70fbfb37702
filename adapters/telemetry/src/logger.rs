//! [`TracingLogger`]: the [`Logger`] port over `tracing`, and [`NoopLogger`].

use forge_domain::{AgentEvent, ExecutionResult, ExecutionStatus, ProviderId, RunId};
use forge_ports::{Logger, RunLogger};
use tracing::Span;

/// Logs through whatever `tracing` subscriber the binary installed.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingLogger;

impl TracingLogger {
    pub fn new() -> Self {
        Self
    }
}

impl Logger for TracingLogger {
    fn run(&self, run_id: &RunId, provider: &ProviderId) -> Box<dyn RunLogger> {
        let span = tracing::info_span!("run", run_id = %run_id, provider = %provider);
        Box::new(TracingRunLogger { span })
    }

    fn warn(&self, message: &str) {
        tracing::warn!("{message}");
    }
}

/// One run's log: every record is emitted inside the run's span, so a subscriber shows
/// (or indexes, in JSON) the run id and provider on each line without the caller repeating
/// them. The span is entered per call rather than held, because a run's calls come from
/// whichever task the runtime happens to be on.
#[derive(Debug)]
pub struct TracingRunLogger {
    span: Span,
}

impl RunLogger for TracingRunLogger {
    fn info(&self, message: &str) {
        self.span.in_scope(|| tracing::info!("{message}"));
    }

    fn warn(&self, message: &str) {
        self.span.in_scope(|| tracing::warn!("{message}"));
    }

    fn event(&self, event: &AgentEvent) {
        // Only the kind: event bodies hold prompts, code and tool output, which belong in
        // the artifact bundle, not in operator logs.
        self.span
            .in_scope(|| tracing::debug!(kind = event.kind(), "agent event"));
    }

    fn finished(&self, result: &ExecutionResult) {
        let metadata = &result.metadata;
        self.span.in_scope(|| {
            tracing::info!(
                status = status_name(result.status),
                duration_ms = metadata.duration_ms,
                cost_usd = metadata.cost_usd,
                errors = result.errors.len(),
                "run finished"
            );
        });
    }
}

/// The serialised name of a status, for log fields and metric labels.
pub(crate) fn status_name(status: ExecutionStatus) -> &'static str {
    match status {
        ExecutionStatus::Success => "success",
        ExecutionStatus::Error => "error",
        ExecutionStatus::Partial => "partial",
    }
}

/// Logs nothing, for library users who want no diagnostics.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopLogger;

impl Logger for NoopLogger {
    fn run(&self, _run_id: &RunId, _provider: &ProviderId) -> Box<dyn RunLogger> {
        Box::new(NoopLogger)
    }

    fn warn(&self, _message: &str) {}
}

impl RunLogger for NoopLogger {
    fn info(&self, _message: &str) {}
    fn warn(&self, _message: &str) {}
    fn event(&self, _event: &AgentEvent) {}
    fn finished(&self, _result: &ExecutionResult) {}
}
