//! The final report (`report.json`, `report.md`): built from the state, rendered purely.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

use super::state::{LoopState, Outcome};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoopReport {
    pub goal: String,
    pub provider: String,
    /// `None` while the loop has not stopped.
    pub stop_reason: Option<String>,
    pub stopped_during: Option<String>,
    pub iterations: Vec<IterationLine>,
    pub totals: Totals,
    pub research: ResearchTotals,
    pub persona_switches: Vec<SwitchLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationLine {
    pub number: u32,
    pub task: Option<String>,
    pub persona: Option<String>,
    pub outcome: String,
    /// The failure, refusal or done reason, when there is one.
    pub detail: Option<String>,
    pub runs: usize,
    pub cost_usd: f64,
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub iterations: u32,
    pub runs: usize,
    pub errors: u32,
    pub cost_usd: f64,
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResearchTotals {
    pub hits: u32,
    pub misses: u32,
    /// hits / (hits + misses); `None` when nothing was looked up.
    pub hit_rate: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchLine {
    pub iteration: u32,
    pub from: String,
    pub to: String,
}

impl LoopReport {
    pub fn from_state(state: &LoopState, provider: &str) -> Self {
        let iterations = state
            .history
            .iter()
            .map(|r| IterationLine {
                number: r.number,
                task: r.task.clone(),
                persona: r.persona.clone(),
                outcome: r.outcome.label().to_owned(),
                detail: match &r.outcome {
                    Outcome::Failed { reason }
                    | Outcome::PlannerError { reason }
                    | Outcome::Done { reason } => Some(reason.clone()),
                    Outcome::Stopped { reason } => Some(reason.to_string()),
                    Outcome::InProgress | Outcome::Succeeded => None,
                },
                runs: r.runs.len(),
                cost_usd: round_usd(r.cost_usd),
                duration_ms: r.ended_at_ms.map(|e| e.saturating_sub(r.started_at_ms)),
            })
            .collect();
        let lookups = state.research_hits + state.research_misses;
        LoopReport {
            goal: state.goal.clone(),
            provider: provider.to_owned(),
            stop_reason: state.stopped.as_ref().map(|s| s.reason.to_string()),
            stopped_during: state.stopped.as_ref().and_then(|s| s.during.clone()),
            iterations,
            totals: Totals {
                iterations: state.iteration,
                runs: state.history.iter().map(|r| r.runs.len()).sum(),
                errors: state.total_errors,
                cost_usd: round_usd(state.total_cost_usd),
                duration_ms: state
                    .ended_at_ms
                    .map(|e| e.saturating_sub(state.started_at_ms)),
            },
            research: ResearchTotals {
                hits: state.research_hits,
                misses: state.research_misses,
                hit_rate: (lookups > 0)
                    .then(|| f64::from(state.research_hits) / f64::from(lookups)),
            },
            persona_switches: state
                .persona_switches
                .iter()
                .map(|s| SwitchLine {
                    iteration: s.iteration,
                    from: s.from.clone(),
                    to: s.to.clone(),
                })
                .collect(),
        }
    }
}

/// Cost sums of floats drift in the last digits; a report shows micro-dollars.
fn round_usd(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

/// `report.md`.
pub fn render_markdown(report: &LoopReport) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Autonomous loop report\n");
    let _ = writeln!(md, "- Goal: {}", report.goal);
    let _ = writeln!(md, "- Provider: {}", report.provider);
    let _ = writeln!(
        md,
        "- Stop reason: {}{}",
        report.stop_reason.as_deref().unwrap_or("(still running)"),
        report
            .stopped_during
            .as_deref()
            .map(|d| format!(" (during {d})"))
            .unwrap_or_default()
    );
    let t = &report.totals;
    let _ = writeln!(
        md,
        "- Totals: {} iterations, {} runs, {} errors, ${:.4}, {}",
        t.iterations,
        t.runs,
        t.errors,
        t.cost_usd,
        duration(t.duration_ms)
    );
    let r = &report.research;
    let _ = writeln!(
        md,
        "- Research cache: {} hits, {} misses, hit rate {}",
        r.hits,
        r.misses,
        r.hit_rate
            .map_or_else(|| "n/a".to_owned(), |h| format!("{:.0}%", h * 100.0))
    );
    let _ = writeln!(md, "\n## Iterations\n");
    let _ = writeln!(md, "| # | task | persona | outcome | cost | duration |");
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    for i in &report.iterations {
        let outcome = match &i.detail {
            Some(d) => format!("{}: {}", i.outcome, d),
            None => i.outcome.clone(),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | ${:.4} | {} |",
            i.number,
            cell(i.task.as_deref().unwrap_or("-")),
            cell(i.persona.as_deref().unwrap_or("-")),
            cell(&outcome),
            i.cost_usd,
            duration(i.duration_ms)
        );
    }
    let _ = writeln!(md, "\n## Persona switches\n");
    if report.persona_switches.is_empty() {
        let _ = writeln!(md, "None.");
    }
    for s in &report.persona_switches {
        let _ = writeln!(md, "- iteration {}: {} → {}", s.iteration, s.from, s.to);
    }
    md
}

/// A table cell: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn duration(ms: Option<u64>) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "milliseconds of a loop are far below 2^52"
    )]
    ms.map_or_else(
        || "-".to_owned(),
        |ms| format!("{:.1}s", ms as f64 / 1000.0),
    )
}
