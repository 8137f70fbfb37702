//! One step's provider run: started through the agent, its id saved before waiting (so a
//! resume can find a run that finished while forge died), the emergency stop polled while
//! it runs.

use std::time::Duration;

use forge_domain::autoloop::{LoopState, RunRef, RunRole};
use forge_domain::{ExecutionRequest, ExecutionResult, ExecutionStatus, ForgeError};

use super::AutoLoop;

/// After asking a run to stop (SIGINT), how long before its process group is killed: short,
/// so the loop stops within a second of the emergency-stop file appearing.
const STOP_GRACE: Duration = Duration::from_millis(300);

/// A run that ended, with the reference the state records.
#[derive(Debug)]
pub struct FinishedRun {
    pub result: ExecutionResult,
    pub reference: RunRef,
}

#[derive(Debug)]
pub enum StepRun {
    Finished(FinishedRun),
    /// Cut short by the emergency stop.
    Stopped(FinishedRun),
}

impl AutoLoop {
    pub(super) async fn run_step(
        &self,
        state: &mut LoopState,
        request: ExecutionRequest,
        role: RunRole,
    ) -> Result<StepRun, ForgeError> {
        if let Some(result) = self.finished_before_crash(state).await {
            return Ok(StepRun::Finished(finished(result, role)));
        }
        let handle = self.agent.start(request);
        state.run_started(handle.run_id().clone());
        self.store.save_state(state).await?;
        let canceller = handle.canceller();
        let result = handle.result();
        tokio::pin!(result);
        let mut stop_asked: Option<tokio::time::Instant> = None;
        let result = loop {
            tokio::select! {
                result = &mut result => break result,
                () = tokio::time::sleep(self.poll) => {
                    match stop_asked {
                        None if self.stop.requested() => {
                            canceller.cancel();
                            stop_asked = Some(tokio::time::Instant::now());
                        }
                        Some(at) if at.elapsed() >= STOP_GRACE => canceller.kill_now(),
                        _ => {}
                    }
                }
            }
        };
        let run = finished(result, role);
        Ok(if stop_asked.is_some() {
            StepRun::Stopped(run)
        } else {
            StepRun::Finished(run)
        })
    }

    /// The result of the step's run when that run finished but forge died before recording
    /// it (its bundle has `result.json`); `None` when it must run again.
    async fn finished_before_crash(&self, state: &LoopState) -> Option<ExecutionResult> {
        let run_id = state.step.as_ref()?.run_id.as_ref()?;
        let result = self
            .agent
            .runtime()
            .artifacts
            .load_result(&self.workdir, run_id)
            .await
            .ok()??;
        (!result.was_cancelled()).then_some(result)
    }
}

fn finished(result: ExecutionResult, role: RunRole) -> FinishedRun {
    let status = match result.status {
        ExecutionStatus::Success => "success",
        ExecutionStatus::Error => "error",
        ExecutionStatus::Partial => "partial",
    };
    let reference = RunRef {
        role,
        run_id: result.metadata.run_id.clone(),
        status: status.into(),
        // The run's own cost (a fresh session each time: never a resumed running total).
        cost_usd: result.metadata.cost_usd.unwrap_or(0.0),
        duration_ms: result.metadata.duration_ms.unwrap_or(0),
    };
    FinishedRun { result, reference }
}
