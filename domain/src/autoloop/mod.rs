//! The autonomous loop's rules: a planner proposes the next task, an executor carries it out,
//! personas switch by task, research answers are cached, and hard stops end the loop.
//!
//! Everything here is pure. The use case (`forge_app::autoloop`) hands in the clock's reading,
//! whether the emergency-stop file exists and each run's result; these modules say what comes
//! next, how the state changes, and what the report says.

pub mod config;
pub mod decide;
pub mod event;
pub mod persona;
pub mod planner;
pub mod prompts;
pub mod report;
pub mod research;
pub mod state;

pub use config::{
    AutoConfig, AutoConfigError, ExecutorKind, PersonaConfig, PersonaSpec, ProviderSection,
    RawAutoConfig, ResearchConfig, SafetyConfig, TaskConfig,
};
pub use decide::{Next, StopReason, decide};
pub use event::{LoopEvent, LoopEventKind};
pub use persona::recommend_persona;
pub use planner::{PlannerAnswer, PlannerAnswerError, parse_planner_answer};
pub use prompts::{executor_prompt, planning_prompt, planning_prompt_with_map, research_prompt};
pub use report::{LoopReport, render_markdown};
pub use research::{ResearchCache, normalise_query};
pub use state::{IterationRecord, LoopState, Outcome, Phase, RunRef, RunRole, Step, Stopped};

#[cfg(test)]
mod tests;
