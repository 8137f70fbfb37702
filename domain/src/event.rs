//! The one canonical event stream. Every provider decodes its CLI's output into these.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ids::SessionId;
use crate::raw::RawJson;
use crate::result::{CostSource, ExecutionStatus};
use crate::shared_text::SharedText;
use crate::tool::ToolKind;
use crate::usage::Usage;

/// How a file changed, where the CLI says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    Added,
    Modified,
    Deleted,
    Renamed,
    Unknown,
}

/// What a sandbox refusal was about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenialKind {
    Network,
    Fs,
}

/// Where a step of the agent's plan stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    Pending,
    InProgress,
    Completed,
}

/// One step of the agent's plan (its todo list).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    pub content: String,
    pub status: PlanStatus,
}

/// One thing that happened in a run. Serialised with a `type` tag in snake_case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The CLI announced its session.
    SessionStarted {
        session_id: SessionId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cli_version: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tools: Vec<String>,
    },
    /// Assistant text: a piece of a longer message (`delta: true`) or a whole block.
    Text {
        text: SharedText,
        delta: bool,
    },
    /// Model reasoning, when the CLI shows it.
    Thinking {
        text: String,
        delta: bool,
    },
    /// A tool call began. Its id, name and input are shared text (`Arc<str>`): the decoder's
    /// accumulator keeps the same call, and a clone is a reference count, not a copy.
    ToolCallStarted {
        call_id: Arc<str>,
        kind: ToolKind,
        name: Arc<str>,
        /// The arguments as the CLI printed them (key order and all), kept as raw JSON text
        /// so a decoder copies one slice instead of building a tree.
        input: RawJson,
    },
    /// A tool call ended; paired with its start by `call_id`.
    ToolCallFinished {
        call_id: Arc<str>,
        kind: ToolKind,
        name: Arc<str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<Arc<str>>,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    FileChanged {
        path: String,
        change: FileChangeKind,
    },
    /// The agent's plan for the task, whole each time it changes (ACP's `plan` update).
    Plan {
        entries: Vec<PlanEntry>,
    },
    /// Usage so far (cumulative for this run, as far as the CLI reports it).
    UsageUpdate {
        usage: Usage,
    },
    /// The CLI will retry a failed model call (rate limit, server error, cut stream).
    Retry {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_attempts: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delay_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        http_status: Option<u16>,
        rate_limited: bool,
        message: String,
    },
    Warning {
        message: String,
    },
    /// forge itself waits for a rate or usage limit to reset, then resumes the session
    /// (`on_rate_limit = "wait"`). Not a retry: it counts against no retry budget.
    RateLimitWait {
        /// Unix time in milliseconds.
        resets_at_ms: u64,
        wait_ms: u64,
        message: String,
    },
    /// The sandbox refused something the agent (or its code) tried: a connection forge's
    /// egress refused, or a file access where the mechanism reports one (issue 31).
    SandboxDenied {
        kind: DenialKind,
        /// `host:port` for a connection, the path for a file.
        target: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// An error the CLI reported; the run may go on (see `Completed`).
    Error {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// The CLI's own end-of-run report.
    Completed {
        status: ExecutionStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop_reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result_text: Option<SharedText>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_source: Option<CostSource>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        num_turns: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
    /// The agent asked to use a tool and forge asks for it (`--permission-mode ask`): the
    /// request as stored, with its id (a rule's decision already in it when one decided).
    PermissionRequested {
        request: Box<crate::permission::PermissionRequest>,
    },
    /// A request was decided: by a person, a rule, the timeout or a cancel (its
    /// `decision.by.source`), and the agent was answered so.
    PermissionDecided {
        request: Box<crate::permission::PermissionRequest>,
    },
    /// A JSON event of a kind this decoder does not know: kept whole.
    Unknown {
        kind: String,
        raw: RawJson,
    },
    /// A line that is not JSON (a warning printed to stdout, a truncated line): kept whole.
    Unparsed {
        raw: String,
    },
    /// A stdout line over the reader's cap: its size and first bytes; reading went on.
    OversizeLine {
        size_bytes: u64,
        prefix: String,
    },
}

impl AgentEvent {
    /// The serialised `type` tag, for logs, metrics and summaries.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::SessionStarted { .. } => "session_started",
            AgentEvent::Text { .. } => "text",
            AgentEvent::Thinking { .. } => "thinking",
            AgentEvent::ToolCallStarted { .. } => "tool_call_started",
            AgentEvent::ToolCallFinished { .. } => "tool_call_finished",
            AgentEvent::FileChanged { .. } => "file_changed",
            AgentEvent::Plan { .. } => "plan",
            AgentEvent::UsageUpdate { .. } => "usage_update",
            AgentEvent::Retry { .. } => "retry",
            AgentEvent::Warning { .. } => "warning",
            AgentEvent::RateLimitWait { .. } => "rate_limit_wait",
            AgentEvent::SandboxDenied { .. } => "sandbox_denied",
            AgentEvent::Error { .. } => "error",
            AgentEvent::Completed { .. } => "completed",
            AgentEvent::PermissionRequested { .. } => "permission_requested",
            AgentEvent::PermissionDecided { .. } => "permission_decided",
            AgentEvent::Unknown { .. } => "unknown",
            AgentEvent::Unparsed { .. } => "unparsed",
            AgentEvent::OversizeLine { .. } => "oversize_line",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_with_a_snake_case_type_tag() {
        let ev = AgentEvent::Unknown {
            kind: "rate_limit_event".into(),
            raw: RawJson::from_line(r#"{"type":"rate_limit_event"}"#),
        };
        let json = serde_json::to_string(&ev).unwrap();
        assert_eq!(
            json,
            r#"{"type":"unknown","kind":"rate_limit_event","raw":{"type":"rate_limit_event"}}"#
        );
        let back: AgentEvent = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ev);
        assert_eq!(back.kind(), "unknown");
    }

    #[test]
    fn a_plan_serialises_its_entries_and_their_status() {
        let ev = AgentEvent::Plan {
            entries: vec![PlanEntry {
                content: "write the test".into(),
                status: PlanStatus::InProgress,
            }],
        };
        let json = serde_json::to_string(&ev).unwrap();
        assert_eq!(
            json,
            r#"{"type":"plan","entries":[{"content":"write the test","status":"in_progress"}]}"#
        );
        assert_eq!(serde_json::from_str::<AgentEvent>(&json).unwrap(), ev);
    }
}
