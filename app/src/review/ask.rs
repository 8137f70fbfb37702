//! Asking the agent: one read-only run per part of the change, the answer read; an
//! unreadable answer gets one follow-up in the same session. A rate or usage limit skips
//! the rest, the cost ceiling stops it, anything else failing ends it with an error.

use forge_domain::review::prompt::{chunks, follow_up_prompt, review_prompt};
use forge_domain::review::{
    DiffFile, RATE_LIMITED_RETRIES_BEFORE_SKIP, Rejected, ReviewFinding, ReviewOutcome,
    ReviewStatus, parse_answer,
};
use forge_domain::task::{CycleKind, StopReason};
use forge_domain::{ExecutionStatus, ForgeError, PermissionMode, Redactor, Usage};

use super::ReviewRequest;
use crate::agent::CodeAgent;
use crate::handle::RunCanceller;
use crate::task::agent_run::{AgentRun, Enforce, run_agent};

/// What the agent runs gave.
#[derive(Debug, Default)]
pub struct Asked {
    status: Option<ReviewStatus>,
    findings: Vec<ReviewFinding>,
    rejected: Vec<Rejected>,
    notices: Vec<String>,
    raw_answer: Option<String>,
    cost_usd: f64,
    usage: Usage,
    runs: Vec<String>,
    chunks: usize,
}

impl Asked {
    /// Moves everything but the findings into `outcome`; returns the findings.
    pub fn apply(self, outcome: &mut ReviewOutcome) -> Vec<ReviewFinding> {
        outcome.status = self.status.unwrap_or(ReviewStatus::Completed);
        outcome.rejected = self.rejected;
        outcome.notices.extend(self.notices);
        outcome.raw_answer = self.raw_answer;
        outcome.cost_usd = self.cost_usd;
        outcome.usage = self.usage;
        outcome.runs = self.runs;
        outcome.chunks = self.chunks;
        self.findings
    }

    /// The agent runs, follow-ups included.
    pub fn run_ids(&self) -> Vec<forge_domain::RunId> {
        self.runs
            .iter()
            .filter_map(|id| forge_domain::RunId::new(id.as_str()).ok())
            .collect()
    }

    /// A worse status wins: skipped over error over partial.
    fn mark(&mut self, status: ReviewStatus, notice: String) {
        let rank = |s: Option<ReviewStatus>| match s {
            None | Some(ReviewStatus::Completed) => 0,
            Some(ReviewStatus::Partial) => 1,
            Some(ReviewStatus::Error) => 2,
            Some(ReviewStatus::Skipped) => 3,
        };
        if rank(Some(status)) > rank(self.status) {
            self.status = Some(status);
        }
        self.notices.push(notice);
    }

    fn count(&mut self, run: &AgentRun) {
        self.cost_usd += run.cycle.cost_usd;
        self.usage = self.usage.saturating_add(&run.cycle.usage);
        if let Some(id) = &run.cycle.run_id {
            self.runs.push(id.as_str().to_owned());
        }
    }
}

/// How a run ended, for the review.
enum Ended {
    Answer(String),
    Limit(String),
    Budget,
    Stopped(String),
    Failed(String),
}

pub async fn ask(
    agent: &CodeAgent,
    redactor: &Redactor,
    req: &ReviewRequest,
    files: &[DiffFile],
    cancel: &RunCanceller,
) -> Result<Asked, ForgeError> {
    let parts = chunks(files, req.prompt_budget_chars);
    let mut asked = Asked {
        chunks: parts.len(),
        ..Asked::default()
    };
    if parts.len() > 1 {
        asked.notices.push(format!(
            "the diff is larger than the prompt budget ({} characters): reviewed in {} parts",
            req.prompt_budget_chars,
            parts.len()
        ));
    }
    let provider = agent.provider(&req.template.provider)?;
    let settings = provider.settings();
    let model = req
        .template
        .model
        .clone()
        .or_else(|| settings.model.clone());
    for (i, part) in parts.iter().enumerate() {
        let left = req.max_cost_usd.map(|max| max - asked.cost_usd);
        if left.is_some_and(|l| l <= 0.0) {
            asked.mark(
                ReviewStatus::Partial,
                format!(
                    "--max-cost-usd reached: parts {} to {} were not reviewed by the agent",
                    i + 1,
                    parts.len()
                ),
            );
            break;
        }
        let enforce = Enforce {
            budget_usd: left,
            max_turns: None,
            pricing: settings.pricing.clone(),
            model: model.clone(),
            give_up_after_rate_limited_retries: Some(RATE_LIMITED_RETRIES_BEFORE_SKIP),
        };
        let mut part_for_prompt = part.clone();
        part_for_prompt.diff = redactor.redact(&part.diff).into_owned();
        let prompt = review_prompt(&req.base, &req.head, &part_for_prompt, i + 1, parts.len());
        let mut request = req.template.clone();
        request.prompt = prompt;
        request.workdir.clone_from(&req.tree);
        request.permission_mode = Some(PermissionMode::Plan);
        request.resume_session_id = None;
        let run = run_agent(
            agent,
            request.clone(),
            CycleKind::Main,
            false,
            &enforce,
            cancel,
            |_| {},
        )
        .await;
        asked.count(&run);
        let answer = match ended(&run)? {
            Ended::Answer(text) => text,
            other => {
                stop(&mut asked, other, req.max_cost_usd);
                break;
            }
        };
        let text = match parse_answer(&answer) {
            Ok(parsed) => {
                take(&mut asked, parsed);
                continue;
            }
            Err(problem) => {
                // One follow-up in the same session.
                let Some(session) = run.result.metadata.session_id.clone() else {
                    asked.mark(
                        ReviewStatus::Partial,
                        format!("the agent's answer could not be read ({problem}), and its CLI reported no session to ask again in"),
                    );
                    asked.raw_answer = Some(answer);
                    continue;
                };
                let mut again = request;
                again.prompt = follow_up_prompt(&problem.to_string());
                again.resume_session_id = Some(session);
                let enforce = Enforce {
                    budget_usd: req.max_cost_usd.map(|max| max - asked.cost_usd),
                    ..enforce
                };
                let run = run_agent(
                    agent,
                    again,
                    CycleKind::Main,
                    false,
                    &enforce,
                    cancel,
                    |_| {},
                )
                .await;
                asked.count(&run);
                match ended(&run)? {
                    Ended::Answer(text) => text,
                    other => {
                        stop(&mut asked, other, req.max_cost_usd);
                        break;
                    }
                }
            }
        };
        match parse_answer(&text) {
            Ok(parsed) => take(&mut asked, parsed),
            Err(problem) => {
                asked.mark(
                    ReviewStatus::Partial,
                    format!(
                        "the agent's answer could not be read, also after a follow-up: {problem}"
                    ),
                );
                asked.raw_answer = Some(text);
            }
        }
    }
    Ok(asked)
}

fn take(asked: &mut Asked, parsed: forge_domain::review::ParsedAnswer) {
    asked.findings.extend(parsed.findings);
    asked.rejected.extend(parsed.rejected);
}

fn stop(asked: &mut Asked, ended: Ended, max_cost: Option<f64>) {
    match ended {
        Ended::Answer(_) => {}
        Ended::Limit(message) => asked.mark(
            ReviewStatus::Skipped,
            format!("skipped: the provider's rate or usage limit was hit ({message}); the rule findings are complete"),
        ),
        Ended::Budget => asked.mark(
            ReviewStatus::Partial,
            format!(
                "the agent was stopped at --max-cost-usd {:.4} (spent {:.4})",
                max_cost.unwrap_or(0.0),
                asked.cost_usd
            ),
        ),
        Ended::Stopped(why) => asked.mark(ReviewStatus::Partial, format!("the agent was stopped: {why}")),
        Ended::Failed(why) => asked.mark(ReviewStatus::Error, format!("the agent's run failed: {why}")),
    }
}

/// What a run's end means for the review. A missing CLI is an error of the review itself.
fn ended(run: &AgentRun) -> Result<Ended, ForgeError> {
    let result = &run.result;
    if let Some(e) = result.errors.iter().find(|e| {
        matches!(
            e,
            ForgeError::ExecutableNotFound { .. } | ForgeError::ProviderNotSupported { .. }
        )
    }) {
        return Err(e.clone());
    }
    if let Some(message) = &run.rate_limited {
        return Ok(Ended::Limit(format!(
            "its CLI kept retrying a rate-limited model call; forge stopped it: {message}"
        )));
    }
    Ok(match run.stop {
        Some(StopReason::RunBudget | StopReason::CostCeiling) => Ended::Budget,
        Some(StopReason::Cancelled) => Ended::Stopped("cancelled".to_owned()),
        Some(StopReason::Timeout) => Ended::Stopped("timed out".to_owned()),
        Some(StopReason::MaxTurns) => Ended::Stopped("its turn limit was reached".to_owned()),
        _ => {
            if let Some(message) = forge_domain::rate_limit::limit_hit(result) {
                Ended::Limit(message)
            } else if result.status == ExecutionStatus::Success {
                Ended::Answer(result.content.clone())
            } else {
                let errors: Vec<String> = result.errors.iter().map(ToString::to_string).collect();
                Ended::Failed(if errors.is_empty() {
                    format!("status {:?} without an error", result.status)
                } else {
                    errors.join("; ")
                })
            }
        }
    })
}
