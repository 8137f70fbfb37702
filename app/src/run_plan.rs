//! What is decided before a run starts, shared by the run's steps and by the rate-limit
//! parking that resumes it.

use std::sync::Arc;

use forge_domain::{ExecutionRequest, OnRateLimit, RateLimitWait, Redactor, RunId};
use forge_ports::{KillLadder, Provider, RegisteredTool, ToolHost};

use crate::permission::PermissionBridge;

/// Everything decided before a run starts.
#[derive(Clone)]
pub(crate) struct RunPlan {
    pub provider: Arc<dyn Provider>,
    pub request: ExecutionRequest,
    pub run_id: RunId,
    pub timeout_ms: Option<u64>,
    pub ladder: KillLadder,
    pub max_line_bytes: usize,
    pub redactor: Redactor,
    /// The tool host and the tools it serves to this run, when any are registered.
    pub tools: Option<RunTools>,
    pub on_rate_limit: OnRateLimit,
    /// Limits waited out before this run (it resumes the session that hit them).
    pub rate_limit_waits: Vec<RateLimitWait>,
    /// Where its permission requests go in `--permission-mode ask`.
    pub permissions: Option<PermissionBridge>,
}

/// The tool host and the registered tools of a run.
pub(crate) type RunTools = (Arc<dyn ToolHost>, Arc<[RegisteredTool]>);
