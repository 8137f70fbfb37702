//! `on_rate_limit = "wait"`: a run whose CLI gave up on a rate or usage limit that says when
//! it resets waits for the reset (within the run's deadline), then resumes the same session.
//!
//! The run loop ([`crate::execution`]) hands every attempt's result to [`park`]; it does
//! not call back into the run loop. The domain decides
//! ([`forge_domain::rate_limit::decide`]); this executes: the wait is an event
//! ([`AgentEvent::RateLimitWait`]) and a record in the result's metadata, and it counts
//! against no retry budget (the CLI's own retries are untouched).

use std::time::Duration;

use forge_domain::rate_limit::{RateLimitDecision, decide, rate_limit_of};
use forge_domain::{AgentEvent, ExecutionResult, ForgeError, OnRateLimit, RateLimitWait};
use forge_ports::RunLogger;
use tokio::sync::mpsc;

use crate::handle::RunCanceller;
use crate::run_plan::RunPlan;
use crate::runtime::Runtime;

/// At most this many waits in one run: a CLI that reports a limit the moment it resumes
/// must not loop until the deadline (or forever, without one).
const MAX_WAITS: usize = 8;

/// What follows an attempt.
pub(crate) enum Parked {
    /// The limit was waited out: `plan` now resumes the session, as a run of its own.
    Resume,
    /// The run is over with this result.
    Done(Box<ExecutionResult>),
}

/// The run's deadline on the wall clock, which every resumed attempt shares.
pub(crate) fn deadline_ms(rt: &Runtime, plan: &RunPlan) -> Option<u64> {
    plan.timeout_ms
        .map(|ms| rt.clock.now_ms().saturating_add(ms))
}

/// After an attempt: when it ended on a limit the policy says to wait for, waits for the
/// reset and turns `plan` into the attempt that resumes; otherwise the run is done.
pub(crate) async fn park(
    rt: &Runtime,
    plan: &mut RunPlan,
    mut result: ExecutionResult,
    sink: Option<&mpsc::Sender<AgentEvent>>,
    canceller: &RunCanceller,
    log: &dyn RunLogger,
    deadline_ms: Option<u64>,
) -> Parked {
    if plan.on_rate_limit == OnRateLimit::Fail || canceller.is_cancelled() {
        return Parked::Done(Box::new(result));
    }
    let now_ms = rt.clock.now_ms();
    let Some(limit) = rate_limit_of(&result, now_ms) else {
        return Parked::Done(Box::new(result));
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
            return Parked::Done(Box::new(result));
        }
    };

    let event = AgentEvent::RateLimitWait {
        resets_at_ms: limit.resets_at_ms,
        wait_ms,
        message: limit.message.clone(),
    };
    log.event(&event);
    if let Some(sink) = sink {
        let _ = sink.send(event).await;
    }
    let resumed = tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(wait_ms)) => true,
        () = canceller.cancel.cancelled() => false,
        () = canceller.kill.cancelled() => false,
    };
    if !resumed {
        result.errors.push(ForgeError::Cancelled);
        return Parked::Done(Box::new(result));
    }

    plan.rate_limit_waits.push(RateLimitWait {
        resets_at_ms: limit.resets_at_ms,
        waited_ms: wait_ms,
        message: limit.message,
        run_id: Some(plan.run_id.as_str().to_owned()),
    });
    // The same session goes on, in a run (and bundle) of its own, with what is left of
    // the deadline. Without a session id (the limit hit before one existed) the request
    // starts over.
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
    Parked::Resume
}
