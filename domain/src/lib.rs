//! forge-domain: the pure heart of forge-code-agent.
//!
//! Everything here is data and rules: identifiers, the execution request and result, the one
//! canonical event stream every provider decodes into, and the policies (status derivation,
//! timeout priority, workspace paths, secret redaction). Nothing here reads a clock, the
//! environment, the file system or a process; adapters do that and hand values in.

pub mod accumulate;
pub mod agent_protocol;
pub mod autoloop;
pub mod delivery;
pub mod error;
pub mod event;
pub mod forges;
pub mod hosted_tool;
pub mod ids;
pub mod orphan;
pub mod path_policy;
pub mod permission;
pub mod pricing;
pub mod queue;
pub mod queue_approval;
pub mod rate_limit;
pub mod raw;
pub mod redact;
pub mod request;
pub mod result;
pub mod review;
pub mod sandbox;
pub mod session_archive;
pub mod share;
pub mod shared_text;
pub mod status;
pub mod task;
pub mod timeout;
pub mod tool;
pub mod usage;

pub use accumulate::EventAccumulator;
pub use error::ForgeError;
pub use event::{AgentEvent, DenialKind, FileChangeKind, PlanEntry, PlanStatus};
pub use hosted_tool::{
    HostedTool, ToolAnnotations, ToolErrorPolicy, ToolExecution, ToolName, ToolNameError,
};
pub use ids::{IdError, ProviderId, RunId, SessionId};
pub use orphan::EndedOrphan;
pub use pricing::{ModelPrice, PricingTable};
pub use rate_limit::{OnRateLimit, RateLimit, RateLimitDecision, RateLimitWait};
pub use raw::RawJson;
pub use redact::Redactor;
pub use request::{ExecutionMode, ExecutionRequest, PermissionMode};
pub use result::{CostSource, ExecutionMetadata, ExecutionResult, ExecutionStatus, SinkDelivery};
pub use shared_text::SharedText;
pub use status::{StatusInputs, derive_status};
pub use task::{TaskId, TaskOutcome, TaskReport, TaskSpec, TaskStatus, TaskType};
pub use timeout::{TimeoutSources, resolve_timeout};
pub use tool::{ToolCall, ToolCallStatus, ToolDefinition, ToolKind, ToolNames};
pub use usage::Usage;
