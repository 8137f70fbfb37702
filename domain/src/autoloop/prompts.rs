//! The prompts the loop sends: to the planner, the researcher and the executor.

use std::fmt::Write;

use super::config::AutoConfig;
use super::state::LoopState;

/// How many past iterations and errors the planner is shown.
const HISTORY_SHOWN: usize = 10;
const ERRORS_SHOWN: usize = 3;

/// The planning prompt: the goal, the history of tasks and outcomes, the last errors, and
/// the answer's shape with its keys named literally.
pub fn planning_prompt(config: &AutoConfig, state: &LoopState) -> String {
    planning_prompt_with_map(config, state, None)
}

/// The planning prompt with the repository map ranked by the goal (`Ok`), or the reason
/// it could not be made (`Err`), after the goal: the planner then names files that exist.
pub fn planning_prompt_with_map(
    config: &AutoConfig,
    state: &LoopState,
    map: Option<Result<&str, &str>>,
) -> String {
    let mut p = String::new();
    let _ = writeln!(p, "You are the planner of an autonomous coding loop.");
    let _ = writeln!(p, "Goal: {}", config.task.goal);
    match map {
        Some(Ok(map)) if !map.trim().is_empty() => {
            let _ = writeln!(
                p,
                "Repository map (the files most relevant to the goal first, with their \
                 definitions):\n```text\n{}\n```",
                map.trim_end()
            );
        }
        Some(Err(reason)) => {
            let _ = writeln!(p, "Repository map: unavailable ({reason}).");
        }
        _ => {}
    }
    let _ = writeln!(
        p,
        "Iteration: {} of at most {}",
        state.iteration, config.safety.max_iterations
    );
    let done: Vec<_> = state
        .history
        .iter()
        .filter(|r| r.number < state.iteration)
        .collect();
    if done.is_empty() {
        let _ = writeln!(p, "History: none yet.");
    } else {
        let _ = writeln!(p, "History (oldest first):");
        for r in done.iter().skip(done.len().saturating_sub(HISTORY_SHOWN)) {
            let _ = writeln!(
                p,
                "- iteration {}: {} -> {}",
                r.number,
                r.task.as_deref().unwrap_or("(no task)"),
                r.outcome.label()
            );
        }
    }
    let errors = state.recent_errors(ERRORS_SHOWN);
    if !errors.is_empty() {
        let _ = writeln!(p, "Last errors:");
        for e in errors {
            let _ = writeln!(p, "- {e}");
        }
    }
    let _ = writeln!(
        p,
        "Decide the next task. Answer with one JSON object and nothing else, with the keys \
         next_task (string), done (boolean) and reason (string), for example:"
    );
    let _ = writeln!(
        p,
        r#"{{"next_task": "Add a unit test for the parser", "done": false, "reason": "the parser is untested"}}"#
    );
    if config.research.enabled {
        let _ = writeln!(
            p,
            "Add the key research (string) with a question when the task needs looking up first."
        );
    }
    let _ = write!(p, "When the goal is reached, answer with done set to true.");
    p
}

/// The researcher's prompt for `query`.
pub fn research_prompt(config: &AutoConfig, query: &str) -> String {
    format!(
        "You are a researcher helping an autonomous coding loop whose goal is: {}\n\
         Answer this question briefly and factually, without changing any file:\n{query}",
        config.task.goal
    )
}

/// The executor's prompt: the task, the persona's instructions and any research notes.
pub fn executor_prompt(
    config: &AutoConfig,
    task: &str,
    persona: &str,
    research: Option<&str>,
) -> String {
    let mut p = String::new();
    if let Some(spec) = config.persona.personas.iter().find(|s| s.name == persona) {
        if !spec.instructions.trim().is_empty() {
            let _ = writeln!(p, "{}\n", spec.instructions.trim());
        }
    }
    let _ = writeln!(p, "Overall goal: {}", config.task.goal);
    if let Some(notes) = research {
        let _ = writeln!(p, "Research notes:\n{notes}");
    }
    let _ = write!(p, "Task: {task}");
    p
}
