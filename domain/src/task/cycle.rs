//! One agent run of a task and the validation that followed it.

use serde::{Deserialize, Serialize};

use super::validation::ValidationReport;
use crate::ids::{RunId, SessionId};
use crate::usage::Usage;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CycleKind {
    /// The first run, from the task prompt.
    Main,
    /// A resumed run with the failing validation output.
    ValidationFix,
    /// A resumed run with the critical review findings.
    ReviewFix,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cycle {
    pub kind: CycleKind,
    /// The agent run's bundle: `.forgecode/runs/<run_id>/`.
    pub run_id: Option<RunId>,
    pub session_id: Option<SessionId>,
    pub cost_usd: f64,
    pub usage: Usage,
    /// The validation after this run; `None` when it did not run (no changes, stopped).
    pub validation: Option<ValidationReport>,
    /// The provider could not resume, so this run started a fresh session with the failures.
    #[serde(default)]
    pub fresh_session: bool,
    /// What the sandbox refused the agent in this run (its refused connections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_denied: Vec<crate::sandbox::SandboxDenial>,
}
