//! A tool host that serves nothing but records its lifecycle: for use-case tests that the
//! runtime starts one server per run, hands its endpoint to the provider, stops it however
//! the run ends, and folds the record into the result.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use forge_domain::{ForgeError, ToolExecution};
use forge_ports::{McpEndpoint, ToolHost, ToolRun, ToolServer};

/// What happened to the servers of a [`RecordingToolHost`].
#[derive(Debug, Default)]
struct Lifecycle {
    started: Vec<String>,
    stopped: usize,
    dropped: usize,
}

/// Starts fake servers that answer `stop` with a fixed record.
#[derive(Debug, Clone, Default)]
pub struct RecordingToolHost {
    record: Vec<ToolExecution>,
    lifecycle: Arc<Mutex<Lifecycle>>,
}

impl RecordingToolHost {
    /// Servers whose `stop` returns `record`.
    pub fn returning(record: Vec<ToolExecution>) -> Self {
        Self {
            record,
            ..Self::default()
        }
    }

    /// Run ids the host served, in order.
    pub fn started(&self) -> Vec<String> {
        self.lifecycle
            .lock()
            .map(|l| l.started.clone())
            .unwrap_or_default()
    }

    /// Servers stopped through `stop`, and servers dropped without it.
    pub fn ended(&self) -> (usize, usize) {
        self.lifecycle
            .lock()
            .map(|l| (l.stopped, l.dropped))
            .unwrap_or_default()
    }
}

#[async_trait]
impl ToolHost for RecordingToolHost {
    async fn start(&self, run: ToolRun) -> Result<Box<dyn ToolServer>, ForgeError> {
        if let Ok(mut l) = self.lifecycle.lock() {
            l.started.push(run.run_id.as_str().to_owned());
        }
        Ok(Box::new(FakeServer {
            endpoint: McpEndpoint {
                url: "http://127.0.0.1:1/mcp".into(),
                bearer_token: "fake-token".into(),
                tool_names: run.tools.iter().map(|t| t.tool.name.to_string()).collect(),
            },
            record: self.record.clone(),
            lifecycle: Arc::clone(&self.lifecycle),
            stopped: false,
        }))
    }
}

struct FakeServer {
    endpoint: McpEndpoint,
    record: Vec<ToolExecution>,
    lifecycle: Arc<Mutex<Lifecycle>>,
    stopped: bool,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        if !self.stopped {
            if let Ok(mut l) = self.lifecycle.lock() {
                l.dropped += 1;
            }
        }
    }
}

#[async_trait]
impl ToolServer for FakeServer {
    fn endpoint(&self) -> &McpEndpoint {
        &self.endpoint
    }

    async fn stop(mut self: Box<Self>) -> Result<Vec<ToolExecution>, ForgeError> {
        self.stopped = true;
        if let Ok(mut l) = self.lifecycle.lock() {
            l.stopped += 1;
        }
        Ok(std::mem::take(&mut self.record))
    }
}
