//! One run, start to finish: the single code path behind `run` and `stream`.
//!
//! An attempt is four steps, each its own module:
//! [`prepare`] (workspace, bundle, home, tool server) → [`spawn`] (invocation, confinement,
//! child, session) → [`pump`] (the child's output, stderr, refusals, session steps, cancel
//! and timeout, until stdout ends) → [`finish`] (teardown, the result, the bundle closed).
//! A run is one attempt, or several when it waits out rate limits
//! ([`crate::rate_limit`]): each resumes the session in a run and bundle of its own.

mod decoding;
mod delivery;
mod finish;
mod prepare;
mod pump;
mod spawn;
mod stopping;

use std::time::Duration;

use forge_domain::{AgentEvent, ExecutionResult};
use forge_ports::RunLogger;
use tokio::sync::mpsc;

use crate::handle::RunCanceller;
use crate::rate_limit::{self, Parked};
pub(crate) use crate::run_plan::RunPlan;
use crate::runtime::Runtime;

pub(crate) async fn execute(
    rt: Runtime,
    mut plan: RunPlan,
    sink: Option<mpsc::Sender<AgentEvent>>,
    canceller: RunCanceller,
) -> ExecutionResult {
    let provider_id = plan.provider.id();
    let started_mono = rt.clock.monotonic_ms();
    let log = rt.logger.run(&plan.run_id, &provider_id);
    rt.metrics.execution_started(&provider_id);

    let deadline_ms = rate_limit::deadline_ms(&rt, &plan);
    let result = loop {
        let result = attempt(
            &rt,
            plan.clone(),
            sink.clone(),
            &canceller,
            log.as_ref(),
            started_mono,
        )
        .await;
        let parked = rate_limit::park(
            &rt,
            &mut plan,
            result,
            sink.as_ref(),
            &canceller,
            log.as_ref(),
            deadline_ms,
        )
        .await;
        match parked {
            Parked::Resume => {}
            Parked::Done(result) => break *result,
        }
    };

    let duration = Duration::from_millis(rt.clock.monotonic_ms().saturating_sub(started_mono));
    rt.metrics.execution_finished(
        &provider_id,
        result.status,
        duration,
        result.timed_out(),
        result.was_cancelled(),
    );
    log.finished(&result);
    result
}

/// One attempt of a run: prepare → spawn → pump → finish.
async fn attempt(
    rt: &Runtime,
    plan: RunPlan,
    sink: Option<mpsc::Sender<AgentEvent>>,
    canceller: &RunCanceller,
    log: &dyn RunLogger,
    started_mono: u64,
) -> ExecutionResult {
    let prepared = match prepare::prepare(rt, plan, sink, log).await {
        Ok(prepared) => prepared,
        Err(result) => return result,
    };
    let (mut run, mut child) = match spawn::spawn(rt, prepared).await {
        Ok(spawned) => spawned,
        Err(result) => return result,
    };
    run.pump(child.as_mut(), canceller).await;
    run.finish(child, rt, canceller, started_mono).await
}
