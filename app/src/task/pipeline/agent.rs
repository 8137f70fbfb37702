//! One agent run of the task (main or correction): the run request built from the task's
//! template, the task's deadline bounding it, limits the CLI lacks enforced by forge.

use forge_domain::SessionId;
use forge_domain::task::CycleKind;

use super::super::agent_run::{AgentRun, Enforce, run_agent};
use super::super::request::Stage;
use super::task::{Reporter, Task};

impl Task<'_> {
    /// Runs the agent once with `prompt`, resuming `session` where the CLI can; a fresh
    /// correction session is handed the main prompt first.
    pub(super) async fn agent_run(
        &self,
        kind: CycleKind,
        prompt: String,
        session: Option<SessionId>,
        model: Option<&str>,
        report: &mut Reporter,
    ) -> AgentRun {
        report.stage(Stage::Agent, self.cost(), kind_name(kind));
        let caps = self.provider.capabilities();
        let mut request = self.req.run_template.clone();
        request.provider = self.req.provider.clone();
        request.workdir = self.worktree.clone();
        request.prompt = prompt;
        if let Some(model) = model {
            request.model = Some(model.to_owned());
        }
        let can_resume = caps.resume && session.is_some();
        request.resume_session_id = if can_resume { session } else { None };
        if kind != CycleKind::Main && !can_resume {
            // A fresh session knows nothing of the task: hand it the task first.
            if let Some(main) = &self.main_prompt {
                request.prompt = format!("{main}\n\n{}", request.prompt);
            }
        }
        // The task's deadline bounds each run: never longer than what is left.
        let left = self
            .req
            .spec
            .limits
            .timeout_ms
            .saturating_sub(self.elapsed())
            .max(1);
        request.timeout_ms = Some(request.timeout_ms.map_or(left, |t| t.min(left)));
        let enforce = Enforce {
            budget_usd: request.max_budget_usd.filter(|_| !caps.max_budget),
            max_turns: request.max_turns.filter(|_| !caps.max_turns),
            pricing: self.provider.settings().pricing.clone(),
            model: request
                .model
                .clone()
                .or_else(|| self.provider.settings().model.clone()),
            give_up_after_rate_limited_retries: None,
        };
        let fresh = kind != CycleKind::Main && !can_resume;
        run_agent(
            &self.pipeline.agent,
            request,
            kind,
            fresh,
            &enforce,
            &self.cancel,
            |_| {},
        )
        .await
    }
}

fn kind_name(kind: CycleKind) -> &'static str {
    match kind {
        CycleKind::Main => "main",
        CycleKind::ValidationFix => "validation_fix",
        CycleKind::ReviewFix => "review_fix",
    }
}
