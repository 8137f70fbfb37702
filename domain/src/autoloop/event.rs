//! What the loop appends to its event store: one line per thing that happened.

use serde::{Deserialize, Serialize};

use crate::ids::RunId;

use super::decide::StopReason;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopEvent {
    /// Wall-clock milliseconds since the Unix epoch.
    pub at_ms: u64,
    pub iteration: u32,
    /// The provider run the event is about, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    #[serde(flatten)]
    pub kind: LoopEventKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LoopEventKind {
    IterationStarted,
    Planned {
        task: String,
        done: bool,
        reason: String,
        /// `planner` or `initial_prompt`.
        source: String,
    },
    PersonaSwitched {
        from: String,
        to: String,
    },
    ResearchHit {
        query: String,
    },
    ResearchMiss {
        query: String,
    },
    Executed {
        status: String,
        cost_usd: f64,
        duration_ms: u64,
    },
    Error {
        step: String,
        reason: String,
    },
    Stopped {
        reason: StopReason,
    },
    Resumed {
        step: String,
    },
}
