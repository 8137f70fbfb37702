//! The loop's saved state (`workflow_state.json`) and its transitions.
//!
//! Every transition takes the clock's reading and returns the events it produced, so the
//! use case only runs providers, saves and appends. A step's run is recorded (cost
//! included) in the same transition that moves past the step: one atomic save holds both,
//! so after a crash a finished step is never repeated and an unfinished one is re-run.

use serde::{Deserialize, Serialize};

use crate::ids::RunId;

use super::config::AutoConfig;
use super::decide::StopReason;
use super::event::{LoopEvent, LoopEventKind};
use super::persona::recommend_persona;
use super::planner::PlannerAnswer;
use super::research::{ResearchCache, normalise_query};

/// Bumped when the saved shape changes incompatibly.
pub const STATE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    pub version: u32,
    pub goal: String,
    /// The loop's provider (for reports read back from the state).
    #[serde(default)]
    pub provider: String,
    pub started_at_ms: u64,
    #[serde(default)]
    pub ended_at_ms: Option<u64>,
    /// The number of the current (or last) iteration; 0 before the first.
    pub iteration: u32,
    pub history: Vec<IterationRecord>,
    /// The persona in force.
    pub persona: String,
    pub persona_switches: Vec<PersonaSwitch>,
    pub consecutive_errors: u32,
    pub total_errors: u32,
    /// Sum of every recorded run's own cost.
    pub total_cost_usd: f64,
    pub research_cache: ResearchCache,
    pub research_hits: u32,
    pub research_misses: u32,
    /// The step in progress; `None` between iterations.
    pub step: Option<Step>,
    pub stopped: Option<Stopped>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub iteration: u32,
    pub phase: Phase,
    /// The run started for this step, once there is one.
    #[serde(default)]
    pub run_id: Option<RunId>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub enum Phase {
    Plan,
    Research { query: String },
    Execute { research: Option<String> },
}

impl Phase {
    pub fn name(&self) -> &'static str {
        match self {
            Phase::Plan => "plan",
            Phase::Research { .. } => "research",
            Phase::Execute { .. } => "execute",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    pub reason: StopReason,
    pub at_ms: u64,
    /// Where it stopped, e.g. `iteration 2, execute`.
    pub during: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PersonaSwitch {
    pub iteration: u32,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    pub number: u32,
    pub task: Option<String>,
    /// The planner's reason (or `initial_prompt`).
    pub reason: Option<String>,
    pub persona: Option<String>,
    pub research: Option<ResearchUse>,
    pub outcome: Outcome,
    pub runs: Vec<RunRef>,
    pub cost_usd: f64,
    pub started_at_ms: u64,
    pub ended_at_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResearchUse {
    pub query: String,
    pub cache_hit: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    InProgress,
    Succeeded,
    Failed { reason: String },
    PlannerError { reason: String },
    Done { reason: String },
    Stopped { reason: StopReason },
}

impl Outcome {
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::InProgress => "in_progress",
            Outcome::Succeeded => "succeeded",
            Outcome::Failed { .. } => "failed",
            Outcome::PlannerError { .. } => "planner_error",
            Outcome::Done { .. } => "done",
            Outcome::Stopped { .. } => "stopped",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunRole {
    Planner,
    Researcher,
    Executor,
}

/// One provider run of an iteration, with its own cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    pub role: RunRole,
    pub run_id: Option<RunId>,
    /// `success`, `error` or `partial`.
    pub status: String,
    pub cost_usd: f64,
    pub duration_ms: u64,
}

impl LoopState {
    pub fn new(config: &AutoConfig, now_ms: u64) -> Self {
        Self {
            version: STATE_VERSION,
            goal: config.task.goal.clone(),
            provider: config.provider.clone(),
            started_at_ms: now_ms,
            ended_at_ms: None,
            iteration: 0,
            history: Vec::new(),
            persona: config.persona.default_persona.clone(),
            persona_switches: Vec::new(),
            consecutive_errors: 0,
            total_errors: 0,
            total_cost_usd: 0.0,
            research_cache: ResearchCache::default(),
            research_hits: 0,
            research_misses: 0,
            step: None,
            stopped: None,
        }
    }

    fn event(&self, now_ms: u64, run_id: Option<RunId>, kind: LoopEventKind) -> LoopEvent {
        LoopEvent {
            at_ms: now_ms,
            iteration: self.iteration,
            run_id,
            kind,
        }
    }

    fn current(&mut self) -> Option<&mut IterationRecord> {
        let n = self.iteration;
        self.history.iter_mut().rev().find(|r| r.number == n)
    }

    fn record_run(&mut self, run: RunRef) {
        self.total_cost_usd += run.cost_usd;
        if let Some(record) = self.current() {
            record.cost_usd += run.cost_usd;
            record.runs.push(run);
        }
    }

    fn end_iteration(&mut self, outcome: Outcome, now_ms: u64) {
        if let Some(record) = self.current() {
            record.outcome = outcome;
            record.ended_at_ms = Some(now_ms);
        }
        self.step = None;
    }

    /// Begins the next iteration with its planning step.
    pub fn start_iteration(&mut self, now_ms: u64) -> Vec<LoopEvent> {
        self.iteration += 1;
        self.history.push(IterationRecord {
            number: self.iteration,
            task: None,
            reason: None,
            persona: None,
            research: None,
            outcome: Outcome::InProgress,
            runs: Vec::new(),
            cost_usd: 0.0,
            started_at_ms: now_ms,
            ended_at_ms: None,
        });
        self.step = Some(Step {
            iteration: self.iteration,
            phase: Phase::Plan,
            run_id: None,
        });
        vec![self.event(now_ms, None, LoopEventKind::IterationStarted)]
    }

    /// The run of the step in progress has started (saved so a resume can find it).
    pub fn run_started(&mut self, run_id: RunId) {
        if let Some(step) = &mut self.step {
            step.run_id = Some(run_id);
        }
    }

    /// The planner answered (or the initial prompt stands in for it): record the run, then
    /// stop `completed` on done, else pick the persona and the next phase.
    pub fn planned(
        &mut self,
        config: &AutoConfig,
        answer: &PlannerAnswer,
        run: Option<RunRef>,
        now_ms: u64,
    ) -> Vec<LoopEvent> {
        let run_id = run.as_ref().and_then(|r| r.run_id.clone());
        let source = if run.is_some() {
            "planner"
        } else {
            "initial_prompt"
        };
        if let Some(run) = run {
            self.record_run(run);
        }
        // The error count is reset by a successful execution only: a loop whose planner
        // answers well but whose every task fails must still reach `too_many_errors`.
        let mut events = vec![self.event(
            now_ms,
            run_id,
            LoopEventKind::Planned {
                task: answer.next_task.clone(),
                done: answer.done,
                reason: answer.reason.clone(),
                source: source.into(),
            },
        )];
        if let Some(record) = self.current() {
            record.reason = Some(answer.reason.clone());
        }
        if answer.done {
            self.end_iteration(
                Outcome::Done {
                    reason: answer.reason.clone(),
                },
                now_ms,
            );
            events.extend(self.stop(StopReason::Completed, now_ms));
            return events;
        }
        let persona = recommend_persona(&config.persona, &answer.next_task).to_owned();
        if persona != self.persona {
            let from = std::mem::replace(&mut self.persona, persona.clone());
            self.persona_switches.push(PersonaSwitch {
                iteration: self.iteration,
                from: from.clone(),
                to: persona.clone(),
            });
            events.push(self.event(
                now_ms,
                None,
                LoopEventKind::PersonaSwitched { from, to: persona },
            ));
        }
        let current_persona = self.persona.clone();
        if let Some(record) = self.current() {
            record.task = Some(answer.next_task.clone());
            record.persona = Some(current_persona);
        }
        let query = research_query(config, answer);
        let phase = match query {
            Some(query) => Phase::Research { query },
            None => Phase::Execute { research: None },
        };
        self.step = Some(Step {
            iteration: self.iteration,
            phase,
            run_id: None,
        });
        events
    }

    /// The planner run failed or its answer was refused: an error, the iteration ends.
    pub fn planner_failed(
        &mut self,
        reason: String,
        run: Option<RunRef>,
        now_ms: u64,
    ) -> Vec<LoopEvent> {
        let run_id = run.as_ref().and_then(|r| r.run_id.clone());
        if let Some(run) = run {
            self.record_run(run);
        }
        self.consecutive_errors += 1;
        self.total_errors += 1;
        let event = self.event(
            now_ms,
            run_id,
            LoopEventKind::Error {
                step: "plan".into(),
                reason: reason.clone(),
            },
        );
        self.end_iteration(Outcome::PlannerError { reason }, now_ms);
        vec![event]
    }

    /// A research answer from the cache, if fresh: counted as a hit and the step moves on.
    pub fn research_from_cache(
        &mut self,
        config: &AutoConfig,
        query: &str,
        now_ms: u64,
    ) -> Option<Vec<LoopEvent>> {
        let answer = self
            .research_cache
            .lookup(query, now_ms, config.research.cache_minutes)?
            .to_owned();
        self.research_hits += 1;
        self.note_research(query, true, Some(answer));
        Some(vec![self.event(
            now_ms,
            None,
            LoopEventKind::ResearchHit {
                query: query.to_owned(),
            },
        )])
    }

    /// A researcher run ended: a miss; its answer (when it succeeded) is cached.
    pub fn researched(
        &mut self,
        config: &AutoConfig,
        query: &str,
        answer: Option<String>,
        run: RunRef,
        now_ms: u64,
    ) -> Vec<LoopEvent> {
        let run_id = run.run_id.clone();
        self.record_run(run);
        self.research_misses += 1;
        self.research_cache
            .purge_expired(now_ms, config.research.cache_minutes);
        if let Some(answer) = &answer {
            self.research_cache.insert(query, answer.clone(), now_ms);
        }
        self.note_research(query, false, answer);
        vec![self.event(
            now_ms,
            run_id,
            LoopEventKind::ResearchMiss {
                query: query.to_owned(),
            },
        )]
    }

    fn note_research(&mut self, query: &str, cache_hit: bool, answer: Option<String>) {
        if let Some(record) = self.current() {
            record.research = Some(ResearchUse {
                query: normalise_query(query),
                cache_hit,
            });
        }
        self.step = Some(Step {
            iteration: self.iteration,
            phase: Phase::Execute { research: answer },
            run_id: None,
        });
    }

    /// The executor run ended: success resets the error count, failure adds to it.
    pub fn executed(
        &mut self,
        run: RunRef,
        failure: Option<String>,
        now_ms: u64,
    ) -> Vec<LoopEvent> {
        let run_id = run.run_id.clone();
        let executed = LoopEventKind::Executed {
            status: run.status.clone(),
            cost_usd: run.cost_usd,
            duration_ms: run.duration_ms,
        };
        self.record_run(run);
        let mut events = vec![self.event(now_ms, run_id.clone(), executed)];
        match failure {
            None => {
                self.consecutive_errors = 0;
                self.end_iteration(Outcome::Succeeded, now_ms);
            }
            Some(reason) => {
                self.consecutive_errors += 1;
                self.total_errors += 1;
                events.push(self.event(
                    now_ms,
                    run_id,
                    LoopEventKind::Error {
                        step: "execute".into(),
                        reason: reason.clone(),
                    },
                ));
                self.end_iteration(Outcome::Failed { reason }, now_ms);
            }
        }
        events
    }

    /// A run cut short by a stop (emergency stop during execution): its cost counts, the
    /// step stays in progress so a resume runs it again.
    pub fn interrupted(&mut self, run: RunRef) {
        self.record_run(run);
        if let Some(step) = &mut self.step {
            step.run_id = None;
        }
    }

    /// Records the stop. The step in progress, if any, is kept (a resume re-runs it).
    pub fn stop(&mut self, reason: StopReason, now_ms: u64) -> Vec<LoopEvent> {
        let during = self
            .step
            .as_ref()
            .map(|s| format!("iteration {}, {}", s.iteration, s.phase.name()));
        if self.step.is_some() {
            if let Some(record) = self.current() {
                record.outcome = Outcome::Stopped { reason };
                record.ended_at_ms = Some(now_ms);
            }
        }
        self.stopped = Some(Stopped {
            reason,
            at_ms: now_ms,
            during,
        });
        self.ended_at_ms = Some(now_ms);
        vec![self.event(now_ms, None, LoopEventKind::Stopped { reason })]
    }

    /// Continuing after a crash or an emergency stop: a stop that a resume can lift
    /// (emergency stop) is lifted; the step in progress will be run again.
    pub fn resume(&mut self, now_ms: u64) -> Vec<LoopEvent> {
        if self
            .stopped
            .as_ref()
            .is_some_and(|s| s.reason == StopReason::EmergencyStop)
        {
            self.stopped = None;
            self.ended_at_ms = None;
            if self.step.is_some() {
                if let Some(record) = self.current() {
                    record.outcome = Outcome::InProgress;
                    record.ended_at_ms = None;
                }
            }
        }
        let step = self.step.as_ref().map_or_else(
            || "between iterations".to_owned(),
            |s| format!("iteration {}, {}", s.iteration, s.phase.name()),
        );
        vec![self.event(now_ms, None, LoopEventKind::Resumed { step })]
    }

    /// The task of the iteration in progress.
    pub fn current_task(&self) -> Option<&str> {
        self.history
            .iter()
            .rev()
            .find(|r| r.number == self.iteration)
            .and_then(|r| r.task.as_deref())
    }

    /// Recent error reasons, newest last (for the planning prompt).
    pub fn recent_errors(&self, limit: usize) -> Vec<String> {
        let mut errors: Vec<String> = self
            .history
            .iter()
            .rev()
            .filter_map(|r| match &r.outcome {
                Outcome::Failed { reason } | Outcome::PlannerError { reason } => {
                    Some(format!("iteration {}: {reason}", r.number))
                }
                _ => None,
            })
            .take(limit)
            .collect();
        errors.reverse();
        errors
    }
}

/// The research query for a planned task: the planner's own, else the task itself when it
/// mentions a research keyword; none when research is off.
fn research_query(config: &AutoConfig, answer: &PlannerAnswer) -> Option<String> {
    if !config.research.enabled {
        return None;
    }
    if let Some(q) = &answer.research {
        return Some(q.clone());
    }
    let task = answer.next_task.to_lowercase();
    let mentions = config.research.keywords.iter().any(|k| {
        let k = k.to_lowercase();
        task.split(|c: char| !c.is_alphanumeric())
            .any(|w| !k.is_empty() && w == k)
    });
    mentions.then(|| answer.next_task.clone())
}
