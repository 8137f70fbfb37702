//! `on_rate_limit = "wait"`: a run whose CLI gave up on a rate or usage limit that says when
//! it resets waits for the reset (within the run's deadline), then resumes the same session.
//!
//! The domain decides ([`forge_domain::rate_limit::decide`]); this executes: the wait is an
//! event ([`AgentEvent::RateLimitWait`]) and a record in the result's metadata, and it
//! counts against no retry budget (the CLI's own retries are untouched).

use std::time::Duration;

use forge_domain::rate_limit::{RateLimitDecision, decide, rate_limit_of};
use forge_domain::{AgentEvent, ExecutionResult, ForgeError, OnRateLimit, RateLimitWait};
use forge_ports::RunLogger;
use tokio::sync::mpsc;

use crate::execution::{RunPlan, execute_inner};
use crate::handle::RunCanceller;
use crate::runtime::Runtime;

/// At most this many waits in one run: a CLI that reports a limit the moment it resumes
/// must not loop until the deadline (or forever, without one).
const MAX_WAITS: usize = 8;

/// Runs `plan`; while it ends on a limit the policy says to wait for, waits and resumes.
pub(crate) async fn waiting_out_limits(
    rt: &Runtime,
    mut plan: RunPlan,
    sink: Option<mpsc::Sender<AgentEvent>>,
    canceller: &RunCanceller,
    log: &dyn RunLogger,
    started_mono: u64,
) -> ExecutionResult {
    let deadline_ms = plan
        .timeout_ms
        .map(|ms| rt.clock.now_ms().saturating_add(ms));
    loop {
        let mut result =
            execute_inner(rt, plan.clone(), sink.clone(), canceller, log, started_mono).await;
        if plan.on_rate_limit == OnRateLimit::Fail || canceller.is_cancelled() {
            return result;
        }
        let now_ms = rt.clock.now_ms();
        let Some(limit) = rate_limit_of(&result, now_ms) else {
            return result;
        };
        let decision = if plan.rate_limit_waits.len() >= MAX_WAITS {
            RateLimitDecision::Fail {
                reason: format!("already waited {MAX_WAITS} times in this run"),
            }
        } else {
            decide(plan.on_rate_limit, &limit, now_ms, deadline_ms)
        };
        let wait_ms = match decision {
            RateLimitDecision::Wait { wait_ms } => wait_ms,
            RateLimitDecision::Fail { reason } => {
                let note = format!("rate limited ({}); not waiting: {reason}", limit.message);
                log.warn(&note);
                result.metadata.notes.push(note);
                return result;
            }
        };

        let event = AgentEvent::RateLimitWait {
            resets_at_ms: limit.resets_at_ms,
            wait_ms,
            message: limit.message.clone(),
        };
        log.event(&event);
        if let Some(sink) = &sink {
            let _ = sink.send(event).await;
        }
        let resumed = tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait_ms)) => true,
            () = canceller.cancel.cancelled() => false,
            () = canceller.kill.cancelled() => false,
        };
        if !resumed {
            result.errors.push(ForgeError::Cancelled);
            return result;
        }

        plan.rate_limit_waits.push(RateLimitWait {
            resets_at_ms: limit.resets_at_ms,
            waited_ms: wait_ms,
            message: limit.message,
            run_id: Some(plan.run_id.as_str().to_owned()),
        });
        // The same session goes on, in a run (and bundle) of its own, with what is left of
        // the deadline. Without a session id (the limit hit before one existed) the
        // request starts over.
        if let Some(session) = result.metadata.session_id.take() {
            plan.request.resume_session_id = Some(session);
        }
        plan.run_id = rt.ids.run_id();
        if let Some(deadline) = deadline_ms {
            plan.timeout_ms = Some(deadline.saturating_sub(rt.clock.now_ms()).max(1));
        }
        log.info(&format!(
            "resuming after the rate limit as run {}",
            plan.run_id.as_str()
        ));
    }
}
