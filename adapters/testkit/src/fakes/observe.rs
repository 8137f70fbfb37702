//! Logger and metrics that record what they were told.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use forge_domain::{AgentEvent, ExecutionResult, ExecutionStatus, ProviderId, RunId};
use forge_ports::{Logger, Metrics, RunLogger};

/// Every log line as `"<run id>: <level> <message>"`.
#[derive(Debug, Default, Clone)]
pub struct RecordingLogger {
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl RecordingLogger {
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

struct RecordingRunLogger {
    prefix: String,
    lines: Arc<Mutex<Vec<String>>>,
}

impl RecordingRunLogger {
    fn push(&self, line: String) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(format!("{}: {line}", self.prefix));
        }
    }
}

impl Logger for RecordingLogger {
    fn run(&self, run_id: &RunId, provider: &ProviderId) -> Box<dyn RunLogger> {
        Box::new(RecordingRunLogger {
            prefix: format!("{run_id}/{provider}"),
            lines: Arc::clone(&self.lines),
        })
    }

    fn warn(&self, message: &str) {
        if let Ok(mut lines) = self.lines.lock() {
            lines.push(format!("warn {message}"));
        }
    }
}

impl RunLogger for RecordingRunLogger {
    fn info(&self, message: &str) {
        self.push(format!("info {message}"));
    }
    fn warn(&self, message: &str) {
        self.push(format!("warn {message}"));
    }
    fn event(&self, event: &AgentEvent) {
        self.push(format!("event {}", event.kind()));
    }
    fn finished(&self, result: &ExecutionResult) {
        self.push(format!("finished {:?}", result.status));
    }
}

/// Every metrics call as a line, e.g. `"finished claude Success timed_out=false cancelled=false"`.
#[derive(Debug, Default, Clone)]
pub struct RecordingMetrics {
    pub calls: Arc<Mutex<Vec<String>>>,
}

impl RecordingMetrics {
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|l| l.clone()).unwrap_or_default()
    }

    fn push(&self, line: String) {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(line);
        }
    }
}

impl Metrics for RecordingMetrics {
    fn execution_started(&self, provider: &ProviderId) {
        self.push(format!("started {provider}"));
    }

    fn execution_finished(
        &self,
        provider: &ProviderId,
        status: ExecutionStatus,
        _duration: Duration,
        timed_out: bool,
        cancelled: bool,
    ) {
        self.push(format!(
            "finished {provider} {status:?} timed_out={timed_out} cancelled={cancelled}"
        ));
    }

    fn parse_error(&self, provider: &ProviderId) {
        self.push(format!("parse_error {provider}"));
    }
}
