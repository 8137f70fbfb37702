//! The loop's one decision: given the saved state, the time and the emergency-stop file,
//! what happens next.

use serde::{Deserialize, Serialize};

use super::config::AutoConfig;
use super::state::{LoopState, Phase};

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The planner said the goal is done.
    Completed,
    /// The emergency-stop file exists.
    EmergencyStop,
    /// `max_duration_hours` has passed since the loop started.
    Timeout,
    /// The total cost reached `max_total_cost_usd`.
    CostCeiling,
    /// `max_consecutive_errors` steps failed in a row.
    TooManyErrors,
    /// `max_iterations` iterations ran without the planner saying done.
    MaxIterations,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Completed => "completed",
            StopReason::EmergencyStop => "emergency_stop",
            StopReason::Timeout => "timeout",
            StopReason::CostCeiling => "cost_ceiling",
            StopReason::TooManyErrors => "too_many_errors",
            StopReason::MaxIterations => "max_iterations",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The next step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Stop now for this reason (not yet recorded in the state).
    Stop(StopReason),
    /// The state already records a stop.
    Stopped(StopReason),
    /// Begin iteration `state.iteration + 1`.
    StartIteration,
    /// Iteration 1 with an `initial_prompt`: it is the task, no planner run.
    UseInitialPrompt(String),
    /// Ask the planner.
    Plan,
    /// Research this query (cache first).
    Research(String),
    /// Run the executor on the planned task.
    Execute,
}

/// What comes next. Checked before every step: the emergency-stop file and the duration;
/// between iterations also the cost ceiling, the consecutive errors and the iteration count.
pub fn decide(state: &LoopState, config: &AutoConfig, now_ms: u64, stop_file: bool) -> Next {
    if let Some(stopped) = &state.stopped {
        return Next::Stopped(stopped.reason);
    }
    if stop_file {
        return Next::Stop(StopReason::EmergencyStop);
    }
    if now_ms.saturating_sub(state.started_at_ms) >= config.max_duration_ms() {
        return Next::Stop(StopReason::Timeout);
    }
    match &state.step {
        Some(step) => match &step.phase {
            Phase::Plan => match &config.task.initial_prompt {
                Some(prompt) if step.iteration == 1 => Next::UseInitialPrompt(prompt.clone()),
                _ => Next::Plan,
            },
            Phase::Research { query } => Next::Research(query.clone()),
            Phase::Execute { .. } => Next::Execute,
        },
        None => {
            if config
                .safety
                .max_total_cost_usd
                .is_some_and(|ceiling| state.total_cost_usd >= ceiling)
            {
                Next::Stop(StopReason::CostCeiling)
            } else if state.consecutive_errors >= config.safety.max_consecutive_errors {
                Next::Stop(StopReason::TooManyErrors)
            } else if state.iteration >= config.safety.max_iterations {
                Next::Stop(StopReason::MaxIterations)
            } else {
                Next::StartIteration
            }
        }
    }
}
