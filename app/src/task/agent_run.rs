//! One agent run of a task (main or correction) through [`CodeAgent`], with the per-run
//! budget and turn cap enforced live by forge for CLIs that have no such flag: the usage
//! events are priced with the provider's pricing table, tool calls counted, and the run
//! cancelled when either is crossed (stop reasons `run_budget` / `max_turns`, as Claude's
//! own limits give).

use forge_domain::task::{Cycle, CycleKind, StopReason};
use forge_domain::{AgentEvent, ExecutionRequest, ExecutionResult, PricingTable, Usage};

use crate::agent::CodeAgent;
use crate::handle::RunCanceller;

/// Limits forge enforces itself (set only where the CLI lacks the flag).
#[derive(Debug, Clone, Default)]
pub struct Enforce {
    pub budget_usd: Option<f64>,
    pub max_turns: Option<u32>,
    pub pricing: PricingTable,
    pub model: Option<String>,
    /// Stop the run once the CLI has announced this many retries of a rate-limited model
    /// call: a caller that would rather give up than wait (a review in CI) does not depend on
    /// the CLI giving up by itself (gemini 0.61 never does).
    pub give_up_after_rate_limited_retries: Option<u32>,
}

/// What one run gave the task.
pub struct AgentRun {
    pub cycle: Cycle,
    pub result: ExecutionResult,
    /// Why the task must stop because of this run (`None`: go on).
    pub stop: Option<StopReason>,
    /// The CLI's last rate-limit message when forge stopped the run for it
    /// ([`Enforce::give_up_after_rate_limited_retries`]).
    pub rate_limited: Option<String>,
}

pub async fn run_agent(
    agent: &CodeAgent,
    request: ExecutionRequest,
    kind: CycleKind,
    fresh_session: bool,
    enforce: &Enforce,
    cancel: &RunCanceller,
    mut on_cost: impl FnMut(f64),
) -> AgentRun {
    let mut handle = agent.start(request);
    let run_canceller = handle.canceller();
    let mut crossed: Option<StopReason> = None;
    let mut turns: u32 = 0;
    let mut cancelled = false;
    let mut killed = false;
    let mut rate_limited_retries: u32 = 0;
    let mut rate_limited: Option<String> = None;
    loop {
        tokio::select! {
            event = handle.next_event() => {
                let Some(event) = event else { break };
                if crossed.is_some() || rate_limited.is_some() {
                    continue;
                }
                if let AgentEvent::Retry { rate_limited: true, message, .. } = &event {
                    rate_limited_retries = rate_limited_retries.saturating_add(1);
                    if enforce
                        .give_up_after_rate_limited_retries
                        .is_some_and(|n| rate_limited_retries >= n)
                    {
                        rate_limited = Some(message.clone());
                        run_canceller.cancel();
                        continue;
                    }
                }
                crossed = match &event {
                    AgentEvent::UsageUpdate { usage } => {
                        let cost = estimate(enforce, usage);
                        on_cost(cost);
                        enforce.budget_usd.filter(|b| cost >= *b).map(|_| StopReason::RunBudget)
                    }
                    AgentEvent::ToolCallStarted { .. } => {
                        turns = turns.saturating_add(1);
                        enforce.max_turns.filter(|m| turns > *m).map(|_| StopReason::MaxTurns)
                    }
                    _ => None,
                };
                if crossed.is_some() {
                    run_canceller.cancel();
                }
            }
            () = cancel.cancel.cancelled(), if !cancelled => {
                cancelled = true;
                run_canceller.cancel();
            }
            () = cancel.kill.cancelled(), if cancelled && !killed => {
                killed = true;
                run_canceller.kill_now();
            }
        }
    }
    let result = handle.result().await;
    let stop = if cancelled {
        Some(StopReason::Cancelled)
    } else if crossed.is_some() {
        crossed
    } else if result.timed_out() {
        Some(StopReason::Timeout)
    } else if result.was_cancelled() {
        Some(StopReason::Cancelled)
    } else {
        cli_limit(&result)
    };
    let cost_usd = result
        .metadata
        .cost_usd
        .unwrap_or_else(|| estimate(enforce, &result.metadata.usage));
    let cycle = Cycle {
        kind,
        run_id: result.metadata.run_id.clone(),
        session_id: result.metadata.session_id.clone(),
        cost_usd,
        usage: result.metadata.usage,
        validation: None,
        fresh_session,
        sandbox_denied: result.metadata.sandbox_denied.clone(),
    };
    AgentRun {
        cycle,
        result,
        stop,
        rate_limited,
    }
}

fn estimate(enforce: &Enforce, usage: &Usage) -> f64 {
    enforce
        .model
        .as_deref()
        .and_then(|m| enforce.pricing.estimate(m, usage))
        .unwrap_or(0.0)
}

/// A limit the CLI itself enforced, from its stop reason (`error_max_turns`,
/// `error_max_budget_usd`).
fn cli_limit(result: &ExecutionResult) -> Option<StopReason> {
    let reason = result.metadata.stop_reason.as_deref()?;
    if reason.contains("max_turns") {
        Some(StopReason::MaxTurns)
    } else if reason.contains("budget") {
        Some(StopReason::RunBudget)
    } else {
        None
    }
}
