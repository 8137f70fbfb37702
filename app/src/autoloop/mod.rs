//! `AutoLoop`: the autonomous planner → executor loop over [`CodeAgent`] runs.
//!
//! The rules live in `forge_domain::autoloop`; this use case asks them what is next, runs the
//! planner, researcher or executor through the agent, and saves the state after every step
//! through the [`LoopStore`] port. Every run is a normal forge run, so it gets supervision,
//! a bundle, events and a cost of its own.

mod step_run;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use forge_domain::autoloop::{
    AutoConfig, LoopEvent, LoopReport, LoopState, Next, Phase, PlannerAnswer, RunRole, StopReason,
    executor_prompt, parse_planner_answer, planning_prompt_with_map, render_markdown,
    research_prompt,
};
use forge_domain::{ExecutionRequest, ExecutionResult, ExecutionStatus, ForgeError, ProviderId};
use forge_ports::{Clock, LoopStore, RepoMapper, StopSignal};

use crate::agent::CodeAgent;

use step_run::StepRun;

/// Applied to every request the loop makes (the configured defaults of its provider,
/// permission mode …), after the loop has set provider, prompt and timeout.
pub type RequestShaper = Arc<dyn Fn(&mut ExecutionRequest) + Send + Sync>;

/// How the loop ended.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopOutcome {
    pub reason: StopReason,
    pub report: LoopReport,
}

pub struct AutoLoop {
    agent: CodeAgent,
    config: AutoConfig,
    workdir: PathBuf,
    store: Arc<dyn LoopStore>,
    stop: Arc<dyn StopSignal>,
    clock: Arc<dyn Clock>,
    shaper: RequestShaper,
    poll: Duration,
    /// Makes the repository map the planner is shown (`None`: no map).
    mapper: Option<Arc<dyn RepoMapper>>,
}

impl AutoLoop {
    pub fn new(
        agent: CodeAgent,
        config: AutoConfig,
        workdir: PathBuf,
        store: Arc<dyn LoopStore>,
        stop: Arc<dyn StopSignal>,
    ) -> Self {
        let clock = Arc::clone(&agent.runtime().clock);
        Self {
            agent,
            config,
            workdir,
            store,
            stop,
            clock,
            shaper: Arc::new(|_| {}),
            poll: Duration::from_millis(100),
            mapper: None,
        }
    }

    /// Shows the planner the repository map of the workdir ranked by the goal.
    pub fn with_mapper(mut self, mapper: Arc<dyn RepoMapper>) -> Self {
        self.mapper = Some(mapper);
        self
    }

    pub fn with_shaper(mut self, shaper: RequestShaper) -> Self {
        self.shaper = shaper;
        self
    }

    /// How often the emergency-stop file is checked during a run (default 100 ms).
    pub fn with_poll(mut self, poll: Duration) -> Self {
        self.poll = poll;
        self
    }

    /// Runs the loop to a stop. With `resume`, continues the saved state (a step in
    /// progress is run again, unless its run had finished); without, starts afresh and
    /// refuses to overwrite an unfinished saved loop.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when there is nothing to resume or an unfinished loop
    /// would be overwritten; [`ForgeError::Io`] when the state cannot be saved.
    pub async fn run(&self, resume: bool) -> Result<LoopOutcome, ForgeError> {
        let saved = self.store.load_state().await?;
        let mut state = match (saved, resume) {
            (Some(mut state), true) => {
                let events = state.resume(self.clock.now_ms());
                self.commit(&state, &events).await?;
                state
            }
            (None, true) => {
                return Err(ForgeError::InvalidRequest {
                    reason: "there is no saved loop to resume in this workdir".into(),
                });
            }
            (Some(state), false) if state.stopped.is_none() => {
                return Err(ForgeError::InvalidRequest {
                    reason: format!(
                        "an unfinished loop (iteration {}) is saved in this workdir: continue it \
                         with --resume",
                        state.iteration
                    ),
                });
            }
            (_, false) => LoopState::new(&self.config, self.clock.now_ms()),
        };
        loop {
            let next = decide_now(self, &state);
            let events = match next {
                Next::Stopped(reason) => {
                    let report = LoopReport::from_state(&state, &self.config.provider);
                    self.store
                        .write_report(&report, &render_markdown(&report))
                        .await?;
                    return Ok(LoopOutcome { reason, report });
                }
                Next::Stop(reason) => state.stop(reason, self.clock.now_ms()),
                Next::StartIteration => state.start_iteration(self.clock.now_ms()),
                Next::UseInitialPrompt(task) => {
                    let answer = PlannerAnswer {
                        next_task: task,
                        done: false,
                        reason: "initial_prompt".into(),
                        research: None,
                    };
                    state.planned(&self.config, &answer, None, self.clock.now_ms())
                }
                Next::Plan => self.plan(&mut state).await?,
                Next::Research(query) => self.research(&mut state, &query).await?,
                Next::Execute => self.execute(&mut state).await?,
            };
            self.commit(&state, &events).await?;
        }
    }

    /// Saves the state, then appends the events: the state is what a resume trusts.
    async fn commit(&self, state: &LoopState, events: &[LoopEvent]) -> Result<(), ForgeError> {
        self.store.save_state(state).await?;
        self.store.append_events(events).await
    }

    fn request(&self, provider: &str, prompt: String, timeout_s: u64) -> ExecutionRequest {
        let mut request = self.agent.request(prompt);
        if let Ok(id) = ProviderId::new(provider) {
            request.provider = id;
        }
        request.workdir.clone_from(&self.workdir);
        request.timeout_ms = Some(timeout_s.saturating_mul(1000));
        if let Some(model) = &self.config.model {
            if provider == self.config.provider {
                request.model = Some(model.clone());
            }
        }
        (self.shaper)(&mut request);
        request
    }

    fn side_timeout(&self) -> u64 {
        self.config
            .provider_timeout_seconds
            .unwrap_or(self.config.safety.iteration_timeout_seconds)
    }

    async fn plan(&self, state: &mut LoopState) -> Result<Vec<LoopEvent>, ForgeError> {
        let map = match &self.mapper {
            Some(mapper) => {
                let spec = forge_domain::task::TaskSpec::new(self.config.task.goal.clone());
                Some(
                    crate::task::context::repository_map(
                        mapper.as_ref(),
                        &self.workdir,
                        &self.workdir,
                        &spec,
                    )
                    .await
                    .map(|m| m.map.text)
                    .map_err(|e| e.to_string()),
                )
            }
            None => None,
        };
        let map = map.as_ref().map(|r| r.as_deref().map_err(String::as_str));
        let prompt = planning_prompt_with_map(&self.config, state, map);
        let request = self.request(&self.config.provider, prompt, self.side_timeout());
        let run = match self.run_step(state, request, RunRole::Planner).await? {
            StepRun::Stopped(run) => return Ok(self.stopped_mid_run(state, run)),
            StepRun::Finished(run) => run,
        };
        let now = self.clock.now_ms();
        if let Some(reason) = failure(&run.result) {
            return Ok(state.planner_failed(reason, Some(run.reference), now));
        }
        Ok(match parse_planner_answer(&run.result.content) {
            Ok(answer) => state.planned(&self.config, &answer, Some(run.reference), now),
            Err(e) => state.planner_failed(e.to_string(), Some(run.reference), now),
        })
    }

    async fn research(
        &self,
        state: &mut LoopState,
        query: &str,
    ) -> Result<Vec<LoopEvent>, ForgeError> {
        if let Some(events) = state.research_from_cache(&self.config, query, self.clock.now_ms()) {
            return Ok(events);
        }
        let prompt = research_prompt(&self.config, query);
        let request = self.request(self.config.research_provider(), prompt, self.side_timeout());
        let run = match self.run_step(state, request, RunRole::Researcher).await? {
            StepRun::Stopped(run) => return Ok(self.stopped_mid_run(state, run)),
            StepRun::Finished(run) => run,
        };
        // A failed research run is no error of the loop: the task goes on without notes.
        let answer = failure(&run.result)
            .is_none()
            .then(|| run.result.content.clone())
            .filter(|a| !a.trim().is_empty());
        Ok(state.researched(
            &self.config,
            query,
            answer,
            run.reference,
            self.clock.now_ms(),
        ))
    }

    async fn execute(&self, state: &mut LoopState) -> Result<Vec<LoopEvent>, ForgeError> {
        let research = match state.step.as_ref().map(|s| &s.phase) {
            Some(Phase::Execute { research }) => research.clone(),
            _ => None,
        };
        let task = state.current_task().unwrap_or_default().to_owned();
        let prompt = executor_prompt(&self.config, &task, &state.persona, research.as_deref());
        let request = self.request(
            &self.config.provider,
            prompt,
            self.config.safety.iteration_timeout_seconds,
        );
        let run = match self.run_step(state, request, RunRole::Executor).await? {
            StepRun::Stopped(run) => return Ok(self.stopped_mid_run(state, run)),
            StepRun::Finished(run) => run,
        };
        let reason = failure(&run.result);
        Ok(state.executed(run.reference, reason, self.clock.now_ms()))
    }

    /// The emergency stop cut a run short: its cost counts, the step stays to be re-run.
    fn stopped_mid_run(&self, state: &mut LoopState, run: step_run::FinishedRun) -> Vec<LoopEvent> {
        state.interrupted(run.reference);
        state.stop(StopReason::EmergencyStop, self.clock.now_ms())
    }
}

/// The next step, from the state, the clock and the stop file.
fn decide_now(this: &AutoLoop, state: &LoopState) -> Next {
    forge_domain::autoloop::decide(
        state,
        &this.config,
        this.clock.now_ms(),
        this.stop.requested(),
    )
}

/// Why a run counts as failed, or `None` when it succeeded.
fn failure(result: &ExecutionResult) -> Option<String> {
    if result.status == ExecutionStatus::Success {
        return None;
    }
    let status = match result.status {
        ExecutionStatus::Success => "success",
        ExecutionStatus::Error => "error",
        ExecutionStatus::Partial => "partial",
    };
    Some(match result.errors.first() {
        Some(e) => format!("{status}: {e}"),
        None => format!("the run ended with status {status}"),
    })
}
