//! What a run produced: one shape for every provider.
//!
//! **A result's figures are the run's own.** `usage` and `cost_usd` (and the `Completed`
//! event's) count what this one run consumed, also when it resumed a session, whoever ran
//! the session's earlier turns (forge or the CLI itself). Where a CLI reports the session's
//! running total instead, the adapter derives the run's share from what the CLI and its
//! session files say, or prices the run's own tokens, and never passes the running total
//! off as the run's. A running total the CLI gives is kept beside it, in
//! `session_usage` / `session_cost_usd`, set only for a resumed run. Everything that sums
//! or shows cost (footer, `--json`, `result.json`, `runs list`, metrics, task pipeline,
//! loop) reads the run's figures.

use serde::{Deserialize, Serialize};

use crate::error::ForgeError;
use crate::ids::{ProviderId, RunId, SessionId};
use crate::orphan::EndedOrphan;
use crate::rate_limit::RateLimitWait;
use crate::raw::RawJson;
use crate::tool::ToolCall;
use crate::usage::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    /// The CLI said it succeeded and exited 0.
    Success,
    /// The CLI reported an error, exited non-zero, or forge refused the run.
    Error,
    /// The run ended before the CLI's own end-of-run report: crash, timeout, cancel.
    Partial,
}

/// Where a cost came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// The CLI reported this run's cost.
    Reported,
    /// Computed from figures the CLI reported (e.g. the session's cost per token applied to
    /// the run's tokens).
    Derived,
    /// forge's pricing table applied to the run's tokens.
    Estimated,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ExecutionMetadata {
    #[serde(default)]
    pub run_id: Option<RunId>,
    #[serde(default)]
    pub session_id: Option<SessionId>,
    #[serde(default)]
    pub cli_version: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub cost_source: Option<CostSource>,
    /// A resumed session's running token total as the CLI reported it at the end of this
    /// run (earlier runs included); never the run's own usage (see the module doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_usage: Option<Usage>,
    /// A resumed session's running cost as the CLI reported it (earlier runs included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_cost_usd: Option<f64>,
    #[serde(default)]
    pub num_turns: Option<u32>,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Where the session lives: resuming it must use the same directory.
    #[serde(default)]
    pub workdir: Option<String>,
    /// Files the agent reported changing, workspace-relative where possible.
    #[serde(default)]
    pub changed_files: Vec<String>,
    /// Notes on how numbers were computed (e.g. "usage is this run's share of a resumed
    /// thread's cumulative total").
    #[serde(default)]
    pub notes: Vec<String>,
    /// Descendants that had left the run's process group and were found alive after it,
    /// then ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orphans_ended: Vec<EndedOrphan>,
    /// Rate or usage limits the run waited out before resuming its session
    /// (`on_rate_limit = "wait"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_limit_waits: Vec<RateLimitWait>,
    /// How the run's events reached the event sink, when one was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_sink: Option<SinkDelivery>,
    /// How the run was confined: `off`, or `on (<mechanism>; <network>)`. `None` where the
    /// process runner has no sandbox (tests with a fake runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// What the sandbox refused during the run (connections forge's egress refused), in
    /// order; also `sandbox_denied` events of its stream.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_denied: Vec<crate::sandbox::SandboxDenial>,
}

/// Delivery of one run's events to an event sink, as far as it got by the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SinkDelivery {
    /// Events the sink accepted (2xx).
    pub delivered: u64,
    /// Attempts repeated after a failure (connection error, timeout, non-2xx).
    pub retries: u64,
    /// Events dropped: the oldest when the queue was full, or given up after the retries.
    pub dropped: u64,
    /// Events still queued or in flight when the result was made (delivered afterwards).
    pub pending: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionResult {
    pub status: ExecutionStatus,
    pub provider: ProviderId,
    /// The final assistant answer.
    pub content: String,
    /// Every line the CLI printed on stdout, JSON kept verbatim, other text as strings.
    pub raw_events: Vec<RawJson>,
    pub tool_calls: Vec<ToolCall>,
    pub errors: Vec<ForgeError>,
    pub metadata: ExecutionMetadata,
}

impl ExecutionResult {
    /// An empty result for `provider`, to be filled as the run goes.
    pub fn empty(provider: ProviderId, status: ExecutionStatus) -> Self {
        Self {
            status,
            provider,
            content: String::new(),
            raw_events: Vec::new(),
            tool_calls: Vec::new(),
            errors: Vec::new(),
            metadata: ExecutionMetadata::default(),
        }
    }

    pub fn was_cancelled(&self) -> bool {
        self.errors
            .iter()
            .any(|e| matches!(e, ForgeError::Cancelled))
    }

    pub fn timed_out(&self) -> bool {
        self.errors
            .iter()
            .any(|e| matches!(e, ForgeError::ProviderTimeout { .. }))
    }
}
